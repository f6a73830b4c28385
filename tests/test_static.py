"""torch.compile / torch.export captures: every outcome checked against torch run directly."""

import gc
import re
import threading
import weakref

import graphviz
import pytest
import torch
from torch._dynamo.testing import CompileCounter

from stockdemo import static_graphs as static
from stockdemo.config import RunConfig
from stockdemo.live.run import build
from stockdemo.render.dot import dot_id

DEFAULT = RunConfig()


def export_error_type(model: torch.nn.Module, x: torch.Tensor, **kwargs) -> str | None:
    """What torch.export does here, asked directly: None on success, else the exception's type."""
    try:
        torch.export.export(model, (x,), **kwargs)
    except Exception as error:
        return f"{type(error).__module__}.{type(error).__qualname__}"
    finally:
        torch._dynamo.reset()
    return None


def compiles_counted_by_torch(config: RunConfig, seq_lens: tuple[int, ...]) -> int:
    """Frames dynamo compiled for these lengths, counted by torch's own test backend."""
    _, model = build(config)
    counter = CompileCounter()
    with torch._dynamo.config.patch(allow_rnn=True):
        torch._dynamo.reset()
        compiled = torch.compile(model, backend=counter)
        with torch.no_grad():
            for seq_len in seq_lens:
                compiled(build(config.replace(seq_len=seq_len))[0])
        torch._dynamo.reset()
    return counter.frame_count


def test_compile_capture_counts_the_graphs_dynamo_compiles():
    seq_lens = (5, 6, 7, 5)
    capture = static.compile_capture(DEFAULT, seq_lens)
    expected = compiles_counted_by_torch(DEFAULT, seq_lens)
    assert len(capture.graphs) == expected == capture.frames_compiled
    assert capture.recompiles == expected - 1
    assert capture.steps[-1].graphs_so_far == expected


def test_returning_to_a_seen_length_reuses_its_graph():
    capture = static.compile_capture(DEFAULT, (5, 6, 5))
    first, _, back = capture.steps
    assert first.new_graph and not back.new_graph
    assert back.graph_index == first.graph_index
    assert capture.last_graph.input_shape() == str((10, 5, 3))


def test_each_captured_graph_has_its_own_fixed_input_shape():
    capture = static.compile_capture(DEFAULT, (4, 9))
    assert len(capture.graphs) == compiles_counted_by_torch(DEFAULT, (4, 9))
    if len(capture.graphs) == 2:  # one graph per length, each specialised to its T
        assert [g.input_shape() for g in capture.graphs] == [str((10, 4, 3)), str((10, 9, 3))]


def test_loop_model_graph_grows_with_seq_len_under_compile():
    config = RunConfig(cell="rnn_loop")
    capture = static.compile_capture(config, (3, 6))
    assert len(capture.graphs) == compiles_counted_by_torch(config, (3, 6))
    if len(capture.graphs) == 2:  # a graph per length: dynamo unrolled the Python loop each time
        short, long = capture.graphs

        def cell_calls(graph: static.StaticGraph) -> int:
            return sum(n for op, n in graph.ops_by_type.items() if "rnn_tanh_cell" in op)

        assert (cell_calls(short), cell_calls(long)) == (3, 6)


def test_compile_capture_leaves_dynamo_config_as_it_found_it():
    before = torch._dynamo.config.allow_rnn
    static.compile_capture(DEFAULT, (5,))
    assert torch._dynamo.config.allow_rnn == before


def test_parallel_captures_each_count_only_their_own_graphs():
    results: dict[str, static.CompileCapture] = {}

    def capture(name: str, seq_lens: tuple[int, ...]) -> None:
        results[name] = static.compile_capture(DEFAULT, seq_lens)

    threads = [threading.Thread(target=capture, args=("three", (5, 6, 7))),
               threading.Thread(target=capture, args=("one", (5, 5)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results["three"].graphs) == compiles_counted_by_torch(DEFAULT, (5, 6, 7))
    assert len(results["one"].graphs) == compiles_counted_by_torch(DEFAULT, (5, 5))


def test_a_session_keeps_its_graphs_between_calls():
    session = static.CompileSession(DEFAULT)
    steps = [session.call(seq_len) for seq_len in (5, 6, 7, 6)]
    assert [s.new_graph for s in steps] == [True, True, True, False]
    assert steps[-1].graph_index == steps[1].graph_index  # T = 6 ran the graph it captured
    capture = session.capture()
    assert len(capture.graphs) == compiles_counted_by_torch(DEFAULT, (5, 6, 7, 6))
    assert capture.seq_lens == (5, 6, 7) and capture.eager_calls == 0 and capture.warning is None


def test_past_the_recompile_limit_dynamo_warns_and_runs_eagerly():
    with torch._dynamo.config.patch(recompile_limit=2):
        session = static.CompileSession(DEFAULT)
        steps = [session.call(seq_len) for seq_len in (5, 6, 7, 8, 5)]
        expected = compiles_counted_by_torch(DEFAULT, (5, 6, 7, 8, 5))
    capture = session.capture()
    assert len(capture.graphs) == expected == 2 and capture.limit == 2
    assert [s.eager for s in steps] == [False, False, True, True, False]  # T = 5 keeps its graph
    assert "hit config.recompile_limit (2)" in capture.warning  # torch's own words
    assert "expected 6, actual 7" in capture.warning  # and its reason: the guard T = 7 failed
    assert capture.limit_reached and capture.eager_calls == 2
    assert "eagerly" in static.explain_recompiles(capture)
    assert [row["what dynamo did"] for row in static.compile_steps_table(capture)][2] == (
        "ran eagerly: recompile limit reached")


def test_each_session_counts_against_its_own_recompile_limit():
    with torch._dynamo.config.patch(recompile_limit=2):
        first, second = static.CompileSession(DEFAULT), static.CompileSession(DEFAULT)
        for seq_len in (5, 6):
            first.call(seq_len)
            second.call(seq_len + 10)
    for capture in (first.capture(), second.capture()):
        assert len(capture.graphs) == 2 and not capture.limit_reached


def test_a_dropped_session_takes_its_graphs_with_it():
    session = static.CompileSession(DEFAULT)
    session.call(5)
    code = session.model.forward.__code__
    assert len(torch._dynamo.eval_frame._debug_get_cache_entry_list(code)) == 1
    gone = weakref.ref(session)
    del session
    gc.collect()
    assert gone() is None
    assert torch._dynamo.eval_frame._debug_get_cache_entry_list(code) == []


def test_an_export_leaves_every_session_its_graphs():
    session = static.CompileSession(DEFAULT)
    session.call(5)
    static.export_cond_stop(DEFAULT.replace(seq_len=3))  # its torch.cond goes through dynamo
    assert not session.call(5).new_graph


def test_static_export_matches_torch_and_keeps_the_run_shapes():
    outcome = static.export_static(DEFAULT)
    x, model = build(DEFAULT)
    assert outcome.ok == (export_error_type(model, x) is None)
    if outcome.ok:
        assert outcome.graph.input_shape() == str((10, 5, 3))
        output_shapes = [op.shape for op in outcome.graph.ops if op.label == "aten.linear"]
        assert output_shapes == [str((10, 1))]


def test_dynamic_seq_len_export_reports_what_torch_raises():
    outcome = static.export_dynamic_seq_len(DEFAULT)
    x, model = build(DEFAULT)
    seq_len = torch.export.Dim("T", min=2, max=200)
    expected = export_error_type(model, x, dynamic_shapes={"x": {1: seq_len}})
    assert outcome.error_type == expected
    assert outcome.ok == (expected is None)
    if not outcome.ok:
        assert outcome.message and "TORCH_LOGS" not in outcome.message


def test_early_stop_model_records_graphs_of_different_lengths():
    calm, volatile = static.early_stop_eager(DEFAULT)
    assert calm.steps == DEFAULT.seq_len
    assert volatile.steps < calm.steps
    assert volatile.graph.stats["nodes"] < calm.graph.stats["nodes"]
    # Each step is one Addmm pair and a Tanh in autograd: the graphs count the steps run.
    for run in (calm, volatile):
        assert run.graph.stats["ops_by_type"]["Tanh"] == run.steps


def test_early_stop_steps_follow_the_hidden_norm_computed_by_hand():
    x, _ = build(DEFAULT)
    model = static.early_stop_model(DEFAULT)
    for run in static.early_stop_eager(DEFAULT):
        h = torch.zeros(DEFAULT.batch_size, DEFAULT.hidden_size)
        steps = 0
        with torch.no_grad():
            for t in range(DEFAULT.seq_len):
                h = model.cell(x[:, t, :] * run.scale, h)
                steps += 1
                if h.norm(dim=1).mean() > model.threshold:
                    break
        assert run.steps == steps


def test_early_stop_export_reports_what_torch_raises():
    outcome = static.export_early_stop(DEFAULT)
    x, _ = build(DEFAULT)
    expected = export_error_type(static.early_stop_model(DEFAULT), x)
    assert outcome.error_type == expected
    assert outcome.ok == (expected is None)


def test_cond_rewrite_export_matches_torch_and_agrees_with_eager():
    config = DEFAULT.replace(seq_len=3)
    outcome = static.export_cond_stop(config)
    x, _ = build(config)
    eager = static.early_stop_model(config)
    cond_model = static.CondStopRNN(config.input_size, config.hidden_size, eager.threshold, config.seed)
    expected = export_error_type(cond_model, x)
    assert outcome.error_type == expected
    if outcome.ok:
        assert outcome.graph.ops_by_type.get("cond") == config.seq_len
        assert "matched" in str(outcome.note) and "NOT" not in str(outcome.note)


def test_cond_model_computes_what_the_early_stop_model_computes():
    config = DEFAULT.replace(seq_len=4)
    x, _ = build(config)
    eager = static.early_stop_model(config)
    cond_model = static.CondStopRNN(config.input_size, config.hidden_size, eager.threshold, config.seed)
    for scale in (static.CALM_SCALE, static.VOLATILE_SCALE):
        with torch.no_grad():
            torch.testing.assert_close(cond_model(x * scale), eager(x * scale))


def test_condense_keeps_the_cause_and_drops_log_pointers():
    text = ("Constraints violated (T)! For more information, run with TORCH_LOGS=\"+dynamic\".\n"
            "  - You marked T as dynamic but your code specialized it to be a constant (5).\n\n"
            "For C++ stack trace, run with TORCHDYNAMO_EXTENDED_DEBUG_CPP=1\n"
            "The following call raised this error:\n  File \"x.py\", line 1")
    assert static.condense(text) == ("Constraints violated (T)!\n"
                                     "  - You marked T as dynamic but your code specialized it "
                                     "to be a constant (5).")


@pytest.mark.parametrize("cell", ["rnn", "lstm_loop"])
def test_fx_dot_draws_every_op_once_and_each_weight_per_use(cell):
    graph = static.compile_capture(RunConfig(cell=cell, seq_len=3), (3,)).last_graph
    dot = static.fx_dot(graph)
    labels = re.findall(r'\[label=("(?:[^"\\]|\\.)*"|[^ \]]+)', dot)
    assert all(not label.strip('"').startswith("\\n") for label in labels)
    assert len(labels) == static.drawn_node_count(graph)
    ops = [op for op in graph.ops if op.kind == "op"]
    assert all(f"{dot_id(op.name)} [label=" in dot for op in ops)


def test_fx_dot_is_the_graphviz_package_text_from_the_one_dot_writer():
    graph = static.compile_capture(RunConfig(cell="gru_loop", seq_len=2), (2,)).last_graph
    reference = graphviz.Digraph("fx")
    for kind, target, attrs in static.fx_statements(graph):
        if kind == "N":
            reference.node(target, **attrs)
        elif kind == "E":
            reference.edge(*target, **attrs)
        else:
            reference.attr(kind, **attrs)
    assert static.fx_dot(graph) == reference.source


def test_dynamic_seq_len_failure_is_classified_from_torchs_error_type():
    outcome = static.export_dynamic_seq_len(DEFAULT)
    x, model = build(DEFAULT)
    try:
        torch.export.export(model, (x,), dynamic_shapes={"x": {1: torch.export.Dim("T", min=2, max=200)}})
        raised = None
    except Exception as error:
        raised = error
    finally:
        torch._dynamo.reset()
    violated = (isinstance(raised, torch._dynamo.exc.UserError)
                and raised.error_type is torch._dynamo.exc.UserErrorType.CONSTRAINT_VIOLATION)
    assert (outcome.failure == static.SPECIALIZED) == violated
