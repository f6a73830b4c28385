"""One replica of the app: its training workers start with it, then Streamlit serves ``app.py``
behind the replica's limits (``deploy/replica_app.py``: seats and each session's message rate).

    python deploy/replica.py [--cold] [streamlit run options, e.g. --server.port 8502]

``streamlit run app.py`` (``make run``) starts the training workers on the
first visit of the Train page, and a worker then needs seconds to import torch
and pay its one-off start-up run, longer while a class opens pages. A replica
started here has its workers warm before its first learner arrives. ``deploy/serve.py``
(``make serve``), the Dockerfile and so the Kubernetes pods start replicas this way.
``--cold``: the workers start on the first Train visit instead, and the Playground's
runs at its defaults are not made at the start (``deploy/replica_app.py``): serve.py
restarting a replica that died, whose warm-up would take the cores the survivors need then.

With a shared class store (``STOCKDEMO_REDIS_URL``) the replica is on the replica roll
from its start, before any tab reaches it (``stockdemo.classroom.replicas``): one that comes back
after a crash holds no class tab and is where the others send some of theirs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(options: list[str]) -> None:
    sys.path.insert(0, str(ROOT))
    from streamlit.web import cli

    from stockdemo.classroom import replicas
    from stockdemo.train import pool as workers

    if "--cold" in options:
        options = [o for o in options if o != "--cold"]
        os.environ["STOCKDEMO_WARM_STAGE"] = "0"  # nor the Playground's runs kept at the start
    else:
        workers.shared_pool()  # starts the workers in the background; the pages find this pool
    replicas.start_roll()
    sys.argv = ["streamlit", "run", str(ROOT / "deploy" / "replica_app.py"), *options]
    cli.main()  # exits with Streamlit's own status


if __name__ == "__main__":
    main(sys.argv[1:])
