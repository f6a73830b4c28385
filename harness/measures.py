"""What a load benchmark counts: percentiles, this box's load and reference figure, each
scenario's tally of times, errors and refusals.
"""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from websockets.exceptions import ConnectionClosed, InvalidStatus

from harness.helpers import ROOT
from harness.sessions import RunOutcome

TARGETS = {"burst_p95_s": 0.5, "rss_mb": 1536.0, "train_first_s": 1.0, "train_slack_s": 2.0,
           "train_playground_s": 1.0, "failover_grace_s": 5.0,
           "drag_p95_s": 0.5, "drag_graphs_per_s": 4.0}


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def load_line() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def reference_line() -> str:
    """bench/reference.py's figure for this box, in its own process (the client stays torch-free)."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "reference.py")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    return "this box: " + (done.stdout.strip() or f"bench/reference.py failed: {done.stderr[-300:]}")


@dataclass
class Tally:
    times: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # 429 or 503 from a limit: counted apart
    notes: list[str] = field(default_factory=list)  # lines printed under the scenario's
    cpu_per_run: float = float("nan")  # CPU seconds of every process over the runs timed

    def add(self, out: RunOutcome, label: str) -> None:
        self.times.append(out.seconds)
        self.errors.extend(f"{label}: {e}" for e in out.errors)

    def line(self, name: str) -> str:
        return (f"{name:<20} runs {len(self.times):>4}  p50 {pct(self.times, 50):6.2f} s  "
                f"p95 {pct(self.times, 95):6.2f} s  max {max(self.times, default=float('nan')):6.2f} s  "
                f"errors {len(self.errors)}  refused {len(self.refused)}")


# The client limits' answer and a full replica's (deploy/haproxy.cfg, deploy/replica_limits.py).
REFUSALS = (429, 503)


def refusal(exc: BaseException) -> int | None:
    """The HTTP status of a limit's refusal (a page load's or a websocket's), else None."""
    status = getattr(exc, "code", None) if isinstance(exc, urllib.error.HTTPError) else \
        exc.response.status_code if isinstance(exc, InvalidStatus) else None
    return status if status in REFUSALS else None


async def guarded(tally: Tally, label: str, coro):
    """Run one session's coroutine; a timeout or disconnect is an error, not a crash of the bench."""
    try:
        return await coro
    except TimeoutError:
        tally.errors.append(f"{label}: timeout")
    except (ConnectionClosed, InvalidStatus, OSError) as exc:
        if refusal(exc):
            tally.refused.append(f"{label}: {refusal(exc)}")
        else:
            tally.errors.append(f"{label}: disconnected ({exc!r})")
    except (KeyError, ValueError, IndexError) as exc:  # a page that did not draw its controls
        tally.errors.append(f"{label}: {exc!r}")
    return None
