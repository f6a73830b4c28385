"""What the host gives (cgroup v1 and v2, read from folders made here) and what the app sizes from it."""

from __future__ import annotations

import pytest

from stockdemo import host

MIB = 2**20
V1 = "4:memory:/app/web\n1:cpu:/app/web\n0::/\n"
V2 = "0::/app/web\n"


def v1_tree(tmp_path, limit: str, quota: str, period: str = "100000", parent_limit: str | None = None):
    mem = tmp_path / "memory" / "app" / "web"
    cpu = tmp_path / "cpu" / "app" / "web"
    mem.mkdir(parents=True)
    cpu.mkdir(parents=True)
    (mem / "memory.limit_in_bytes").write_text(limit)
    (tmp_path / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712")
    if parent_limit:
        (tmp_path / "memory" / "app" / "memory.limit_in_bytes").write_text(parent_limit)
    (cpu / "cpu.cfs_quota_us").write_text(quota)
    (cpu / "cpu.cfs_period_us").write_text(period)
    return tmp_path


def test_cgroup_v1_memory_limit_and_cpu_quota_are_read_from_the_process_folder(tmp_path):
    root = v1_tree(tmp_path, str(690 * MIB), "100000")
    assert host.cgroup_memory(root, V1) == (690 * MIB, "cgroup v1")
    assert host.cgroup_cpus(root, V1) == (1.0, "cgroup v1")


def test_cgroup_v1_a_tighter_limit_on_a_parent_folder_wins_and_no_quota_is_no_limit(tmp_path):
    root = v1_tree(tmp_path, "9223372036854771712", "-1", parent_limit=str(512 * MIB))
    assert host.cgroup_memory(root, V1) == (512 * MIB, "cgroup v1")
    assert host.cgroup_cpus(root, V1) is None


def test_cgroup_v1_in_a_container_reads_the_mount_itself_when_the_path_is_the_hosts(tmp_path):
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "memory.limit_in_bytes").write_text(str(700 * MIB))
    assert host.cgroup_memory(tmp_path, "4:memory:/docker/abc\n") == (700 * MIB, "cgroup v1")


def test_cgroup_v2_memory_max_and_cpu_max(tmp_path):
    folder = tmp_path / "app" / "web"
    folder.mkdir(parents=True)
    (folder / "memory.max").write_text(f"{2700 * MIB}\n")
    (folder / "cpu.max").write_text("7800 100000\n")
    (tmp_path / "app" / "memory.max").write_text("max\n")
    assert host.cgroup_memory(tmp_path, V2) == (2700 * MIB, "cgroup v2")
    assert host.cgroup_cpus(tmp_path, V2) == pytest.approx((0.078, "cgroup v2"))


def test_cgroup_v2_without_limits_is_none(tmp_path):
    folder = tmp_path / "app" / "web"
    folder.mkdir(parents=True)
    (folder / "memory.max").write_text("max\n")
    (folder / "cpu.max").write_text("max 100000\n")
    assert host.cgroup_memory(tmp_path, V2) is None
    assert host.cgroup_cpus(tmp_path, V2) is None


@pytest.mark.parametrize("memory_mib,cpus,training,places", [
    (690, 1, 1, 1),  # Community Cloud's smallest: one worker forked by the fork server; one run at a time
    (640, 1, 0, 1),  # smaller still: training in the server
    (1024, 1, 1, 1),
    (1024, 2, 2, 1),
    (2700, 2, 2, 2),
    (16384, 8, 8, 8),
])
def test_small_hosts_get_fewer_workers_and_places(memory_mib, cpus, training, places):
    limits = host.Limits(memory_mib * MIB, cpus, "test", "test")
    assert host.training_workers(limits) == training
    assert host.sandbox_places(limits) == places


def test_the_cache_budget_is_a_share_of_memory_within_bounds_and_the_operator_overrides_it(monkeypatch):
    monkeypatch.delenv("STOCKDEMO_CACHE_MB", raising=False)
    small, big = (host.cache_budget(host.Limits(m * MIB, 1, "test", "test")) for m in (690, 65536))
    assert host.CACHE_MIN_MB * MIB <= small < big == host.CACHE_MAX_MB * MIB
    monkeypatch.setenv("STOCKDEMO_CACHE_MB", "100")
    assert host.cache_budget(host.Limits(690 * MIB, 1, "test", "test")) == 100 * MIB


def test_the_operator_variables_override_the_cgroup(monkeypatch):
    monkeypatch.setenv("STOCKDEMO_MEMORY_MB", "690")
    monkeypatch.setenv("STOCKDEMO_CPUS", "1")
    host.limits.cache_clear()
    try:
        limits = host.limits()
        assert (limits.memory_mb, limits.cpus, limits.memory_from) == (690, 1, "STOCKDEMO_MEMORY_MB")
    finally:
        host.limits.cache_clear()


def test_the_sandboxs_warm_parent_is_the_kernels_first_choice_and_stats_show_it():
    """Under memory pressure the kernel kills the highest oom_score_adj: the sandbox's parent
    (and the children it forks, which inherit it), never the server (0)."""
    from stockdemo.sandbox import SEED_CODE, pool
    from stockdemo.ui import stats

    code = pool.CodePool()
    try:
        assert code.run(SEED_CODE, pool.Limits()).status == "ok"
        parent = code.status()["pid"]
        with open(f"/proc/{parent}/oom_score_adj") as f:
            assert int(f.read()) == 1000
        with open("/proc/self/oom_score_adj") as f:
            assert int(f.read()) < 1000
    finally:
        code.close()
    figures = stats.stats()
    assert figures["host"]["limit_mb"] > 0 and figures["server_pss_mb"] > 50  # torch is loaded here
    assert figures["forkserver"]["pid"] == parent and figures["forkserver"]["pss_mb"] > 50  # and there
    assert figures["caches"]["budget"] == host.cache_budget()


def test_the_stages_precomputation_stops_at_the_hosts_budget():
    from stockdemo.config import SEQ_LEN
    from stockdemo.ui import stage_route

    every = len(range(SEQ_LEN.low, SEQ_LEN.high + 1, SEQ_LEN.step))
    small = stage_route.warm_stage(budget=2 * MIB)
    assert 1 <= small < every  # shortest first, until 2 MB are held
    assert stage_route.warm_stage(budget=2**40) == every
