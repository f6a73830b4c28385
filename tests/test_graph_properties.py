"""Properties of captured graphs over random valid configs (hypothesis)."""

from collections import Counter, defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stockdemo import RunConfig, graph_diff, run
from stockdemo.cells import CELLS

configs = st.builds(
    RunConfig,
    seq_len=st.integers(1, 12),
    hidden_size=st.integers(1, 8),
    num_layers=st.integers(1, 3),
    batch_size=st.integers(1, 4),
    input_size=st.integers(1, 4),
    cell=st.sampled_from(CELLS),
    seed=st.integers(0, 10_000),
)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def is_acyclic(nodes, edges) -> bool:
    indegree = Counter(dst for _, dst in edges)
    out = defaultdict(list)
    for src, dst in edges:
        out[src].append(dst)
    ready = [n.id for n in nodes if indegree[n.id] == 0]
    visited = 0
    while ready:
        node = ready.pop()
        visited += 1
        for nxt in out[node]:
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
    return visited == len(nodes)


@SETTINGS
@given(configs)
def test_graph_is_acyclic_and_every_parameter_appears_once(config):
    result = run(config)
    graph = result.graph
    assert is_acyclic(graph.nodes, graph.edges)
    ids = [n.id for n in graph.nodes]
    assert len(ids) == len(set(ids))
    params = Counter(n.param for n in graph.nodes if n.kind == "parameter")
    assert params == Counter(name for name, _ in result.model.named_parameters())
    assert all(src in set(ids) and dst in set(ids) for src, dst in graph.edges)


@SETTINGS
@given(configs)
def test_ids_are_stable_and_the_diff_of_identical_runs_is_empty(config):
    a, b = run(config).graph, run(config).graph
    assert [n.id for n in a.nodes] == [n.id for n in b.nodes]
    assert graph_diff(a, b).is_empty


@SETTINGS
@given(configs.filter(lambda c: 2 <= c.seq_len < 12))
def test_one_more_step_adds_the_same_block_once_per_layer(config):
    before = run(config).graph
    after = run(config.replace(seq_len=config.seq_len + 1)).graph
    diff = graph_diff(before, after)
    assert not diff.removed_nodes
    if after.meta["fused"]:
        assert not diff.added_nodes  # one fused node per layer, whatever T
        return
    added = defaultdict(Counter)
    for n in diff.added_nodes:
        assert n.step == config.seq_len
        added[n.layer][n.op] += 1
    assert set(added) == set(range(config.num_layers))
    for layer, block in added.items():
        previous_step = Counter(n.op for n in after.op_nodes
                                if n.layer == layer and n.step == config.seq_len - 1)
        assert block == previous_step
