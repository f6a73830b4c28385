"""A class writes code (#43): 60 students run 60 different programs within one second.

    python bench/class_challenge.py [--students 60] [--spread 1.0] [--no-kill] [--profile FILE]

Runs `make serve`'s deploy/serve.py on free loopback ports (two replicas, HAProxy,
redis-server) and drives one teacher and ``--students`` students over Streamlit's own
websocket protocol, with harness's class client and class (class_room.py: ``start``, ``stop``,
``Member``, ``Class.kill``). The class follows the teacher to the Your code page; the
teacher picks the hand-written loop (their code now) and asks the ``.detach()`` challenge;
every student's editor unlocks on the teacher's code. Each student then writes a program
of their own (harness/class_programs.py: the detach in one of four places, two passing
and two failing, and a seed of their own, so no two texts are the same and no cache
answers one for another) and all press Run within ``--spread`` seconds.

Measured:

- **refused**: runs the sandbox refused (its "busy" / "still waiting" / "every place is
  taken" answers, as the student's page shows them). Target: 0.
- **press -> own result**: seconds from the press (the editor's ``run`` trigger sent) to
  the end of the student's first finished run that shows that run's result: the editor
  answering that press (its ``ran``), the check's verdict over the editor ("Your last run
  passes the check." / "... does not pass yet.") and the graph view drawn. p50, p95, max.
  Every verdict must be the one the program was written to get.
- **gallery**: seconds from the last press until the teacher's gallery (its own 1 s
  timer, as the browser's) says "**N** ran", with as many passing as the students saw pass.
  Target <= 5 s.
- **a replica killed**: SIGKILL of the teacher's replica; its tabs reconnect as browsers
  do and the teacher takes the class back (``Class.kill``). Then Redis must
  hold every student's run, their code and verdict as sent, and the teacher's gallery
  must say "**N** ran" again, with as many passing.

``--profile FILE``: py-spy's raw samples of replica r1 from the first press to the gallery's
count (bench/load.py's ``profile_start``), and where they were.

Exit status 1 when a target is missed. The client shares the box's two cores with the
servers: every figure is printed with the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness and stockdemo

import redis  # noqa: E402
from load import profile_start, profile_stop  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402

from harness import (
    measures,  # noqa: E402
    servers,  # noqa: E402
    )
from harness.class_member import FINISHED, Member  # noqa: E402
from harness.class_programs import detach_programs  # noqa: E402
from harness.class_room import Class, start, stop  # noqa: E402

TARGET_REFUSED = 0
TARGET_GALLERY_S = 5.0
LOOP_TITLE = "hand-written loop"  # the teacher's ready-made edit (EDITS["loop"].title)
DETACH_TITLE = ".detach()"  # the challenge asked (CHALLENGES["detach"].title)
EDIT_PICKER = "code_edit"  # keys.CODE_EDIT
ASK_CHOICE = "class_ask_choice"  # classmode.keys.ASK_CHOICE
PASSES = "Your last run passes the check."
FAILS = "Your last run does not pass yet."
# The sandbox's refusals (stockdemo/sandbox/pool.py, CodePool._refusal and its time-out).
REFUSALS = ("Every place in the sandbox is taken", "Your previous runs are still waiting",
            "The sandbox is busy", "The sandbox did not answer in time")


def sandbox_runs_cpu_s(target: servers.Target) -> float:
    """CPU seconds of the sandbox's runs that ended: the fork server's reaped children (its
    children share its command line, and reap none; a training worker would count once it
    ended, and the class trains nothing)."""
    total = 0.0
    for pid in servers.descendants(target.proc.pid):
        try:
            if b"stockdemo.forkserver.process" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
    return total


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


class Coder(Member):
    """A tab that also reads Your code: the editor (its Run, what it shows), the graph view,
    and the pills (the teacher's picker and goal)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.editor: tuple[str, str] | None = None  # the editor's events id, its fragment
        self.editor_seen: list[tuple[float, dict]] = []  # (when, what the editor was sent)
        self.graph_at: list[float] = []  # when a graph view was drawn
        self.options: dict[str, list[str]] = {}  # pills' key -> their labels
        self.presses = 0

    def _see_view(self, view, fragment_id: str) -> None:
        name = view.component_name
        if name.endswith("stockdemo_code_editor"):
            from streamlit.components.v2.bidi_component.main import _make_trigger_id

            data = json.loads(view.json)
            data = json.loads(data) if isinstance(data, str) else data
            self.editor = (_make_trigger_id(view.id, "events"), fragment_id)
            self.editor_seen.append((time.perf_counter(), data))
            return
        if name.endswith("stockdemo_graph_view"):
            self.graph_at.append(time.perf_counter())
        super()._see_view(view, fragment_id)

    def _see_element(self, el, fragment_id: str = "") -> None:
        if el.WhichOneof("type") == "button_group":
            key = el.button_group.id.rsplit("-", 1)[-1]
            self.key_to_id[key] = el.button_group.id
            self.options[key] = [o.content for o in el.button_group.options]
        super()._see_element(el, fragment_id)

    @property
    def editor_now(self) -> dict:
        """What the editor shows now (the last data it was sent)."""
        return self.editor_seen[-1][1] if self.editor_seen else {}

    def pick(self, key: str, label: str) -> WidgetState:
        """A pill clicked: its state, as the browser sends it."""
        if label not in self.options.get(key, ()):
            raise KeyError(f"no pill {label!r} in {key}: {self.options.get(key)}")
        state = WidgetState(id=self.key_to_id[key])
        state.string_array_value.data.append(label)
        return state

    async def choose(self, key: str, label: str, held: bool = True) -> None:
        """Click a pill and wait for the run it causes (which draws what depends on it: a
        button's callback takes its arguments from the run that drew it). ``held=False``: a
        picker whose choice the page takes back, as the edits' (no pill held after)."""
        count = len(self.runs)
        await self.send(states=(self.pick(key, label),))
        await self.until(lambda: any(r.status in FINISHED for r in self.runs[count:]))
        if not held:
            self.widgets.pop(self.key_to_id[key], None)

    async def press_run(self, code: str) -> tuple[float, int]:
        """Run in the editor, with ``code`` typed in -> (when it was sent, the press's number)."""
        self.presses += 1
        events, fragment = self.editor
        self.json_triggers.append(WidgetState(id=events, json_trigger_value=json.dumps(
            [{"event": "run", "value": {"code": code, "n": self.presses}}])))
        return await self.send(fragment), self.presses

    def result(self, sent: float, n: int) -> dict | None:
        """The press's result on screen, once a finished run shows all of it: {"at": seconds
        after ``sent``, "passes", "refused" (the refusal's words, or None), "sandbox_s": its
        run's time in the sandbox as the editor says it}; None until then."""
        answered, status = next(((at, data.get("status", "")) for at, data in self.editor_seen
                                 if at >= sent and data.get("ran", 0) >= n), (None, ""))
        # The verdict's line is a badge in markdown (":green-badge[... Your last run ...]").
        verdict = next(((at, PASSES in t) for at, t in self.log
                        if at >= sent and (PASSES in t or FAILS in t)), None)
        refused = next((t for at, t in self.log if at >= sent and any(w in t for w in REFUSALS)), None)
        graph = next((at for at in self.graph_at if at >= sent), None)
        if answered is None or verdict is None or (graph is None and not refused):
            return None
        ready = max(answered, verdict[0], graph or 0.0)
        done = next((r.at for r in self.runs if r.at >= ready and r.status in FINISHED), None)
        if done is None:
            return None
        ran = re.fullmatch(r"Ran in (\d+) ms\.", status)  # the run in the sandbox, fork to answer
        return {"at": done - sent, "passes": verdict[1], "refused": refused,
                "sandbox_s": int(ran[1]) / 1e3 if ran else None}


def gallery_line(teacher: Member, since: float, count: int) -> tuple[float, int] | None:
    """The first summary line of the teacher's gallery since ``since`` that counts ``count``
    runs -> (when, how many pass); None if none yet."""
    for at, text in teacher.log:
        ran = re.search(r"\*\*(\d+)\*\* ran", text)
        if at >= since and ran and int(ran[1]) == count:
            passing = re.search(r"\*\*(\d+)\*\* pass", text)
            return at, int(passing[1]) if passing else -1
    return None


async def wait_gallery(teacher: Member, since: float, count: int, timeout: float) -> tuple[float, int] | None:
    try:
        await teacher.until(lambda: gallery_line(teacher, since, count) is not None, timeout)
    except TimeoutError:
        return None
    return gallery_line(teacher, since, count)


async def ask_detach(room: Class, out: dict, follow_timeout: float) -> str:
    """The class to Your code, the teacher's loop, the challenge asked -> the code every
    student's editor opened on."""
    teacher = room.teacher
    await room.go("code", {}, follow_timeout, measured=False)
    await teacher.choose(EDIT_PICKER, LOOP_TITLE, held=False)
    start = teacher.editor_now.get("doc", "")
    await teacher.choose(ASK_CHOICE, DETACH_TITLE)
    asked = await teacher.click("class_ask")
    db = redis.Redis.from_url(room.redis_url, decode_responses=True)
    challenge = json.loads(db.hget(f"sd:class:{room.code}:challenges", "1") or "{}")
    if challenge.get("id") != "detach" or challenge.get("start") != start:
        out["errors"].append(f"the challenge asked is not .detach() on the teacher's loop: {challenge}")

    def ready(s: Coder) -> bool:
        return (s.seen("The teacher's challenge 1", asked) and s.editor is not None
                and s.editor_now.get("locked") is None and s.editor_now.get("doc") == start)

    waits = await asyncio.gather(*(s.until(lambda s=s: ready(s), follow_timeout) for s in room.students),
                                 return_exceptions=True)
    late = [i for i, w in enumerate(waits) if isinstance(w, BaseException)]
    if late:
        out["errors"].append(f"editors not unlocked on the teacher's code within {follow_timeout:.0f} s: "
                             f"students {late[:10]} ({len(late)})")
    # The last student's first editor on the teacher's code, unlocked.
    out["unlocked_s"] = max((min(at for at, d in s.editor_seen if at >= asked and d.get("doc") == start
                                 and d.get("locked") is None) - asked
                             for s in room.students if ready(s)), default=float("nan"))
    out["unlocked_load"] = load()
    return start


async def class_runs(room: Class, start_code: str, args, out: dict) -> list:
    """Every student presses Run on a program of their own within ``args.spread`` s."""
    programs = detach_programs(start_code, len(room.students))
    rng = random.Random(43)
    delays = sorted(rng.uniform(0, args.spread) for _ in room.students)
    t0 = time.perf_counter()
    cpu0, runs0 = room.target.cpu_s(), sandbox_runs_cpu_s(room.target)
    spy = profile_start(room.target, args.profile) if args.profile else None

    async def one(s: Coder, source: str, delay: float) -> tuple[float, dict | None]:
        await asyncio.sleep(max(0.0, t0 + delay - time.perf_counter()))
        sent, n = await s.press_run(source)
        try:
            await s.until(lambda: s.result(sent, n) is not None, args.timeout)
        except TimeoutError:
            return sent, None
        return sent, s.result(sent, n)

    got = await asyncio.gather(*(one(s, p.source, d) for s, p, d
                                 in zip(room.students, programs, delays, strict=True)))
    out["press_span_s"] = max(g[0] for g in got) - min(g[0] for g in got)
    out["last_press"] = max(g[0] for g in got)
    out["results"] = [r for _, r in got]
    out["expected_pass"] = sum(p.passes for p in programs)
    out["wrong"] = [i for i, ((_, r), p) in enumerate(zip(got, programs, strict=True))
                    if r is not None and not r["refused"] and r["passes"] != p.passes]
    out["missing"] = [i for i, (_, r) in enumerate(got) if r is None]
    out["results_load"] = load()
    gallery = await wait_gallery(room.teacher, out["last_press"], len(room.students), args.timeout)
    out["gallery_s"] = None if gallery is None else gallery[0] - out["last_press"]
    out["gallery_pass"] = None if gallery is None else gallery[1]
    out["gallery_load"] = load()
    out["burst_cpu_s"] = room.target.cpu_s() - cpu0
    out["runs_cpu_s"] = sandbox_runs_cpu_s(room.target) - runs0
    if spy is not None:
        profile_stop(spy, args.profile, top=25)
    out["burst_wall_s"] = time.perf_counter() - t0
    return programs


def stored_runs(room: Class) -> dict[str, dict]:
    """Seat -> its latest run for challenge 1, as Redis holds it."""
    db = redis.Redis.from_url(room.redis_url, decode_responses=True)
    return {seat: json.loads(text) for seat, text in db.hgetall(f"sd:class:{room.code}:runs:1").items()}


def intact(room: Class, programs: list, seen: list[bool | None]) -> list[str]:
    """What Redis lost or changed of the class's runs: each student's code, and the verdict
    the student saw (``seen``; None: saw none)."""
    stored = stored_runs(room)
    problems = []
    for i, (s, p, passes) in enumerate(zip(room.students, programs, seen, strict=True)):
        run = stored.get(s.seat or "")
        if run is None:
            problems.append(f"student {i}: no run in Redis")
        elif run["code"] != p.source or (passes is not None and run["passes"] != passes):
            problems.append(f"student {i}: Redis has passes={run['passes']}, "
                            f"{'its code' if run['code'] == p.source else 'another code'}")
    return problems


async def drive(args) -> dict:
    room = None
    try:
        room = await start(args, member=Coder)
        out = room.out
        out["t0"] = time.perf_counter()
        start_code = await ask_detach(room, out, args.follow_timeout)
        programs = await class_runs(room, start_code, args, out)
        out["redis_before"] = len(stored_runs(room))
        seen = [None if r is None else r["passes"] for r in out["results"]]
        out["seen_pass"] = sum(p is True for p in seen)
        out["intact_before"] = intact(room, programs, seen)
        if args.kill:
            name = room.teacher.replica
            killed = time.perf_counter()
            await room.kill(name, args.follow_timeout)
            gallery = await wait_gallery(room.teacher, killed, len(room.students), args.timeout)
            out["after_kill"] = {
                "replica": name, "students": out["kills"][-1]["students"],
                "gallery_s": None if gallery is None else gallery[0] - killed,
                "gallery_pass": None if gallery is None else gallery[1],
                "redis": len(stored_runs(room)), "intact": intact(room, programs, seen), "load": load()}
        for m in (room.teacher, *room.students):
            out["errors"].extend(e for e in m.errors if not any(w in e for w in REFUSALS))
        out["loadavg"] = os.getloadavg()
        return out
    finally:
        if room is not None:
            await stop(room)


def report(out: dict, args) -> int:
    n = args.students
    results = out.get("results", [])
    shown = [r["at"] for r in results if r is not None and not r["refused"]]
    refusals = [r["refused"] for r in results if r is not None and r["refused"]]
    refused = len(refusals)
    print(f"\nA class writes code through `make serve` (deploy/serve.py: HAProxy, 2 replicas, redis-server): "
          f"1 teacher, {n} students (per replica: {out.get('spread')}), the .detach() challenge")
    unlocked = out.get("unlocked_s", float("nan"))
    print(f"ask -> every student's editor unlocked on the teacher's code: {unlocked:.2f} s"
          f"  ({out.get('unlocked_load')})")
    print(f"{len(results)} presses of Run, {n} different programs, within {out.get('press_span_s', 0):.2f} s "
          f"({out.get('expected_pass')} written to pass the check)")
    print(f"refused by the sandbox: {refused} (target {TARGET_REFUSED}); no result within "
          f"{args.timeout:.0f} s: {len(out.get('missing', []))}; verdicts other than the program's: "
          f"{len(out.get('wrong', []))}")
    print(f"press -> the student's own finished run showing its result (editor answered, verdict, graph "
          f"drawn), {len(shown)} students: p50 {measures.pct(shown, 50):.2f} s, "
          f"p95 {measures.pct(shown, 95):.2f} s, max {max(shown, default=float('nan')):.2f} s  "
          f"({out.get('results_load')})")
    for words in sorted(set(refusals))[:3]:
        print(f"  refused: {words[:200]}")
    in_sandbox = [r["sandbox_s"] for r in results if r is not None and r.get("sandbox_s") is not None]
    print(f"  of which the run in the sandbox (fork to answer, the editor's \"Ran in\"): "
          f"p50 {measures.pct(in_sandbox, 50):.2f} s, max {max(in_sandbox, default=float('nan')):.2f} s")
    gallery_s = out.get("gallery_s")
    print(f"last press -> the teacher's gallery says \"{n} ran\": "
          + ("never" if gallery_s is None else f"{gallery_s:.2f} s, {out.get('gallery_pass')} pass")
          + f" (target <= {TARGET_GALLERY_S:.0f} s)  ({out.get('gallery_load')})")
    print(f"CPU from the first press to the gallery's count ({out.get('burst_wall_s', 0):.1f} s): servers "
          f"{out.get('burst_cpu_s', 0):.1f} s, the sandbox's runs {out.get('runs_cpu_s', 0):.1f} s; "
          f"runs in Redis: {out.get('redis_before')} of {n}")
    ok = (refused <= TARGET_REFUSED and not out.get("missing") and not out.get("wrong")
          and gallery_s is not None and gallery_s <= TARGET_GALLERY_S
          and out.get("gallery_pass") == out.get("seen_pass")
          and out.get("redis_before") == n and not out.get("intact_before"))
    if args.kill:
        after = out.get("after_kill", {})
        kill = out["kills"][-1] if out.get("kills") else {}
        back = [b for b in kill.get("back_s", []) if b is not None]
        print(f"replica {after.get('replica')} SIGKILLed with the teacher and {after.get('students')} "
              f"students on it: students back on Your code after {max(back, default=float('nan')):.2f} s "
              f"({len(kill.get('back_s', [])) - len(back)} never); runs in Redis {after.get('redis')} "
              f"of {n}, changed or lost {len(after.get('intact', []))}; the teacher's gallery: \"{n} ran\" "
              + ("never" if after.get("gallery_s") is None else
                 f"{after['gallery_s']:.2f} s after the kill, {after.get('gallery_pass')} pass")
              + f"  ({after.get('load')})")
        ok = ok and after.get("redis") == n and not after.get("intact") \
            and after.get("gallery_s") is not None and after.get("gallery_pass") == out.get("seen_pass") \
            and len(back) == len(kill.get("back_s", []))
    print(f"1/5/15-min load average at the end: {out.get('loadavg')} (2 cores, shared)")
    problems = [*out.get("errors", []), *out.get("intact_before", []),
                *out.get("after_kill", {}).get("intact", []),
                *(f"student {i}: no result" for i in out.get("missing", [])),
                *(f"student {i}: a verdict other than its program's" for i in out.get("wrong", []))]
    for problem in problems[:12]:
        print("  error:", problem[:300])
    for line in out.get("log", [])[:20]:
        print("  server log:", line[:200])
    ok = ok and not out.get("errors")
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=60)
    ap.add_argument("--spread", type=float, default=1.0, help="s over which every student presses Run")
    ap.add_argument("--timeout", type=float, default=60.0, help="per run, s")
    ap.add_argument("--follow-timeout", type=float, default=15.0,
                    help="s for every student to follow one action")
    ap.add_argument("--no-kill", dest="kill", action="store_false", help="keep both replicas alive")
    ap.add_argument("--profile", metavar="FILE",
                    help="py-spy's raw samples of the first replica from the first press to the gallery's "
                         "count, to FILE")
    args = ap.parse_args(argv)
    if not 2 <= args.students <= 100 or not 0 <= args.spread <= 10:
        ap.error("--students must be 2..100 and --spread 0..10")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print(measures.reference_line(), flush=True)
    out = asyncio.run(drive(args))
    return report(out, args)


if __name__ == "__main__":
    sys.exit(main())
