"""The ASGI app one replica serves: app.py behind the replica's own limits (deploy/replica_limits.py),
the Playground stage's socket, which answers a learner's moves without a script run
(``stockdemo/ui/stage_route.py``), and Your code's, which answers a Run the same way
(``stockdemo/ui/code_route.py``).

``deploy/replica.py`` runs it with ``streamlit run``, which finds ``app`` and serves
it as ``streamlit run app.py`` would serve the script, with the same options. The
limits come from the environment (``deploy/serve.py`` sets them from its options):

- ``STOCKDEMO_CAPACITY``: sessions a page load may take this replica to (default 200);
- ``STOCKDEMO_HARD_CAP``: sessions it holds at most, reconnections included
  (default 1.5 x the capacity);
- ``STOCKDEMO_SESSION_MESSAGES``: one session's messages, ``BURST/PER_S`` (default 40/4);
- ``STOCKDEMO_FULL_RETRY_S``: the full page's wait before it tries again (default 30, plus
  up to half of it at random);
- ``STOCKDEMO_UNHELD_SESSIONS``: websockets naming a session this replica does not hold
  (each would be a new session), ``BURST/PER_S`` for the whole replica (default 30/10);
- ``STOCKDEMO_AFFINITY_COOKIE``: the balancer's cookie (default SRV, as class mode's);
- ``STOCKDEMO_WARM_STAGE``: ``0`` to start without running the Playground's every T first
  (``deploy/replica.py --cold``: a replica restarted while the others carry the class).
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from deploy.replica_limits import CODE_SOCKET, STAGE_SOCKET, ReplicaLimits  # noqa: E402

# 300 learners on two replicas fit with room for the balancer's unevenness; a seat
# costs about 0.1 MB and nothing at rest, so what bounds a replica is everyone moving at once.
CAPACITY = int(os.environ.get("STOCKDEMO_CAPACITY") or 200)
# A replica that dies sends its sessions to the others: they hold half again as many.
HARD_CAP = int(os.environ.get("STOCKDEMO_HARD_CAP") or CAPACITY * 3 // 2)
# One drag of T across the stage (35 values, one request in flight) at once; then the
# 4 graphs a second a drag must show.
BURST, PER_S = (float(x) for x in (os.environ.get("STOCKDEMO_SESSION_MESSAGES") or "40/4").split("/"))
# Time for a learner or two to leave; the random half keeps a full class's retries apart.
RETRY_S = int(os.environ.get("STOCKDEMO_FULL_RETRY_S") or 30)
# Reconnects that name a session held nowhere here: a failed replica's share of a class at
# once, then the pace a forged flood gets (a session held here comes back without it).
UNHELD = tuple(float(x) for x in (os.environ.get("STOCKDEMO_UNHELD_SESSIONS") or "30/10").split("/"))

STATS_PATH = "/_stockdemo/stats"

# The pages offer the sockets where these are set (stockdemo/ui/stage_route.py and
# code_route.py, SOCKET_ENV).
os.environ["STOCKDEMO_STAGE_SOCKET"] = STAGE_SOCKET
os.environ["STOCKDEMO_CODE_SOCKET"] = CODE_SOCKET


async def stage_socket(websocket) -> None:
    # Imported on the first move, once Streamlit's runtime exists: importing stockdemo.ui
    # registers the app's components, and before the runtime they would go nowhere.
    from stockdemo.ui import stage_route

    await stage_route.serve(websocket)


async def code_socket(websocket) -> None:
    from stockdemo.ui import code_route  # as the stage's: once the runtime exists

    await code_route.serve(websocket)


async def stats(_request) -> JSONResponse:
    """For an operator: memory used and allowed, this server's PSS, the caches, the pools."""
    from stockdemo.ui import stats

    return JSONResponse(stats.stats())


def held(session_id: str) -> bool:
    # stockdemo.ui comes with the first page run: before it, no session here has run to resume.
    compat = sys.modules.get("stockdemo.ui.compat")
    return compat is not None and compat.holds_session(session_id)


def warm_stage() -> None:
    from stockdemo.ui import stage_route

    stage_route.warm_stage()


@asynccontextmanager
async def lifespan(_app):
    # Once Streamlit's runtime has started (stockdemo.ui's components register there): every T
    # of the Playground at its defaults, run and kept, in the background (about 3 s of CPU).
    if os.environ.get("STOCKDEMO_WARM_STAGE", "1") != "0":
        threading.Thread(target=warm_stage, name="stage-warm", daemon=True).start()
    yield


LIMITS = Middleware(ReplicaLimits, capacity=CAPACITY, hard_cap=HARD_CAP, burst=BURST, per_s=PER_S,
                    retry_s=RETRY_S, affinity_cookie=os.environ.get("STOCKDEMO_AFFINITY_COOKIE") or "SRV",
                    held=held, unheld=UNHELD)
app = st.App(ROOT / "app.py", lifespan=lifespan, routes=[WebSocketRoute(STAGE_SOCKET, stage_socket),
                                                      WebSocketRoute(CODE_SOCKET, code_socket),
                                                      Route(STATS_PATH, stats)],
             middleware=[LIMITS])
