"""The app as Streamlit Community Cloud's smallest host runs it: 690 MiB and one CPU (a cgroup).

`streamlit run app.py` inside a cgroup v1 of 690 MiB and a one-CPU quota (harness/cgroups.py),
toured in Chromium: every page, Your code with two ready-made edits, one training run.
Before #44 the kernel killed the server on the fourth page (two training workers, each its
own torch); the server must live, with no OOM kill at all, and train in a worker forked by
its one fork server.
"""

from __future__ import annotations

import re
import subprocess

import pytest
from playwright.sync_api import expect

from harness.cgroups import SmallHost, available, memory_by_process, oom_score_adj, parent_of
from harness.drive import wait_for_run
from harness.helpers import ROOT, free_port, server_command, stop_server, wait_healthy
from stockdemo.ui import PAGES, page_url

pytestmark = pytest.mark.browser
LIMIT_MIB = 690
EDITS = ("skip connection", "if on the data")


@pytest.fixture(scope="module")
def small_host():
    why = available()
    if why:
        pytest.fail(f"this test simulates a small host with a cgroup: {why}")
    box = SmallHost(f"stockdemo-test-{free_port()}", LIMIT_MIB, 1.0)
    port = free_port()
    proc = subprocess.Popen(server_command(port), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, preexec_fn=box.join)
    try:
        wait_healthy(proc, port, timeout=120)
        yield box, proc, f"http://127.0.0.1:{port}"
    finally:
        stop_server(proc)
        box.remove()


def test_a_tour_in_690_mib_and_one_cpu_trains_in_a_forked_worker_the_server_alive_and_no_oom_kill(
        small_host, page):
    box, proc, url = small_host
    for path, title, _ in PAGES:
        if not (ROOT / path).exists():
            continue
        page.goto(url + page_url(path))
        wait_for_run(page)
        if path == "pages/code.py":
            view = page.locator("[data-testid='graph-view']")
            expect(view).to_have_attribute("data-drawn-graph", re.compile(r".+"), timeout=60_000)
            for edit in EDITS:
                before = view.get_attribute("data-drawn-graph")
                page.get_by_role("radio", name=edit, exact=True).click()
                expect(view).not_to_have_attribute("data-drawn-graph", before, timeout=60_000)
        elif path == "pages/train.py":
            page.get_by_role("button", name="Train").click()
            page.wait_for_selector("[data-testid='stDataFrame']", timeout=120_000)
        assert proc.poll() is None, f"the server died on {title}"
    assert box.oom_kills() == 0, f"{box.oom_kills()} OOM kill(s); peak {box.peak_mib():.0f} MiB"
    assert box.peak_mib() < LIMIT_MIB
    roles = {who: pid for who, pid, _ in memory_by_process(proc.pid)}
    # The training ran in a worker that the fork server forked, not in a thread of the server.
    assert parent_of(roles["training worker"]) == roles["fork server"], roles
    # Were memory to run short, the fork server and what it forks would go first.
    assert oom_score_adj(roles["fork server"]) == oom_score_adj(roles["training worker"]) == 1000
    assert oom_score_adj(proc.pid) == 0
