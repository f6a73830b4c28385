"""What a learner's session gets from a running app, seen over Streamlit's own websocket.

    python -m harness.session_probe URL [--seq-len 8]     -> one line of JSON

Used from the host (the Kubernetes pods behind their balancer) and from inside
the app's container, which runs with no network at all: the probe is mounted
there and run with ``podman exec`` (tests/test_image.py). Inside a container it
also reports the training workers and the app's user, read from /proc.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import urllib.request
from pathlib import Path

from harness.sessions import Session


class GraphSession(Session):
    """A Session that also keeps every graph view's payload it is sent."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.graphs: list[dict] = []

    def _see_element(self, el, fragment_id: str = "") -> None:
        if el.WhichOneof("type") == "bidi_component" and "graph_view" in el.bidi_component.component_name:
            data = json.loads(el.bidi_component.json)
            while isinstance(data, str):  # the app sends the payload as JSON text
                data = json.loads(data)
            self.graphs.append(data.get("data", data))
        super()._see_element(el, fragment_id)


def health(base: str) -> str:
    with urllib.request.urlopen(f"{base}/_stcore/health", timeout=10) as r:
        return r.read().decode()


async def playground(base: str, seq_len: int, session: GraphSession | None = None) -> dict:
    """Open the Playground at ``seq_len`` -> its graph's size, the replica it came from, errors."""
    s = session or GraphSession(base, "playground", query={"seq_len": str(seq_len)})
    await s.open()
    try:
        out = await s.run()
    finally:
        await s.close()
    graph = next((g for g in s.graphs if "nodes" in g), None)
    return {"ok": out.ok, "errors": out.errors, "seconds": round(out.seconds, 3),
            "nodes": len(graph["nodes"]["id"]) if graph else 0,
            "steps": sorted({t for t in graph["nodes"]["step"] if t is not None}) if graph else [],
            "replica": s.replica}


def processes() -> list[dict]:
    """Every process this one can see: pid, uid, command line (inside a container: the app's)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            uid = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                       if line.startswith("Uid:"))
        except (OSError, StopIteration):
            continue
        out.append({"pid": int(pid), "uid": uid, "cmd": cmd})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url")
    ap.add_argument("--seq-len", type=int, default=8)
    ap.add_argument("--processes", action="store_true", help="also list /proc (inside a container)")
    args = ap.parse_args()
    report = {"health": health(args.url), "playground": asyncio.run(playground(args.url, args.seq_len))}
    if args.processes:
        report["processes"] = processes()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
