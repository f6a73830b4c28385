"""Forty distinct learners' programs of about 8,700 graph nodes, opened from links: what the server keeps.

    python bench/code_cache.py [--programs 40] [--steps 1240] [--memory-mib 690] [--cpus 1]

Each program is a hand-written RNNCell loop of ``--steps`` steps (7 autograd nodes a
step: about 8,700 nodes at 1,240, within the sandbox's 10,000), distinct by its seed,
opened as a teacher's link does (``/code?code=...``) by a session over Streamlit's
websocket (bench/load.py's ``Session``). The server runs in a cgroup of
``--memory-mib`` and ``--cpus`` (harness/cgroups.py; 0: no limit), so it sizes its
caches as such a host would. Printed: the server's PSS and private dirty memory before,
every ten programs and after, their growth beside the cache budget (``host.cache_budget``
for that memory; ``STOCKDEMO_CACHE_MB`` overrides it), and errors (a program whose run did
not finish or showed an error). The verdict is on private dirty: PSS also carries the
server's share of torch's library pages, which moves by tens of MB as other processes on
the machine map them or exit. Needs root and cgroup v1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.load import Session, load_line  # noqa: E402
from harness.cgroups import SmallHost, available, smaps  # noqa: E402
from harness.helpers import ROOT, free_port, server_command, wait_healthy  # noqa: E402
from stockdemo import host  # noqa: E402
from stockdemo.code.link import code_to_link  # noqa: E402

PROGRAM = """import torch
from torch import nn

torch.manual_seed({seed})
cell = nn.RNNCell(3, 10)
x = torch.randn(10, 3)
h = torch.zeros(10, 10)
for t in range({steps}):
    h = torch.tanh(cell(x, h))
predictions = h
"""


async def open_program(url: str, source: str) -> tuple[float, list[str]]:
    s = Session(url, "code", run_timeout=180, query={"code": code_to_link(source)})
    t0 = time.monotonic()
    try:
        await s.open()
        out = await s.run()
        return time.monotonic() - t0, out.errors + ([] if out.ok else ["the run did not finish"])
    finally:
        await s.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=40)
    ap.add_argument("--steps", type=int, default=1240)
    ap.add_argument("--memory-mib", type=int, default=690, help="0: no limit")
    ap.add_argument("--cpus", type=float, default=1.0)
    ap.add_argument("--as-mib", type=int, default=0,
                    help="tell the server it has this much memory (STOCKDEMO_MEMORY_MB), with no limit")
    ap.add_argument("--root", type=Path, default=ROOT, help="the copy of the app to run")
    args = ap.parse_args()
    why = available()
    if why:
        print(f"cannot make the host here: {why}")
        return 1
    box = SmallHost(f"stockdemo-code-cache-{os.getpid()}", args.memory_mib or None, args.cpus)
    env = dict(os.environ)
    if args.as_mib:
        env["STOCKDEMO_MEMORY_MB"] = str(args.as_mib)
    told = args.as_mib or args.memory_mib
    if told and "STOCKDEMO_CACHE_MB" not in os.environ:
        budget = host.cache_budget(host.Limits(told * 2**20, 1, "bench", "bench"))
    else:
        budget = host.cache_budget()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(f"/tmp/stockdemo-code-cache-{os.getpid()}.log", "w")  # noqa: SIM115 - the server's log
    server = subprocess.Popen(server_command(port, script=args.root / "app.py"), cwd=args.root, env=env,
                              stdout=log, stderr=subprocess.STDOUT, preexec_fn=box.join)
    try:
        wait_healthy(server, port, timeout=180)
        print(f"root {args.root}; memory {args.memory_mib or 'no limit'} MiB, cpus {args.cpus:g}; "
              f"cache budget {budget / 2**20:.0f} MB; {load_line()}", flush=True)
        seconds, errors = asyncio.run(open_program(url, PROGRAM.format(seed=-1, steps=5)))  # the page, warm
        start = smaps(server.pid)
        before, own_before = start["Pss"], start["Private_Dirty"]
        print(f"server after the page's first run: PSS {before:.0f} MB, private dirty {own_before:.0f} MB",
              flush=True)
        times, problems = [], list(errors)
        t0 = time.monotonic()
        for i in range(args.programs):
            seconds, errors = asyncio.run(open_program(url, PROGRAM.format(seed=i, steps=args.steps)))
            times.append(seconds)
            problems += [f"program {i}: {e}" for e in errors]
            if (i + 1) % 10 == 0:
                now = smaps(server.pid)
                print(f"  {i + 1:>3} programs: server PSS {now.get('Pss', 0):.0f} MB, private dirty "
                      f"{now.get('Private_Dirty', 0):.0f} MB, last open {seconds:.1f} s", flush=True)
        end = smaps(server.pid)
        after, own_after = end.get("Pss", 0), end.get("Private_Dirty", 0)
        lived = server.poll() is None
        took = time.monotonic() - t0
        print(f"\n{args.programs} programs of {args.steps} steps in {took:.0f} s: server PSS "
              f"{before:.0f} -> {after:.0f} MB (+{after - before:.0f} MB), private dirty {own_before:.0f} -> "
              f"{own_after:.0f} MB (+{own_after - own_before:.0f} MB; cache budget "
              f"{budget / 2**20:.0f} MB); errors {len(problems)}; server {'lived' if lived else 'DIED'}; "
              f"cgroup peak {box.peak_mib():.0f} MiB, OOM kills {box.oom_kills()}; {load_line()}"
              + "".join(f"\n    {p}" for p in problems[:5]), flush=True)
        return 0 if lived and not problems and own_after - own_before <= budget / 2**20 else 1
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
        box.remove()
        log.close()


if __name__ == "__main__":
    sys.exit(main())
