"""Load test: real sessions over Streamlit's own websocket, one process or replicas behind HAProxy.

One command per scenario; each prints p50/p95/errors/RSS and the machine's load:

    python bench/load.py burst    [--target serve|single] [--pages all|NAME...] [--sessions 30]
                                  [--open-rate 5] [--t-only] [--profile FILE]
    python bench/load.py train    [--target serve|single] [--sessions 30]
    python bench/load.py soak     [--target serve|single] [--sessions 30] [--minutes 10]
    python bench/load.py failover [--sessions 30]              (always --target serve)
    python bench/load.py drag     [--target serve|single] [--sessions 30] [--moves 3]

Exit status 1 when a target is missed. ``--target serve`` (default) starts
``deploy/serve.py`` (``make serve``: one replica per core, or ``--replicas``,
behind HAProxy, with redis) on free loopback ports; ``single`` starts one
``streamlit run app.py`` alone (as Community Cloud runs it). Nothing else is contacted.

Scenarios:

- **burst**: on each page in turn, N sessions open it, ``--open-rate`` a second as
  a class arrives (make serve's limits count page loads and new sessions an
  address opens: all 300 at once would be a flood), then move a control in
  the same half second, ``--moves`` rounds. A move nudges one of the model's
  sliders (sequence length, hidden size, layers) where the page has them, or on
  the Lab one of the open experiment's sliders (weeks of data, length T), as
  the browser does (a widget inside a fragment reruns only that fragment);
  on the Playground the moves follow the earlier plan (one move in three goes
  to a value every session shares). Pages without those sliders press their
  main button (Home: *Run it*; Lesson: *Reveal*) or rerun. Target: p95 <= 0.5 s,
  zero errors and none refused (a 429 or 503 from a limit, counted apart from
  errors). CPU/move: CPU seconds of all processes (servers, workers, HAProxy)
  during the moves, over the moves made: the figure to size a host by.
  ``--t-only``: on the Playground every move is T (a lecture's "everyone move T
  now"). ``--profile FILE``: py-spy on the first replica during the moves, its
  top frames printed.
- **train**: one session trains alone twice (the second is one run's time:
  the first also waits for a worker to start), then N sessions press
  **Train** in the same second while one more session moves a Playground
  slider every second. Targets: every session sees its place in line or its
  first epoch within 1 s; the last run finishes within (N / cores) x one run's
  time + 2 s; the Playground answers in <= 1 s.
- **soak**: N sessions for ``--minutes``, each opening a random page and
  making 1-3 moves 1-3 s apart, then another page. Memory of every process
  (replicas, training workers, HAProxy, redis) summed every two seconds, as
  PSS: plain RSS would count torch's shared libraries once per process. Targets:
  zero errors, total RSS after warm-up flat (the last fifth within 10 % of the
  first fifth after the first minute) and <= 1.5 GB.
- **failover**: two replicas; N sessions on the Playground, each with its own
  sequence length in its URL, move in bursts; after the second round one
  replica is killed (SIGKILL). A disconnected session reconnects as the
  browser does (the same cookies, so HAProxy sends it to the survivor) and
  reruns its URL; its page must show the sequence length its URL carries.
  Target: errors only in the first 5 s after the kill, none after.

- **drag**: N learners drag T on the Playground's stage at once, ``--moves`` drags
  each (T 5 -> 40, then back, 2 s a drag), as the graph view's browser code does:
  one request in flight, the next value wherever the pointer has got to, the last
  value always sent, then "settled" after 0.3 s (the page's panels catch up).
  Targets: every learner sees >= 4 graphs a second, p95 per update <= 0.5 s, no errors.

How a session talks (mirrored from the 1.67 frontend): GET the page (through
HAProxy it gives the ``SRV`` affinity cookie), its first health check (the
``_streamlit_xsrf`` cookie),
a websocket to ``/_stcore/stream`` with those cookies, then ``rerun_script``
BackMsgs carrying the query string and the widget states; the server answers
with ForwardMsgs up to ``script_finished``. Measured per move: send to
``script_finished``. Errors: exception elements, ``st.error`` alerts, runs that
did not finish successfully, timeouts, disconnects, and tracebacks in the
servers' log.

Every scenario first prints ``bench/reference.py``'s figure: a fixed piece of
the app's own work, timed on this box. Figures from two machines compare after
dividing by it (the same commit gave 1.6x the CPU per move on one box as on
another).

The client runs on the same machine as the servers and takes CPU from them:
figures are an upper bound on what remote learners would see, and noisy on a
shared machine (the 1-minute load average is printed with every figure).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import resource
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness and stockdemo

from websockets.exceptions import ConnectionClosed, InvalidStatus  # noqa: E402

from harness.measures import TARGETS, Tally, guarded, load_line, pct, reference_line
from harness.servers import CORES, Target
from harness.sessions import MAX_SESSIONS, SETTLE_S, Session, nudge, page_names, playground_plan


def start(args) -> Target:
    target = Target(args.target, args.replicas)
    ready = target.wait_ready()
    settled = target.wait_settled()
    print(f"{args.target}: ready after {ready:.1f} s, start-up work done {settled:.1f} s later"
          + (f", replicas {[r['name'] for r in target.state()['replicas']]}" if args.target == "serve"
             else "") + f"; {load_line()}", flush=True)
    return target


def finish(target: Target, problems: list[str]) -> list[str]:
    target.stop()
    log = target.log_problems()
    if log:
        print("servers' log, lines with errors:")
        for line in log[:30]:
            print("   ", line[:200])
    os.unlink(target.log.name)
    for p in problems[:10]:
        print("   ", p[:240])
    return log


# --------------------------------------------------------------------------- scenarios

def language_query(args) -> dict[str, str]:
    """The link's ``?lang=`` for every session of a burst or a drag (issue 51: a move in Chinese
    against English), or nothing: the server's English."""
    return {"lang": args.lang} if args.lang else {}


async def burst_page(target: Target, page: str, args) -> Tally:
    tally = Tally()
    sessions = [Session(target.url, page, args.timeout, language_query(args)) for _ in range(args.sessions)]

    async def first(i: int, s: Session) -> None:
        # A class opens the page as people do, spread over a while, not in one instant.
        await asyncio.sleep(i / args.open_rate if args.open_rate else 0)
        await s.open()
        await s.run()

    await asyncio.gather(*(guarded(tally, f"{page} s{i} open", first(i, s))
                           for i, s in enumerate(sessions)))
    alive = [s for s in sessions if s.page_hash]
    plans = {id(s): playground_plan(i, args.moves, args.seed, args.t_only) for i, s in enumerate(alive)}
    cpu0, own0 = target.cpu_s(), resource.getrusage(resource.RUSAGE_SELF)  # the moves only
    spy = profile_start(target, args.profile) if args.profile else None

    async def move(i: int, s: Session, j: int) -> None:
        rng = random.Random(args.seed * 7919 + i * 31 + j)
        await asyncio.sleep(rng.uniform(0, args.jitter))
        if page == "playground":
            key, value = plans[id(s)][j]
            s.set_value(key, value if value is not None else int(s.value(key)) % 4 + 1)
        else:
            nudge(s, rng)
        out = await s.run()
        tally.add(out, f"{page} s{i} move {j + 1}")
        if args.settle and s.stage is not None:
            await asyncio.sleep(SETTLE_S)  # the browser's settle: the panels under the stage catch up
            s.settle()
            settled = await s.run()
            tally.errors.extend(f"{page} s{i} settle {j + 1}: {e}" for e in settled.errors)

    for j in range(args.moves):
        await asyncio.sleep(args.pause)
        before = len(tally.times)
        await asyncio.gather(*(guarded(tally, f"{page} s{i} move {j + 1}", move(i, s, j))
                               for i, s in enumerate(alive)))
        times = tally.times[before:]
        tally.notes.append(f"  round {j + 1}: p50 {pct(times, 50):.2f} s, p95 {pct(times, 95):.2f} s, "
                           f"max {max(times, default=float('nan')):.2f} s")
    tally.cpu_per_run = (target.cpu_s() - cpu0) / max(len(tally.times), 1)
    own = resource.getrusage(resource.RUSAGE_SELF)
    client = own.ru_utime + own.ru_stime - own0.ru_utime - own0.ru_stime
    tally.notes.append(f"  this client: {client * 1e3 / max(len(tally.times), 1):.1f} ms of CPU a move; "
                       f"moves on the stage's socket {sum(s.direct_moves for s in alive)}, "
                       f"as runs after its failure {sum(len(s.direct_failures) for s in alive)}"
                       + ("; each move followed by its settle (the panels' run)" if args.settle else ""))
    if spy is not None:
        profile_stop(spy, args.profile)
    await asyncio.gather(*(s.close() for s in sessions))
    return tally


def profile_start(target: Target, path: str) -> subprocess.Popen:
    """py-spy (requirements-dev.txt) sampling one server process, the first replica, until stopped.

    Only the thread holding the GIL is sampled (``--gil``): one replica's sessions take turns
    on it, and here py-spy took threads asleep (``time.sleep``, ``Condition.wait``) for busy.
    """
    pid = target.state()["replicas"][0]["pid"] if target.kind == "serve" else target.proc.pid
    spy = Path(sys.executable).with_name("py-spy")
    return subprocess.Popen([str(spy), "record", "--pid", str(pid), "--rate", "200", "--format", "raw",
                             "--gil", "--nonblocking", "--output", path], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def profile_stop(spy: subprocess.Popen, path: str, top: int = 15) -> None:
    """Stop py-spy (it writes its file on SIGINT) and print where the samples were: by function,
    as the innermost frame (self) and anywhere on the stack (inclusive), each a share of all."""
    spy.send_signal(signal.SIGINT)
    spy.communicate(timeout=60)
    own: dict[str, int] = {}
    anywhere: dict[str, int] = {}
    total = 0
    for line in Path(path).read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";")]
        total += int(count)
        own[frames[-1]] = own.get(frames[-1], 0) + int(count)
        for f in set(frames):
            anywhere[f] = anywhere.get(f, 0) + int(count)
    print(f"py-spy, one replica during the moves: {total} samples holding the GIL (200 a second), {path}")
    for name, table in (("self", own), ("inclusive", anywhere)):
        print(f"  top {top} by {name}:")
        for frame, n in sorted(table.items(), key=lambda kv: -kv[1])[:top]:
            print(f"    {100 * n / max(total, 1):5.1f} %  {frame[:150]}")


def scenario_burst(args) -> int:
    pages = page_names() if args.pages == ["all"] else args.pages
    target = start(args)
    results, failed = {}, False
    try:
        for page in pages:
            rss0 = target.rss_now()
            t0 = time.monotonic()
            results[page] = asyncio.run(burst_page(target, page or "", args))
            print(results[page].line(page or "home")
                  + f"  CPU/move {results[page].cpu_per_run * 1e3:5.1f} ms"
                  + f"  memory (PSS) peak {target.peak_rss(t0):.0f} MB (before {rss0:.0f})  {load_line()}",
                  flush=True)
            print("\n".join(results[page].notes), flush=True)
    finally:
        problems = [e for t in results.values() for e in t.errors + t.refused]
        log = finish(target, problems)
    for t in results.values():
        failed |= pct(t.times, 95) > TARGETS["burst_p95_s"] or bool(t.errors) or bool(t.refused)
    print(f"\nburst, {args.target}, {args.sessions} sessions x {args.moves} moves per page, opening "
          + (f"{args.open_rate:g} a second" if args.open_rate else "at once")
          + f": target p95 <= {TARGETS['burst_p95_s']} s, no errors, none refused: "
          f"{'MISSED' if failed else 'met'}")
    return 1 if failed or log else 0


async def train_burst(target: Target, args) -> dict:
    out: dict = {}
    lone = Session(target.url, "train", 120)
    await lone.open()
    await lone.run()
    trained = []
    for _ in range(4):  # the first run also waits for its replica's worker to import torch
        lone.press("train_go")
        run = await lone.run()
        out.setdefault("alone_errors", []).extend(run.errors)
        if any(text.startswith("Epoch") for _, text in run.progress):  # a press that trained
            trained.append(run.seconds)
        if len(trained) == 2:
            break
    out["alone_s"] = trained[-1] if trained else float("nan")
    await lone.close()

    tally, first_seen, finished = Tally(), [], []
    sessions = [Session(target.url, "train", 180) for _ in range(args.sessions)]

    async def ready(s: Session) -> None:
        await s.open()
        await s.run()

    await asyncio.gather(*(guarded(tally, f"train s{i} open", ready(s)) for i, s in enumerate(sessions)))
    watcher = Session(target.url, "playground", 30)
    await watcher.open()
    await watcher.run()
    play = Tally()
    stop = asyncio.Event()

    async def watch() -> None:
        rng = random.Random(1)
        while not stop.is_set():
            await asyncio.sleep(1.0)
            watcher.set_value("seq_len", rng.randint(2, 60))
            play.add(await watcher.run(), "playground during training")

    watching = asyncio.create_task(guarded(play, "playground", watch()))
    t_press = time.monotonic()

    async def press(i: int, s: Session) -> None:
        await asyncio.sleep(random.Random(i).uniform(0, 0.5))  # the same second
        s.press("train_go")
        sent = time.monotonic()
        result = await s.run()
        tally.add(result, f"train s{i}")
        seen = [t for t, text in result.progress if re.search(r"in line|Epoch", text, re.I)]
        first_seen.append(seen[0] if seen else float("inf"))
        finished.append(result.finished_at - t_press)
        out.setdefault("press_spread", []).append(sent - t_press)

    await asyncio.gather(*(guarded(tally, f"train s{i}", press(i, s)) for i, s in enumerate(sessions)
                           if s.page_hash))
    stop.set()
    await watching
    await asyncio.gather(*(s.close() for s in sessions), watcher.close())
    out.update(tally=tally, first_seen=first_seen, finished=finished, play=play)
    return out


def scenario_train(args) -> int:
    target = start(args)
    try:
        r = asyncio.run(train_burst(target, args))
    finally:
        peak = target.peak_rss()
        log = finish(target, [])
    tally, play = r["tally"], r["play"]
    budget = args.sessions / CORES * r["alone_s"] + TARGETS["train_slack_s"]
    last = max(r["finished"], default=float("inf"))
    print(f"\ntrain, {args.target}, {args.sessions} presses of Train in the same second ({CORES} cores)")
    print(f"one run alone: {r['alone_s']:.2f} s (errors {len(r['alone_errors'])})")
    print(f"place in line or first epoch seen: p50 {pct(r['first_seen'], 50):.2f} s, "
          f"max {max(r['first_seen'], default=float('nan')):.2f} s (target <= {TARGETS['train_first_s']} s)")
    print(f"last run finished {last:.1f} s after the presses (target <= {budget:.1f} s = "
          f"{args.sessions}/{CORES} x {r['alone_s']:.2f} + {TARGETS['train_slack_s']:.0f})")
    print(tally.line("train runs"))
    print(play.line("playground meanwhile") + f" (target <= {TARGETS['train_playground_s']} s)")
    print(f"memory (PSS) peak, all processes: {peak:.0f} MB; {load_line()}")
    for e in (tally.errors + play.errors)[:10]:
        print("   ", e[:240])
    failed = (max(r["first_seen"], default=99) > TARGETS["train_first_s"] or last > budget
              or max(play.times, default=99) > TARGETS["train_playground_s"]
              or tally.errors or play.errors or log)
    return 1 if failed else 0


async def soak(target: Target, args) -> Tally:
    tally = Tally()
    end = time.monotonic() + args.minutes * 60
    pages = page_names()

    async def learner(i: int) -> None:
        rng = random.Random(args.seed * 104729 + i)
        await asyncio.sleep(rng.uniform(0, 3))
        while time.monotonic() < end:
            page = rng.choice([p for p in pages if p != "train"] + ["train"] * (rng.random() < 0.1))
            s = Session(target.url, page, args.timeout)
            try:
                await s.open()
                tally.add(await s.run(), f"s{i} {page or 'home'} open")
                for _ in range(rng.randint(1, 3)):
                    await asyncio.sleep(rng.uniform(1, 3))
                    if page == "train" and s.has("train_go") and rng.random() < 0.5:
                        s.press("train_go")
                    else:
                        nudge(s, rng)
                    tally.add(await s.run(), f"s{i} {page or 'home'} move")
            finally:
                await s.close()

    async def guarded_learner(i: int) -> None:
        while time.monotonic() < end:
            if await guarded(tally, f"s{i}", learner(i)) is None and time.monotonic() < end:
                await asyncio.sleep(1)  # errored: counted; the learner carries on

    await asyncio.gather(*(guarded_learner(i) for i in range(args.sessions)))
    return tally


def scenario_soak(args) -> int:
    target = start(args)
    t0 = time.monotonic()
    try:
        tally = asyncio.run(soak(target, args))
    finally:
        samples = [(t - t0, r) for t, r in target.rss if t >= t0]
        log = finish(target, [])
    warm = [r for t, r in samples if t >= min(60.0, args.minutes * 60 / 5)]
    fifth = max(1, len(warm) // 5)
    early, late = pct(warm[:fifth], 50), pct(warm[-fifth:], 50)
    peak = max((r for _, r in samples), default=float("nan"))
    print(f"\nsoak, {args.target}, {args.sessions} sessions, {args.minutes:g} min, random pages and moves")
    print(tally.line("all runs"))
    print(f"memory (PSS) of all processes: after warm-up {early:.0f} MB, at the end {late:.0f} MB, "
          f"peak {peak:.0f} MB (target flat and <= {TARGETS['rss_mb']:.0f} MB); {load_line()}")
    for e in tally.errors[:10]:
        print("   ", e[:240])
    failed = tally.errors or log or peak > TARGETS["rss_mb"] or late > 1.1 * early
    return 1 if failed else 0


async def failover(target: Target, args) -> dict:
    tally = Tally()
    rng = random.Random(args.seed)
    settings = rng.sample(range(2, 60), args.sessions)
    sessions = [Session(target.url, "playground", args.timeout, {"seq_len": str(t)}) for t in settings]
    events: list[tuple[float, str]] = []  # (time, error) to place errors against the kill
    restored, moved = [], 0

    async def open_one(s: Session) -> None:
        await s.open()
        await s.run()

    await asyncio.gather(*(guarded(tally, f"s{i} open", open_one(s)) for i, s in enumerate(sessions)))
    victim = "r1"
    on_victim = [s for s in sessions if s.replica == victim]
    killed_at = float("inf")

    async def move(i: int, s: Session, j: int) -> None:
        nonlocal moved
        await asyncio.sleep(random.Random(i * 100 + j).uniform(0, args.jitter))
        value = settings[i] + (j % 3) - 1
        s.set_value("seq_len", max(2, value))
        was = s.replica
        for attempt in range(40):
            try:
                tally.add(await s.run(), f"s{i} move {j + 1}")
                return
            except (ConnectionClosed, InvalidStatus, OSError, TimeoutError) as exc:
                events.append((time.monotonic(), f"s{i} move {j + 1}: {exc!r}"))
                await asyncio.sleep(0.5)
                try:
                    await s.reconnect()
                    out = await s.run()  # the browser's rerun from its URL on the new replica
                except (ConnectionClosed, InvalidStatus, OSError, TimeoutError) as again:
                    events.append((time.monotonic(), f"s{i} reconnect {attempt + 1}: {again!r}"))
                    continue
                moved += s.replica != was
                # A value at its default is left out of the URL: the page shows the default.
                restored.append(int(s.value("seq_len")) == int(s.query.get("seq_len", s.defaults["seq_len"])))
                tally.add(out, f"s{i} reconnect")
                s.set_value("seq_len", max(2, value))

    async def kill_mid_round() -> None:
        nonlocal killed_at
        await asyncio.sleep(args.jitter / 2)
        target.kill_replica(victim)
        killed_at = time.monotonic()

    for j in range(args.moves):
        await asyncio.sleep(args.pause)
        if j == 2:
            asyncio.create_task(kill_mid_round())
        await asyncio.gather(*(guarded(tally, f"s{i} move {j + 1}", move(i, s, j))
                               for i, s in enumerate(sessions) if s.page_hash or s.ws))
    await asyncio.gather(*(s.close() for s in sessions))
    return dict(tally=tally, events=events, killed_at=killed_at, on_victim=len(on_victim),
                restored=restored, moved=moved)


def scenario_failover(args) -> int:
    args.target, args.replicas = "serve", max(2, args.replicas)
    target = start(args)
    try:
        r = asyncio.run(failover(target, args))
    finally:
        log = finish(target, [])
    tally, late = r["tally"], [e for t, e in r["events"] if t > r["killed_at"] + TARGETS["failover_grace_s"]]
    late += tally.errors
    print(f"\nfailover, {args.replicas} replicas, {args.sessions} sessions on the Playground; "
          f"replica r1 (serving {r['on_victim']}) killed before round 3 of {args.moves}")
    print(tally.line("all runs"))
    print(f"disconnections and failed reconnects: {len(r['events'])}, of them more than "
          f"{TARGETS['failover_grace_s']:.0f} s after the kill: "
          f"{sum(t > r['killed_at'] + TARGETS['failover_grace_s'] for t, _ in r['events'])}")
    print(f"sessions moved to the survivor: {r['moved']} of {r['on_victim']}; page drawn with the "
          f"URL's settings after reconnecting: {sum(r['restored'])} of {len(r['restored'])}; {load_line()}")
    for e in late[:10]:
        print("   ", e[:240])
    # The killed replica's log lines (its restart by serve.py) are expected; tracebacks are not.
    failed = late or r["moved"] < r["on_victim"] or not all(r["restored"]) or \
        any("Traceback" in line for line in log)
    return 1 if failed else 0


# --------------------------------------------------------------------------- drag

DRAG_S = 2.0  # one drag of T across the stage, as bench/bench_stage.py's


async def drag_class(target: Target, args) -> dict:
    """N learners drag T on the Playground's stage at once, each as its browser does.

    One request in flight per learner: the next value goes out once the last is
    answered, and it is wherever the pointer has got to by then (the pointer crosses
    T 5 -> 40, or back, in ``DRAG_S``). Each drag ends with the last value answered,
    then "settled" (the page's panels catch up) after ``SETTLE_S``.
    """
    tally = Tally()
    settles: list[float] = []
    rates: dict[int, list[float]] = {}
    sessions = [Session(target.url, "playground", args.timeout, language_query(args))
                for _ in range(args.sessions)]

    async def first(s: Session) -> None:
        await s.open()
        await s.run()

    await asyncio.gather(*(guarded(tally, f"s{i} open", first(s)) for i, s in enumerate(sessions)))
    alive = [(i, s) for i, s in enumerate(sessions) if s.stage is not None]
    cpu0, runs0 = target.cpu_s(), len(tally.times)

    async def learner(i: int, s: Session) -> None:
        rng = random.Random(args.seed * 7919 + i)
        await asyncio.sleep(rng.uniform(0, args.jitter))
        for r in range(args.moves):
            start_t, end_t = (5, 40) if r % 2 == 0 else (40, 5)
            t0 = time.perf_counter()
            sent, drawn = None, 0
            while True:
                frac = min(1.0, (time.perf_counter() - t0) / DRAG_S)
                value = round(start_t + (end_t - start_t) * frac)
                if value != sent:
                    s.set_value("seq_len", value)
                    tally.add(await s.run(), f"s{i} drag {r + 1} T={value}")
                    sent, drawn = value, drawn + 1
                elif frac >= 1.0:
                    break
                else:
                    await asyncio.sleep(0.005)  # the pointer has not reached the next value yet
            rates.setdefault(i, []).append(drawn / (time.perf_counter() - t0))
            await asyncio.sleep(SETTLE_S)
            s.settle()
            out = await s.run()
            settles.append(out.seconds)
            tally.errors.extend(f"s{i} settle {r + 1}: {e}" for e in out.errors)
            await asyncio.sleep(args.pause)

    await asyncio.gather(*(guarded(tally, f"s{i} drags", learner(i, s)) for i, s in alive))
    updates = len(tally.times) - runs0
    tally.cpu_per_run = (target.cpu_s() - cpu0) / max(1, updates + len(settles))
    await asyncio.gather(*(s.close() for _, s in alive), return_exceptions=True)
    return {"tally": tally, "settles": settles, "rates": rates, "learners": len(alive)}


def scenario_drag(args) -> int:
    target = start(args)
    out = None
    try:
        out = asyncio.run(drag_class(target, args))
    finally:
        log = finish(target, out["tally"].errors if out else [])
    tally, rates = out["tally"], out["rates"]
    per_learner = sorted(statistics.median(r) for r in rates.values())
    slowest = per_learner[0] if per_learner else float("nan")
    print(tally.line("stage updates") + f"  CPU/update {tally.cpu_per_run * 1e3:4.1f} ms  {load_line()}")
    settles = out["settles"]
    print(f"settled (the page's panels): p50 {pct(settles, 50):.2f} s  p95 {pct(settles, 95):.2f} s")
    print(f"graphs a second per learner over a {DRAG_S:.0f} s drag: slowest {slowest:.1f}, "
          f"median {statistics.median(per_learner) if per_learner else float('nan'):.1f}, "
          f"fastest {per_learner[-1] if per_learner else float('nan'):.1f}  ({out['learners']} learners)")
    failed = (bool(tally.errors) or pct(tally.times, 95) > TARGETS["drag_p95_s"]
              or slowest < TARGETS["drag_graphs_per_s"] or out["learners"] < args.sessions)
    print(f"\ndrag, {args.target}, {args.sessions} learners x {args.moves} drags: target every learner >= "
          f"{TARGETS['drag_graphs_per_s']:.0f} graphs/s, p95 per update <= {TARGETS['drag_p95_s']} s, "
          f"no errors: {'MISSED' if failed else 'met'}")
    return 1 if failed or log else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", choices=("burst", "train", "soak", "failover", "drag"))
    ap.add_argument("--target", choices=("serve", "single"), default="serve")
    ap.add_argument("--replicas", type=int, default=0, help="serve: app processes (default one per core)")
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--pages", nargs="+", default=["all"],
                    help=f"burst: 'all' or some of {[p or 'home' for p in page_names()]}")
    ap.add_argument("--moves", type=int, default=3, help="burst/failover: rounds of moves")
    ap.add_argument("--minutes", type=float, default=10.0, help="soak: length")
    ap.add_argument("--jitter", type=float, default=0.5, help="spread of one round, s")
    ap.add_argument("--pause", type=float, default=1.0, help="pause between rounds, s")
    ap.add_argument("--timeout", type=float, default=60.0, help="per run, s")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lang", choices=("en", "zh_CN", "es"), default=None,
                    help="burst/drag: every session's language (?lang=), to compare a move's cost in each")
    ap.add_argument("--open-rate", type=float, default=5.0,
                    help="burst: sessions opening a second, as a class arriving (0: all at once)")
    ap.add_argument("--t-only", action="store_true", help="burst: on the Playground every move is T")
    ap.add_argument("--settle", action="store_true",
                    help="burst: each move is followed, 0.3 s later, by its settle (the panels' run), "
                         "as in a browser; counted in CPU/move, not in the move's time")
    ap.add_argument("--profile", metavar="FILE",
                    help="burst: py-spy's raw samples of the first replica during the moves, to FILE")
    args = ap.parse_args()
    args.pages = ["" if p == "home" else p for p in args.pages]
    if not 1 <= args.sessions <= MAX_SESSIONS or not 1 <= args.moves <= 50 or args.open_rate < 0:
        ap.error(f"--sessions must be 1..{MAX_SESSIONS}, --moves 1..50, --open-rate >= 0")
    # Each session holds a websocket and, while it opens, an HTTP connection.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4 * args.sessions + 256)), hard))
    if args.scenario == "failover":
        args.moves = max(args.moves, 5)
    print(f"bench/load.py {args.scenario}: {CORES} cores; {load_line()}", flush=True)
    print(reference_line(), flush=True)
    return {"burst": scenario_burst, "train": scenario_train, "soak": scenario_soak,
            "failover": scenario_failover, "drag": scenario_drag}[args.scenario](args)


if __name__ == "__main__":
    sys.exit(main())
