"""What learners write next runs in the sandbox as in a plain Python: any installed module,
files in the run's own folder, training loops with any optimizer, init functions under the
line recorder, and one graph recorded at each backward().

Each is checked against the same code run here, in the test's own process, outside the
sandbox: the same printed text, the same values, the same graphs as torch walks them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest
import torch
from torch import nn

from harness.autograd import ops_by_type
from harness.helpers import ROOT
from harness.learners import here
from stockdemo.graph.recorder import CODE_FILE, LineRecorder
from stockdemo.sandbox import SEED_CODE, Limits, run_code

INITS = ("orthogonal_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
         "trunc_normal_")


@pytest.mark.parametrize("init", INITS)
def test_an_init_function_gives_the_same_weights_under_the_line_recorder(init):
    def weights(recorded: bool) -> torch.Tensor:
        torch.manual_seed(0)
        layer = nn.Linear(6, 4)
        if recorded:
            with LineRecorder(is_callers=lambda f: f == CODE_FILE):
                getattr(nn.init, init)(layer.weight)
        else:
            getattr(nn.init, init)(layer.weight)
        return layer.weight.detach().clone()

    assert torch.equal(weights(recorded=True), weights(recorded=False))


@pytest.mark.parametrize("init", INITS)
def test_an_init_function_runs_in_the_sandbox_as_here(init):
    source = SEED_CODE + f"nn.init.{init}(model.fc.weight)\nprint(model.fc.weight.sum().item())\n" \
                         "predictions = model(input_data)\n"
    run = run_code(source)
    namespace, raised, printed = here(source)
    assert raised is None and run.ok, run.message
    assert run.printed == printed


def test_a_view_made_under_no_grad_and_changed_in_place_is_left_alone_by_the_recorder():
    # nn.init.orthogonal_'s pattern, written out: the view's grad_fn is never asked for.
    w = torch.randn(3, 3, requires_grad=True)
    with LineRecorder(), torch.no_grad():
        w.view_as(w).copy_(torch.eye(3))
        w.mul_(2)
    assert torch.equal(w.detach(), 2 * torch.eye(3))


def test_files_written_in_the_runs_own_folder_read_back_and_torch_save_and_load_work(tmp_path, monkeypatch):
    source = SEED_CODE + """
with open("notes.txt", "w") as f:
    f.write(f"loss {predictions.pow(2).mean().item():.6f}")
print(open("notes.txt").read())
torch.save(model.state_dict(), "model.pt")
again = StockPredictor(input_dim=3, hidden_dim=10, num_layers=1, output_dim=1)
again.load_state_dict(torch.load("model.pt"))
print(torch.equal(again(input_data), predictions))
"""
    run = run_code(source)
    monkeypatch.chdir(tmp_path)  # here, the same files in a folder of the test's own
    _, raised, printed = here(source)
    assert raised is None and run.ok, run.message
    assert run.printed == printed
    assert printed.splitlines()[-1] == "True"


def test_a_file_is_not_kept_for_the_next_run():
    source = SEED_CODE + """
import os
print(sorted(os.listdir(".")))
open("kept.txt", "w").write("for the next run")
"""
    first, second = run_code(source), run_code(source)
    assert first.ok and second.ok, (first.message, second.message)
    assert first.printed.splitlines()[-1] == second.printed.splitlines()[-1] == "[]"


def test_a_file_past_the_size_limit_stops_the_run_at_that_limit():
    run = run_code("with open('big.bin', 'wb') as f:\n    f.write(b'x' * (3 * 2**20))\n", Limits(file_mb=2))
    assert run.status == "limit" and run.error.limit == "file_mb", run.message
    assert "file size limit (2 MB" in run.message


def test_an_installed_module_imports_as_in_a_plain_python():
    source = SEED_CODE + """
import pandas as pd
import statistics
frame = pd.DataFrame(predictions.detach().numpy(), columns=["price"])
print(frame.describe().loc["mean", "price"].round(6), statistics.mean([1, 2, 3]))
"""
    run = run_code(source, Limits(cpu_s=5, wall_s=20))
    _, raised, printed = here(source)
    assert raised is None and run.ok, run.message
    assert run.printed == printed


def test_reading_outside_its_folder_gets_pythons_error_and_the_line_that_says_why():
    run = run_code("print(open('/etc/passwd').read())\n")
    assert run.status == "refused" and run.error.type == "PermissionError", run.message
    assert "no files but its own" in run.message


@pytest.mark.parametrize("optimizer", ["SGD(model.parameters(), lr=0.1, momentum=0.9)",
                                       "Adam(model.parameters(), lr=0.01)",
                                       "Adadelta(model.parameters())"])
def test_a_training_loop_prints_the_same_losses_and_records_one_graph_per_backward(optimizer):
    source = SEED_CODE + f"""
opt = torch.optim.{optimizer}
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
for step in range(5):
    predictions = model(input_data)
    loss = predictions.pow(2).mean()
    print(f"step {{step}}: loss {{loss.item():.6f}}")
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
"""
    run = run_code(source)
    namespace, raised, printed = here(source)
    assert raised is None and run.ok, run.message
    assert run.printed == printed
    assert run.built == 5 and len(run.film) == 5 and run.graph_freed
    assert Counter(n["op"] for n in run.film[-1]["nodes"]) == Counter(ops_by_type(namespace["loss"]))
    assert run.ops_by_type == ops_by_type(namespace["predictions"])
    assert "This run built 5 graphs, each freed by its backward()" in run.film_words


def test_graphs_past_twenty_are_counted_not_drawn_and_the_node_limit_is_over_all_of_them():
    source = SEED_CODE + """
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(30):
    opt.zero_grad()
    model(input_data).pow(2).mean().backward()
    opt.step()
"""
    run = run_code(source)
    assert run.ok, run.message
    assert run.built == 30 and len(run.graphs) == 20
    assert "30 graphs" in run.film_words and "20 are drawn" in run.film_words
    small = run_code(source, Limits(graph_nodes=200))
    assert small.ok, small.message
    assert sum(len(g["nodes"]) for g in small.graphs) + len(small.graph["nodes"]) <= 200
    assert 0 < len(small.graphs) < 20


def test_a_hundred_training_steps_of_the_seed_run_within_the_cpu_limit():
    source = SEED_CODE + """
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(100):
    opt.zero_grad()
    loss = model(input_data).pow(2).mean()
    loss.backward()
    opt.step()
print(f"{loss.item():.6f}")
"""
    run = run_code(source, Limits(wall_s=30))
    _, raised, printed = here(source)
    assert run.ok, run.message
    assert run.printed == printed and run.built == 100
    assert run.cpu_s < Limits().cpu_s


def test_the_command_line_runs_an_lbfgs_closure_loop_and_lists_its_graphs(tmp_path):
    script = tmp_path / "lbfgs.py"
    script.write_text(SEED_CODE + """
opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=4)

def closure():
    opt.zero_grad()
    loss = model(input_data).pow(2).mean()
    loss.backward()
    return loss

for step in range(2):
    print(f"step {step}: loss {opt.step(closure).item():.6f}")
""")
    done = subprocess.run([sys.executable, "-m", "stockdemo", "code", str(script)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "ok" and result["backward_calls"] >= 2
    assert len(result["graphs"]) == min(result["backward_calls"], 20) + 1  # and predictions' graph
    assert all(g["freed_by_backward"] for g in result["graphs"][:-1])
    assert result["graphs"][-1]["freed_by_backward"] is False
