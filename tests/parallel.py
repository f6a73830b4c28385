"""`make test`: every test, as three pytest processes side by side, each reported in full.

    python -m tests.parallel [PYTEST OPTIONS]     # e.g. -x, -k NAME: given to every group

Run one after another, the browser tests spend most of their time waiting (for a run, an
animation, a settle, a class's countdown): about 11 minutes of CPU in 29 of wall-clock time
on 2 cores. So the suite runs as three groups at once, each with its own app server and
Chromium: two halves of tests/browser/ and everything else. Each group's output goes to
artifacts/test-logs/GROUP.log and is printed whole when all are done; the exit status is
pytest's worst. A new browser test file lands in the second half by itself.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "artifacts" / "test-logs"
BROWSER = ROOT / "tests" / "browser"
# The pages' own sweeps (every page at every width, every chart, every key): about half the time.
PAGES_HALF = ("test_accessibility_browser.py", "test_chart_collisions_browser.py", "test_pages_browser.py",
              "test_keyboard_browser.py", "test_lesson_browser.py", "test_lab_browser.py",
              "test_train_browser.py", "test_static_browser.py", "test_debugging_browser.py",
              "test_counts_browser.py", "test_handout_browser.py")


def groups() -> dict[str, list[str]]:
    """name -> the paths pytest is given."""
    files = sorted(p.name for p in BROWSER.glob("test_*.py"))
    missing = sorted(set(PAGES_HALF) - set(files))
    if missing:
        raise SystemExit(f"tests/parallel.py names browser test files that are gone: {missing}")
    rel = "tests/browser/"
    return {
        "browser-pages": [rel + f for f in files if f in PAGES_HALF],
        "browser-views": [rel + f for f in files if f not in PAGES_HALF],
        "core-and-servers": ["tests", "--ignore=tests/browser"],
    }


def main(extra: list[str]) -> int:
    LOGS.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    running = {}
    try:
        for name, paths in groups().items():
            log = (LOGS / f"{name}.log").open("w", encoding="utf-8")
            cmd = [sys.executable, "-m", "pytest", "-q", "--durations=10", *paths, *extra]
            running[name] = (subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT), log)
            print(f"{name}: {' '.join(cmd[3:])}", flush=True)
        codes = {}
        while len(codes) < len(running):
            for name, (proc, log) in running.items():
                if name not in codes and proc.poll() is not None:
                    codes[name] = proc.returncode
                    log.close()
                    last = (LOGS / f"{name}.log").read_text(encoding="utf-8").strip().splitlines()[-1:]
                    print(f"{name}: exit {proc.returncode} after {time.monotonic() - started:.0f} s: "
                          f"{last[0] if last else 'no output'}", flush=True)
            time.sleep(1)
    finally:
        for proc, _ in running.values():
            if proc.poll() is None:
                proc.terminate()
                proc.wait()
    for name in running:
        print(f"\n{'=' * 30} {name} {'=' * 30}\n{(LOGS / f'{name}.log').read_text(encoding='utf-8')}",
              flush=True)
    failed = [name for name, code in codes.items() if code != 0]
    print(f"{'FAILED' if failed else 'passed'}: {len(running)} groups in {time.monotonic() - started:.0f} s"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return max(codes.values(), default=1) if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
