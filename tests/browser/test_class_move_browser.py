"""The class bar's mover in a real browser: its JavaScript drops the balancer's cookie and reloads.

The rebalancing around it (a replica over its share picks the tabs, HAProxy sends each
reloaded tab to the replica with the fewest connections) is tested through make serve in
tests/test_serve.py, whose protocol clients do what this JavaScript does.
"""

from __future__ import annotations

from playwright.sync_api import expect

from harness.helpers import ROOT, free_port, start_server, stop_server
from stockdemo.ui.classmode.mover import AFFINITY_COOKIE

APP = ROOT / "tests" / "browser" / "apps" / "class_move_app.py"


def test_the_mover_reloads_the_tab_without_the_affinity_cookie_keeping_its_address(page):
    port = free_port()
    proc = start_server(port, script=APP)
    try:
        base = f"http://127.0.0.1:{port}"
        page.context.add_cookies([{"name": AFFINITY_COOKIE, "value": "r2", "url": base},
                                  {"name": "other", "value": "kept", "url": base}])
        loads = []
        page.on("load", lambda: loads.append(page.url))
        page.goto(f"{base}/?class=ABCDEFGH&seat=my-seat")
        expect(page.get_by_text("Arrived without the cookie, seat my-seat.")).to_be_visible(timeout=60_000)
        cookies = {c["name"]: c["value"] for c in page.context.cookies(base)}
        assert AFFINITY_COOKIE not in cookies and cookies["other"] == "kept"
        assert len(loads) >= 2  # it reloaded, at the same address
        assert loads[-1] == f"{base}/?class=ABCDEFGH&seat=my-seat"
        assert not page.console_errors, page.console_errors
    finally:
        stop_server(proc)
