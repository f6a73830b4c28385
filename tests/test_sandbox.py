"""The sandbox with ordinary code: the seed, prints, errors on the learner's line, limits, the pool.

Hostile code has its own suite (tests/test_sandbox_hostile.py). Here every
answer is checked against torch or Python themselves, run in this process on
the same code: the graph's ops by type against a plain walk of
``grad_fn.next_functions``, error messages against the exception raised here.
"""

from __future__ import annotations

import contextlib
import json
import linecache
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from harness.autograd import ops_by_type
from harness.cgroups import children, seccomp_mode
from harness.helpers import ROOT, alive, command_lines, wait_until
from harness.learners import SHAPE_ERROR, here
from stockdemo.code.drawing import graph_dot
from stockdemo.forkserver import ForkServer, clean_env
from stockdemo.graph.ids import graph_of_record
from stockdemo.graph.recorder import raw_graph
from stockdemo.sandbox import OFF_MESSAGE, SEED_CODE, CodePool, Limits, code_enabled, run_code
from stockdemo.sandbox.limits import SPECS
from stockdemo.sandbox.protocol import BadResult, check_child_result

LOOP = '''\
import torch
from torch import nn

cell = nn.RNNCell(3, 10)
fc = nn.Linear(10, 1)
x = torch.randn(10, 7, 3)
h = torch.zeros(10, 10)
for t in range(x.shape[1]):
    h = cell(x[:, t], h)
    print("step", t, "norm", round(h.norm().item(), 3))
predictions = fc(h)
'''


def test_the_seed_runs_and_its_graph_has_the_ops_autograd_recorded_here():
    run = run_code(SEED_CODE)
    namespace, _, _ = here(SEED_CODE)
    assert run.ok, run.message
    assert run.shape == tuple(namespace["predictions"].shape) == (10, 1)
    assert run.ops_by_type == ops_by_type(namespace["predictions"])
    assert len(run.graph["nodes"]) == sum(ops_by_type(namespace["predictions"]).values())
    # counted as every page counts: and the data where it enters (input_data), and the output
    assert run.to_dict()["nodes"] == sum(ops_by_type(namespace["predictions"]).values()) + 2
    assert run.walls.startswith("landlock") or run.walls == "no landlock"


def test_the_seed_gives_the_same_numbers_as_in_this_process():
    run = run_code(SEED_CODE + "print(predictions.sum().item())\n")
    namespace, _, _ = here(SEED_CODE)
    assert float(run.printed.split()[-1]) == pytest.approx(namespace["predictions"].sum().item(), abs=1e-6)


def test_the_runs_backward_replay_is_the_one_code_graph_records_here():
    run = run_code(SEED_CODE)
    namespace, _, _ = here(SEED_CODE)
    replay = raw_graph(namespace["predictions"], replay=True)["replay"]
    assert [i for i, _ in run.graph["replay"]["backward"]] == [i for i, _ in replay["backward"]]
    assert [norm for _, norm in run.graph["replay"]["backward"]] == pytest.approx(
        [norm for _, norm in replay["backward"]], rel=1e-5)
    assert run.graph["replay"]["second_error"] == replay["second_error"]


def test_an_in_place_change_shows_the_error_backward_raises():
    source = ("import torch\nw = torch.ones(3, requires_grad=True)\ny = w.exp()\ny.add_(1)\n"
              "predictions = y * 2\n")
    run = run_code(source)
    namespace, _, _ = here(source)
    with pytest.raises(RuntimeError) as raised:
        namespace["predictions"].sum().backward()
    assert run.ok and run.graph["replay"]["error"] == str(raised.value)


def test_a_print_in_the_loop_prints_one_line_per_step_and_tags_nodes_with_the_loop():
    run = run_code(LOOP)
    namespace, _, printed = here(LOOP)
    assert run.ok, run.message
    assert run.printed == printed  # the same numbers: every run starts from torch.manual_seed(0)
    assert [line.split()[:2] for line in run.printed.splitlines()] == [["step", str(t)] for t in range(7)]
    assert run.ops_by_type == ops_by_type(namespace["predictions"])
    loop_line = LOOP.splitlines().index("for t in range(x.shape[1]):") + 1
    iterations = {n["loops"][-1][2] for n in run.graph["nodes"] if n["loops"]}
    assert iterations == set(range(7))
    assert {n["loops"][-1][1] for n in run.graph["nodes"] if n["loops"]} == {loop_line}


def test_a_shape_error_carries_torchs_message_the_learners_line_and_what_was_printed():
    run = run_code(SHAPE_ERROR)
    _, raised, _ = here(SHAPE_ERROR)
    assert run.status == "error"
    assert run.error.type == type(raised).__name__ == "RuntimeError"
    assert run.error.message == str(raised)
    # The innermost line of the learner's code: the call in forward, not a frame of torch's.
    assert run.error.line == SHAPE_ERROR.splitlines().index("        return self.fc(x)") + 1
    assert run.printed == "before the error\n"


@pytest.mark.parametrize("source, kind, line, words", [
    ("x = 1 +\n", "SyntaxError", 1, "invalid syntax"),
    ("import torch\ny = torch.ones(2)\nz = undefined_name + y\n", "NameError", 3, "undefined_name"),
    ("import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n"
     "        y = x * 2\n\n\npredictions = M()(torch.ones(2))\n", "TypeError", 10, "does forward end with"),
    ("import torch\nw = torch.ones(2, requires_grad=True)\nwith torch.no_grad():\n"
     "    predictions = w * 2\n", "RuntimeError", 4, "does not have a grad_fn"),
    ("import torch\nresult = torch.ones(2, requires_grad=True) * 2\n", "NameError", None, "predictions"),
])
def test_errors_name_their_type_their_words_and_the_learners_line(source, kind, line, words):
    run = run_code(source)
    assert run.status == "error", run.message
    assert (run.error.type, run.error.line) == (kind, line)
    assert words in run.error.message


def test_a_name_error_says_what_python_says():
    source = "a = 1\nprint(a)\nprint(b)\n"
    run = run_code(source)
    _, raised, _ = here(source)
    assert run.error.message == str(raised) and run.printed == "1\n"


def test_the_graph_limit_stops_a_long_loop_of_additions():
    source = "import torch\nx = torch.zeros(1, requires_grad=True)\nfor _ in range(10**6):\n    x = x + 1\n"
    run = run_code(source, Limits(graph_nodes=500, wall_s=30, cpu_s=20))
    assert (run.status, run.error.limit, run.error.line) == ("limit", "graph_nodes", 4)
    assert "graph size limit (500 nodes in the autograd graph)" in run.message
    assert run.seconds < 10


def test_a_graph_over_the_limit_at_the_end_is_refused_too():
    # One call makes the whole graph: the recorder sees it only once it returns.
    source = ("import torch\nrnn = torch.nn.RNN(3, 4)\npredictions = rnn(torch.randn(400, 1, 3))[0]\n")
    run = run_code(source, Limits(graph_nodes=500))
    assert (run.status, run.error.limit) == ("limit", "graph_nodes")


def test_the_child_holds_the_limits_it_was_given():
    source = ("import resource\nfor name in ('RLIMIT_CPU', 'RLIMIT_FSIZE', 'RLIMIT_NOFILE', 'RLIMIT_CORE'):\n"
              "    print(name, *resource.getrlimit(getattr(resource, name)))\n")
    run = run_code(source, Limits(cpu_s=3, file_mb=2))
    assert run.printed.splitlines() == ["RLIMIT_CPU 3 3", f"RLIMIT_FSIZE {2 * 2**20} {2 * 2**20}",
                                        "RLIMIT_NOFILE 16 16",
                                        "RLIMIT_CORE 0 0"]


def test_the_runs_environment_is_the_sandboxs_own_and_not_the_servers(monkeypatch):
    monkeypatch.setenv("STOCKDEMO_TEST_SERVER_SECRET", "hunter2")
    run = run_code("import os\nprint(sorted(os.environ))\n")
    assert run.printed.strip() == str(sorted({*clean_env(), "TMPDIR"}))  # TMPDIR: the run's own folder


def test_the_code_length_limit_refuses_without_running():
    run = run_code("print(1)\n" * 3000, Limits(code_chars=1000))
    assert (run.status, run.error.limit) == ("limit", "code_chars")
    assert "27,000 characters" in run.message and run.printed == ""


def test_the_operator_turns_the_feature_off(monkeypatch):
    monkeypatch.setenv("STOCKDEMO_CODE", "off")
    assert not code_enabled()
    run = run_code(SEED_CODE)
    assert (run.status, run.error.message) == ("unavailable", OFF_MESSAGE)


def test_an_operators_bad_limit_is_named_and_nothing_runs(monkeypatch):
    monkeypatch.setenv("STOCKDEMO_CODE_CPU_S", "lots")
    run = run_code(SEED_CODE)
    assert run.status == "unavailable"
    assert "STOCKDEMO_CODE_CPU_S='lots' is not a number" in run.message


@pytest.mark.parametrize("raw, ok", [("3", True), ("0", False), ("61", False), ("2.5", False), ("", True)])
def test_limits_from_the_environment_keep_to_their_bounds(raw, ok):
    if ok:
        assert Limits.from_env({"STOCKDEMO_CODE_CPU_S": raw}).cpu_s == (int(raw) if raw else Limits().cpu_s)
    else:
        with pytest.raises(ValueError, match="STOCKDEMO_CODE_CPU_S"):
            Limits.from_env({"STOCKDEMO_CODE_CPU_S": raw})


def test_every_limit_reads_in_words():
    words = Limits().words()
    for spec in SPECS:
        assert Limits().text(spec.name) in words
    assert words.startswith("2 s of CPU time, 256 MB of memory")


def test_the_readme_states_the_limits_the_code_applies():
    readme = " ".join((ROOT / "README.md").read_text().replace("**", "").split())
    assert Limits().words() in readme


def test_the_protocol_rejects_what_a_tampered_child_might_send():
    good = run_code(SEED_CODE).wire()
    child = {k: good[k] for k in ("error", "shape", "graph", "refused", "walls")}
    assert check_child_result(json.dumps(child).encode(), Limits())["graph"] == good["graph"]
    bad_edge = json.loads(json.dumps(child))
    bad_edge["graph"]["edges"].append([0, 10**6])
    extra = {**child, "pickle": "x"}
    too_big = json.loads(json.dumps(child))
    too_big["graph"]["nodes"] *= 400
    for data in (b"not json", b"[" * 100_000, json.dumps(bad_edge).encode(), json.dumps(extra).encode(),
                 json.dumps(too_big).encode()):
        with pytest.raises(BadResult):
            check_child_result(data, Limits(graph_nodes=10_000))


CLOSES_ITS_PIPES = """\
import os
for fd in range(3, 256):
    try:
        os.close(fd)
    except OSError:
        pass
os._exit(7)
"""


def test_a_run_that_closes_its_pipes_without_a_result_is_answered_at_its_exit_with_its_exit_code():
    # A run is answered when both its pipes close only if its result is whole; otherwise its
    # exit says what ended it (here exit code 7, which an answer at the pipes' end could not know).
    run = run_code(CLOSES_ITS_PIPES)
    assert run.error is not None and run.error.type == "BadResult", run.message
    assert "exit code 7" in run.error.message


GETPID = "import os\nprint(os.getpid())\n" + SEED_CODE


def _waiting(parent: int, ran: int) -> set[int]:
    """The fork server's children once ``ran`` (a run's child) is gone, each walled in: the spare
    forked after that run's answer among them (and other pools' spares: the fork server is shared)."""
    wait_until(lambda: ran not in children(parent), 10, "the run's child gone")
    kids = set(children(parent))
    wait_until(lambda: all(seccomp_mode(k) in (2, None) for k in kids), 10, "the spares walled in")
    return kids


def test_the_next_run_goes_to_a_child_forked_and_walled_in_before_its_code_came_if_its_limits_match():
    # A fork server of its own: the shared one also forks training workers, never walled in.
    forks = ForkServer()
    pool = CodePool(slots=1, forks=forks)
    try:
        run = pool.run(GETPID, Limits())
        parent = pool.status()["pid"]
        for limits, reused in ((Limits(), True), (Limits(wall_s=4), False)):  # other limits: a new child
            assert run.ok, run.message
            waiting = _waiting(parent, int(run.printed.split()[0]))
            run = pool.run(GETPID, limits)
            assert run.ok, run.message
            assert (int(run.printed.split()[0]) in waiting) is reused
    finally:
        pool.close()
        forks.close()


def test_a_full_queue_is_refused_at_once_and_a_killed_parent_is_replaced():
    pool = CodePool(slots=1, max_waiting=0)
    try:
        assert pool.run(SEED_CODE, Limits()).ok
        parent = pool.status()["pid"]
        import threading

        # a program that sleeps on purpose: it holds the one place until its wall clock ends
        slow = threading.Thread(target=pool.run, args=("import time\ntime.sleep(100)\n", Limits(wall_s=3)))
        slow.start()
        wait_until(lambda: pool.status()["running"] == 1, 30, "the slow run in the one place")
        started = time.monotonic()
        refused = pool.run(SEED_CODE, Limits())
        assert refused.status == "unavailable" and "Every place in the sandbox is taken" in refused.message
        assert time.monotonic() - started < 0.5
        slow.join()
        os.kill(parent, signal.SIGKILL)
        wait_until(lambda: not alive(parent), 10, "the killed parent dead")
        again = pool.run(SEED_CODE, Limits())
        assert again.ok, again.message
        assert pool.status()["pid"] != parent
    finally:
        pool.close()


def test_the_warm_parent_has_none_of_the_servers_environment(monkeypatch):
    monkeypatch.setenv("STOCKDEMO_TEST_SERVER_SECRET", "hunter2")
    pool = CodePool(slots=1)
    try:
        assert pool.run(SEED_CODE, Limits()).ok
        environ = open(f"/proc/{pool.status()['pid']}/environ", "rb").read().split(b"\0")
        assert {e.split(b"=")[0].decode() for e in environ if e} == set(clean_env())
    finally:
        pool.close()


def _wait_until_spinning(procs: list[subprocess.Popen], timeout: float = 10.0) -> None:
    """Until each process has used some CPU (/proc/PID/stat's utime): Python started, loop running."""
    deadline = time.monotonic() + timeout
    while any(int(open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()[11]) < 5 for p in procs):
        assert time.monotonic() < deadline, "the spinning processes never ran"


@contextlib.contextmanager
def _pool_beside_busy_cores():
    """A warm one-place pool, then every core spun by an ordinary process (pages at work),
    spinning before the test's run forks -> the pool; all stopped after."""
    pool = CodePool(slots=1)
    spinners = []
    try:
        assert pool.run(SEED_CODE, Limits()).ok
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                    for _ in os.sched_getaffinity(0)]
        _wait_until_spinning(spinners)
        yield pool
    finally:
        for p in spinners:
            p.kill()
            p.wait()
        pool.close()


def test_a_learners_run_takes_only_cpu_nobody_else_wants():
    """Past its grace of CPU (0.1 s) the child runs in the idle class, its session's group at
    nice 19, seen from outside: an endless loop yields to every page."""
    import threading

    pool = CodePool(slots=1)
    try:
        assert pool.run(SEED_CODE, Limits()).ok
        parent = pool.status()["pid"]
        spare = set(children(parent))  # forked after that answer for the next run (watch.Spare)
        loop = threading.Thread(target=pool.run, args=("while True:\n    pass\n", Limits(cpu_s=2, wall_s=3)))
        loop.start()
        deadline = time.monotonic() + 2
        policies: dict[int, int] = {}
        while os.SCHED_IDLE not in policies.values() and time.monotonic() < deadline:  # the fork first
            with contextlib.suppress(OSError):
                policies = {pid: os.sched_getscheduler(pid) for pid in children(parent) if pid not in spare}
        assert set(policies.values()) == {os.SCHED_IDLE}, f"the running child's policy: {policies}"
        child = next(iter(policies))
        if os.path.exists(f"/proc/{child}/autogroup"):  # sessions grouped: its own group weighs least
            assert open(f"/proc/{child}/autogroup").read().split()[-1] == "19"
        assert os.sched_getscheduler(parent) == os.SCHED_OTHER  # the parent itself still answers at once
        loop.join()
    finally:
        pool.close()


def test_a_run_starved_by_busy_pages_is_told_the_server_was_busy_not_that_its_code_was_slow():
    """Every core spun by ordinary processes (pages at work): the idle-class run waits past the
    wall clock, and its message blames the busy server, with the seconds it waited."""
    with _pool_beside_busy_cores() as pool:
        # Half a second of CPU: done in about that alone, starved past 2 s beside the spinners.
        run = pool.run("import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5:\n"
                       "    pass\n", Limits(wall_s=2))
        assert run.error is not None and run.error.limit == "wall_s", run.message
        assert "the server was busy with other pages" in run.message and "Try again" in run.message, \
            (run.message, run.seconds, run.cpu_s)
        assert "a sleep, a wait" not in run.message


def test_a_short_program_beside_busy_pages_runs_in_its_grace_and_is_not_starved():
    """A class's program (about 85 ms of CPU, its start included) with every core spun by
    ordinary processes: it runs at their priority for its first 0.1 s of CPU and ends well
    within a 1 s wall clock (idle-class from its start it took 1-2 s here, and was stopped)."""
    with _pool_beside_busy_cores() as pool:
        run = pool.run("import time\nt = time.process_time()\nwhile time.process_time() - t < 0.06:\n"
                       "    pass\npredictions = None\n", Limits(wall_s=1))
        assert run.error is not None and run.error.limit is None, run.message  # it ran to its end


def test_a_sleep_past_the_wall_clock_is_still_named_as_the_codes_own_wait():
    pool = CodePool(slots=1)
    try:
        run = pool.run("import time\ntime.sleep(30)\n", Limits(wall_s=1))  # the sleep is the code under test
        assert run.error is not None and run.error.limit == "wall_s"
        assert "a sleep, a wait, or a long loop" in run.message and "busy" not in run.message
    finally:
        pool.close()


def test_the_loop_is_drawn_as_one_block_per_step():
    run = run_code(LOOP)
    graph = graph_of_record(run.graph)
    assert sorted({n.step for n in graph.nodes if n.step is not None}) == list(range(7))
    dot = graph_dot(run.graph)
    assert dot.startswith("digraph your_code") and dot.count("pos=") >= len(run.graph["nodes"])


EXIT_CASES = [(SEED_CODE, 0), (SHAPE_ERROR, 1), ("while True:\n    pass\n", 1)]


@pytest.fixture(scope="module")
def command_line(tmp_path_factory) -> dict:
    """Every command line this module checks, each its own process, all run at once -> the
    finished processes by name (an exit case's by its source), and the handout's path."""
    folder = tmp_path_factory.mktemp("command_line")
    runs = {}
    for i, (source, _) in enumerate(EXIT_CASES):
        (folder / f"code{i}.py").write_text(source)
        runs[source] = ["code", str(folder / f"code{i}.py")]
    (folder / "loop.py").write_text(LOOP)
    page = folder / "loop.html"
    runs |= {"missing": ["code", str(folder / "nope.py")], "bad_format": ["code", "x.py", "--format", "png"],
             "dot": ["code", str(folder / "loop.py"), "--format", "dot"],
             "html": ["code", str(folder / "loop.py"), "--format", "html", "-o", str(page)]}
    return {**command_lines(runs), "page": page}


@pytest.mark.parametrize("source, code", EXIT_CASES)
def test_the_command_line_exits_0_when_the_code_ran_and_1_when_it_failed(command_line, source, code):
    done = command_line[source]
    assert done.returncode == code, done.stderr
    result = json.loads(done.stdout)
    assert set(result) >= {"nodes", "edges", "ops_by_type", "printed", "shape", "error", "limits"}
    assert (result["error"] is None) == (code == 0)


def test_the_command_line_exits_2_on_bad_usage(command_line):
    missing, bad_format = command_line["missing"], command_line["bad_format"]
    assert (missing.returncode, bad_format.returncode) == (2, 2)
    assert "cannot read" in missing.stderr


def test_the_command_line_writes_the_graph_as_dot_and_as_a_handout(command_line):
    dot, html, page = command_line["dot"], command_line["html"], command_line["page"]
    assert dot.returncode == html.returncode == 0, dot.stderr + html.stderr
    assert dot.stdout.startswith("digraph your_code")
    assert "Content-Security-Policy" in page.read_text() and "nn.RNNCell(3, 10)" in page.read_text()
    # The facts above the graph count what its caption counts (the output's box too).
    text = page.read_text()
    nodes = re.search(r"<dt>Nodes</dt><dd>([\d,]+)</dd>", text).group(1)
    caption = re.search(r'data-testid="handout-caption">([\d,]+) nodes', text).group(1)
    assert nodes == caption


def test_linecache_of_the_server_is_untouched_by_runs():
    run_code(SEED_CODE)
    assert "<your code>" not in linecache.cache
