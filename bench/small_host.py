"""The app on a small host: `streamlit run app.py` in a cgroup of --memory-mib and --cpus, toured in Chromium.

    python bench/small_host.py [--memory-mib 690] [--cpus 1] [--sessions 30] [--root DIR]

As Streamlit Community Cloud would run it (690 MiB and one CPU at its smallest):
one learner tours every page in Chromium (Your code with two ready-made edits,
one training run), then ``--sessions`` sessions move T on the Playground at once
(bench/load.py's burst). Printed: each page's time and whether the server still
answers, the PSS of every process of the app after the tour (server, training
workers, the fork server; /proc/PID/smaps_rollup), the p95 of the
moves and their errors, and the cgroup's peak memory and OOM kills.
``--memory-mib 0`` sets no limit (the PSS table's figures); ``--root`` tours
another copy of the app (``git archive COMMIT | tar -x -C DIR``: the figures
before a change). Needs root and cgroup v1 (harness/cgroups.py). Exit status 1
when the server died or the kernel killed anything.

``--pressure`` (say at ``--memory-mib 500``): no tour, but memory short on purpose: a
long training run and, while it trains, a Your code run that holds 200 MB; then
Train again. Printed: which of the app's processes are gone (the server must not
be), the cgroup's OOM kills, and what each page told the learner; ``--shots``
keeps the screenshots.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.load import burst_page, load_line, pct  # noqa: E402
from harness.cgroups import SmallHost, available, memory_by_process, oom_score_adj  # noqa: E402
from harness.helpers import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, server_command, wait_healthy  # noqa: E402

PAGES = ("/", "/playground", "/code", "/train", "/static_vs_dynamic", "/debugging", "/lab", "/lesson",
         "/classroom")
EDITS = ("skip connection", "if on the data")  # two ready-made edits' pills on Your code
SCRIPT_DONE = "[data-testid='stApp'][data-test-script-state='notRunning']"


def alive(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5):
            return True
    except OSError:
        return False


def settle(page, ready: str = "h1", timeout: float = 120_000) -> None:
    page.wait_for_selector(ready, timeout=timeout)
    page.wait_for_selector(SCRIPT_DONE, timeout=timeout)


def tour(url: str, shots: Path | None = None, started: float = 0.0) -> list[tuple[str, float, bool, str]]:
    """Every page in one browser tab -> (page, seconds, server alive after, what was done).

    First, as a sleeping app's first visitor: the Playground until its graph is drawn,
    timed from ``started`` (the server's start).
    """
    from playwright.sync_api import expect, sync_playwright

    out = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(url + "/playground", timeout=120_000)
        page.locator("[data-testid='graph-view']").and_(page.locator("[data-drawn-graph]")).wait_for(
            timeout=120_000)
        print(f"  cold start: the Playground's first graph drawn {time.monotonic() - started:.1f} s after "
              "the server was started", flush=True)
        for path in PAGES:
            t0 = time.monotonic()
            did = "opened"
            try:
                page.goto(url + path, timeout=120_000)
                settle(page)
                if path == "/code":
                    view = page.locator("[data-testid='graph-view']")  # in a shadow root: a locator
                    view.and_(page.locator("[data-drawn-graph]")).wait_for(timeout=120_000)
                    for title in EDITS:
                        before = view.get_attribute("data-drawn-graph")
                        page.get_by_role("radio", name=title, exact=True).click()
                        expect(view).not_to_have_attribute("data-drawn-graph", before, timeout=120_000)
                    did = "two edits run"
                elif path == "/train":
                    page.get_by_role("button", name="Train").click()
                    page.wait_for_selector("[data-testid='stDataFrame']", timeout=300_000)
                    settle(page)
                    did = "trained"
                if shots:
                    page.screenshot(path=str(shots / f"small_host{path.replace('/', '_') or '_home'}.png"))
            except Exception as err:  # noqa: BLE001 - the bench reports it and carries on
                did = f"FAILED: {type(err).__name__}: {str(err).splitlines()[0][:120]}"
            out.append((path, time.monotonic() - t0, alive(url), did))
            print(f"  {path:<20} {out[-1][1]:6.1f} s  server {'alive' if out[-1][2] else 'DEAD'}  {did}",
                  flush=True)
        browser.close()
    return out


HUNGRY = """import torch

x = torch.ones(50_000_000)  # 200 MB, every page touched
predictions = x[:10].reshape(10, 1) * torch.ones(10, 1, requires_grad=True)
"""
LONG_TRAIN = "/train?seq_len=60&hidden_size=128&num_layers=2&epochs=200"
SAID = ("[data-testid='stAlert'], [data-testid='stException'], [data-testid='stNotification'], "
        "[data-testid='stAlertContainer']")


def pressure(url: str, server: int, shots: Path | None) -> list[str]:
    """A long training run and a 200 MB code run at once, then Train again -> what the learner read."""
    from playwright.sync_api import sync_playwright

    from stockdemo.code.link import code_to_link

    said = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        trainer = browser.new_page(viewport={"width": 1440, "height": 900})
        coder = browser.new_page(viewport={"width": 1440, "height": 900})
        try:
            trainer.goto(url + LONG_TRAIN, timeout=120_000)
            settle(trainer)
            trainer.get_by_role("button", name="Train").click()
            trainer.wait_for_selector("[data-testid='stProgress']", timeout=120_000)
            print(f"  training: {[(w, pid) for w, pid, _ in memory_by_process(server)]}", flush=True)
            coder.goto(f"{url}/code?code={code_to_link(HUNGRY)}", timeout=120_000)
            settle(coder, timeout=240_000)
            trainer.wait_for_selector(f"{SAID}, [data-testid='stDataFrame']", timeout=300_000)
        except Exception as err:  # noqa: BLE001 - reported with what the pages show
            said.append(f"(the bench: {type(err).__name__}: {str(err).splitlines()[0][:160]})")
        for name, page in (("code", coder), ("train", trainer)):
            texts = [t.strip()[:300] for t in page.locator(SAID).all_inner_texts() if t.strip()]
            said += [f"{name}: {t}" for t in texts]
            if shots:
                page.screenshot(path=str(shots / f"pressure_{name}.png"), full_page=False)
        browser.close()
    return said


def memory_table(server: int) -> list[str]:
    rows = []
    for who, pid, m in memory_by_process(server):
        if m:
            rows.append(f"  {who:<16} pid {pid:<7} PSS {m['Pss']:6.0f} MB  RSS {m['Rss']:6.0f} MB  "
                        f"private dirty {m['Private_Dirty']:6.0f} MB  oom_score_adj {oom_score_adj(pid)}")
    total = sum(m.get("Pss", 0) for _, _, m in memory_by_process(server))
    rows.append(f"  {'all together':<16} PSS {total:6.0f} MB")
    return rows


def moves(url: str, sessions: int) -> tuple[float, list[str]]:
    """--sessions sessions move T on the Playground together, 3 rounds (bench/load.py's burst)."""
    args = SimpleNamespace(sessions=sessions, timeout=120.0, open_rate=5.0, moves=3, seed=0, t_only=True,
                           jitter=0.5, pause=1.0, settle=False, profile=None)
    target = SimpleNamespace(url=url, cpu_s=lambda: 0.0)
    tally = asyncio.run(burst_page(target, "playground", args))
    return pct(tally.times, 95), tally.errors + tally.refused


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memory-mib", type=int, default=690, help="0: no limit")
    ap.add_argument("--cpus", type=float, default=1.0)
    ap.add_argument("--sessions", type=int, default=30, help="0: the tour only")
    ap.add_argument("--root", type=Path, default=ROOT, help="the copy of the app to run")
    ap.add_argument("--shots", type=Path, help="a folder for a screenshot of each page")
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server")
    ap.add_argument("--pressure", action="store_true", help="memory short on purpose instead of the tour")
    args = ap.parse_args()
    why = available()
    if why:
        print(f"cannot simulate a small host here: {why}")
        return 1
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    host = SmallHost(f"stockdemo-bench-{os.getpid()}", args.memory_mib or None, args.cpus)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, **dict(e.split("=", 1) for e in args.env)}
    log = open(f"/tmp/stockdemo-small-host-{os.getpid()}.log", "w")  # noqa: SIM115 - the server's log
    print(f"root {args.root}, memory {args.memory_mib or 'no limit'} MiB, cpus {args.cpus:g}; "
          f"server log {log.name}; {load_line()}", flush=True)
    t0 = time.monotonic()
    server = subprocess.Popen(server_command(port, script=args.root / "app.py"), cwd=args.root, env=env,
                              stdout=log, stderr=subprocess.STDOUT, preexec_fn=host.join)
    try:
        wait_healthy(server, port, timeout=180)
        print(f"server up in {time.monotonic() - t0:.1f} s", flush=True)
        if args.pressure:
            before = {pid: who for who, pid, _ in memory_by_process(server.pid)}
            said = pressure(url, server.pid, args.shots)
            after = {pid for _, pid, _ in memory_by_process(server.pid)}
            print(f"gone: {sorted((w, p) for p, w in before.items() if p not in after)}; the learner read:"
                  + "".join(f"\n    {s}" for s in said))
            lived = server.poll() is None and alive(url)
            print(f"\nserver {'lived' if lived else 'DIED'}; cgroup peak {host.peak_mib():.0f} MiB of "
                  f"{args.memory_mib}, OOM kills {host.oom_kills()}; {load_line()}", flush=True)
            return 0 if lived else 1
        pages = tour(url, args.shots, t0)
        print("after the tour, by process:")
        print("\n".join(memory_table(server.pid)), flush=True)
        p95, errors = (float("nan"), [])
        if args.sessions and server.poll() is None:
            p95, errors = moves(url, args.sessions)
            print(f"{args.sessions} sessions moving T, 3 rounds: p95 {p95:.2f} s, errors {len(errors)}"
                  + "".join(f"\n    {e}" for e in errors[:5]), flush=True)
            print("after the moves, by process:")
            print("\n".join(memory_table(server.pid)), flush=True)
        lived = server.poll() is None and alive(url)
        kills = host.oom_kills()
        print(f"\nserver {'lived' if lived else 'DIED (exit ' + str(server.returncode) + ')'}; "
              f"pages failed {sum(not p[3].startswith(('opened', 'two', 'trained')) for p in pages)}; "
              f"cgroup peak {host.peak_mib():.0f} MiB of {args.memory_mib or 'no limit'}, "
              f"OOM kills {kills}, failcnt {host.failcnt()}; {load_line()}", flush=True)
        return 0 if lived and kills == 0 else 1
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
        host.remove()
        log.close()


if __name__ == "__main__":
    sys.exit(main())
