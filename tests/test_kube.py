"""deploy/k8s played with ``podman kube play``: two app pods and Redis, their probes, the
learners' code sandbox in a pod, a session through the service, a class across both pods,
and a pod killed under its sessions.

Played as written, except where podman 4.3's kube play (Debian's) cannot, each change
made by ``played`` below and said here:

- **Deployments become Pods.** kube play makes a Deployment's replicas, but it
  publishes every ``containerPort`` on the host, so the second replica cannot
  bind the port and never starts. The app's Deployment (20 replicas) is played
  as two Pods from its template, ``stockdemo-0`` and ``stockdemo-1``; Redis's as
  one Pod named ``stockdemo-redis``, its Service's name. Each pod publishes its
  port on a free loopback port (``hostIP: 127.0.0.1``), never on every address.
- **No Services, no Ingress, no PodDisruptionBudget, no NetworkPolicy**: kube play plays only
  Pods, Deployments and PersistentVolumeClaims. On the pods' network a pod's
  name is its DNS name, so the app finds Redis at the address its manifest gives
  (``redis://stockdemo-redis:6379/0``). HAProxy from deploy/haproxy.cfg stands in
  for the Service and the Ingress: affinity by the ``SRV`` cookie, as the
  Ingress's annotations ask, and health checks. tests/test_deploy.py keeps the
  schema validation of all of them.
- **Probes**: podman 4.3 ignores ``startupProbe`` and ``readinessProbe``, and
  turns ``livenessProbe`` into ``curl -f http://localhost:0/...`` (a named port
  becomes 0) run inside a container that has no curl. The played copy leaves
  the liveness probe out; this test runs all three as the kubelet does, with
  the manifest's paths, ports, periods and thresholds.
- **The Secret** ``stockdemo-cookie`` is made as a podman secret (JSON of key to
  base64 value, what kube play's ``secretKeyRef`` reads), as ``kubectl create
  secret`` would.
- **Images**: the app's is built by ``make image`` (tests/test_image.py's
  build, once per run); ``redis:7.0`` is pulled, or where no registry can be
  reached built from Debian's redis-server 7.0 and tagged so
  (deploy/redis.Containerfile).
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import copy
import json
import re
import secrets
import shutil
import subprocess
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
import yaml

from deploy import image
from deploy.serve import haproxy_config
from harness.builds import built_image, engine
from harness.class_member import Member, reconnect_as_a_browser
from harness.helpers import ROOT, free_port, wait_until
from harness.hostile import check_container_runs, run_in_container
from harness.session_probe import GraphSession, playground

K8S = ROOT / "deploy" / "k8s"
APP_PODS = ("stockdemo-0", "stockdemo-1")
STUDENTS = 6


def manifests() -> dict[tuple[str, str], dict]:
    docs = [d for p in sorted(K8S.glob("*.yaml")) for d in yaml.safe_load_all(p.read_text()) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def as_pod(deployment: dict, name: str, ports: dict[str, int]) -> dict:
    """A Deployment's pod template as one Pod named ``name``; each container port -> a loopback port."""
    template = copy.deepcopy(deployment["spec"]["template"])
    for container in template["spec"]["containers"]:
        container.pop("livenessProbe", None)  # see the module docstring
        for port in container.get("ports", []):
            port["hostIP"] = "127.0.0.1"
            port["hostPort"] = ports[port["name"]]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": template["metadata"]["labels"]},
            "spec": template["spec"]}


def played(host_ports: dict[str, dict[str, int]]) -> list[dict]:
    """deploy/k8s as kube play runs it: Redis's pod first (its name must resolve), then the app's."""
    docs = manifests()
    pods = [as_pod(docs[("Deployment", "stockdemo-redis")], "stockdemo-redis",
                   host_ports["stockdemo-redis"])]
    pods += [as_pod(docs[("Deployment", "stockdemo")], name, host_ports[name]) for name in APP_PODS]
    return pods


def run_apart(coro):
    """``asyncio.run`` in a thread of its own: in the whole suite Playwright's sync API (a
    session-wide fixture) keeps an event loop running in this one, and asyncio.run refuses."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def http_ok(url: str, timeout: float) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return 200 <= r.status < 400
    except OSError:
        return False


def kubelet(probe: dict, container: dict, host_ports: dict[str, int], need: int = 1) -> float:
    """Run one httpGet probe as the kubelet does -> seconds until it succeeded ``need`` times.

    Fails after ``failureThreshold`` failures in a row, ``periodSeconds`` apart.
    """
    get = probe["httpGet"]
    port = get["port"]
    name = port if isinstance(port, str) else next(p["name"] for p in container["ports"]
                                                      if p["containerPort"] == port)
    url = f"http://127.0.0.1:{host_ports[name]}{get['path']}"
    period, threshold = probe.get("periodSeconds", 10), probe.get("failureThreshold", 3)
    timeout = probe.get("timeoutSeconds", 1)
    started, failures, successes = time.monotonic(), 0, 0
    while successes < need:
        if http_ok(url, timeout):
            successes += 1
        else:
            failures, successes = failures + 1, 0
            if failures >= threshold:
                pytest.fail(f"probe {get['path']} on {url} failed {failures} times in a row")
        if successes < need:
            time.sleep(period)  # the probe's own period: the kubelet's clock is what is copied here
    return time.monotonic() - started


class Cluster:
    def __init__(self) -> None:
        self.cmd, self.env = engine()
        self.run_id = uuid.uuid4().hex[:6]
        self.network = f"stockdemo-kube-{self.run_id}"
        self.secret = "stockdemo-cookie"
        self.host_ports = {"stockdemo-redis": {"redis": free_port()},
                           **{name: {"http": free_port()} for name in APP_PODS}}
        self.workdir = Path(tempfile.mkdtemp(prefix="stockdemo-kube-"))
        self.files: list[Path] = []
        self.haproxy: subprocess.Popen | None = None
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ready_s: dict[str, float] = {}
        self.played_at = 0.0

    def podman(self, *args: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
        done = subprocess.run([*self.cmd, *args], env=self.env, capture_output=True, text=True, **kwargs)
        if check and done.returncode:
            raise AssertionError(f"{' '.join(args[:3])}: {done.stdout}{done.stderr}")
        return done

    def up(self) -> None:
        self.podman("network", "create", self.network)
        self.podman("secret", "rm", self.secret, check=False)
        value = base64.b64encode(secrets.token_hex(32).encode()).decode()
        secret_file = self.workdir / "secret.json"
        secret_file.write_text(json.dumps({"secret": value}))
        self.podman("secret", "create", self.secret, str(secret_file))
        for pod in played(self.host_ports):
            path = self.workdir / f"{pod['metadata']['name']}.yaml"
            path.write_text(yaml.safe_dump(pod, sort_keys=False))
            self.files.append(path)
            self.podman("kube", "play", "--network", self.network, str(path), timeout=120)
        self.played_at = time.monotonic()
        cfg = self.workdir / "haproxy.cfg"
        servers = [(name, self.host_ports[name]["http"]) for name in APP_PODS]
        cfg.write_text(haproxy_config("127.0.0.1", self.port, servers, self.workdir / "admin.sock"))
        haproxy = shutil.which("haproxy", path="/usr/sbin:/usr/bin:/sbin:/bin")
        if haproxy is None:
            pytest.fail("haproxy is missing: apt-get install haproxy (.ci/run installs it)")
        self.haproxy = subprocess.Popen([haproxy, "-db", "-f", str(cfg)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.STDOUT)

    def down(self) -> None:
        if self.haproxy is not None:
            self.haproxy.terminate()
            self.haproxy.wait(timeout=10)
        for path in reversed(self.files):
            self.podman("kube", "play", "--down", str(path), check=False, timeout=120)
        self.podman("secret", "rm", self.secret, check=False)
        self.podman("network", "rm", "-f", self.network, check=False)
        shutil.rmtree(self.workdir, ignore_errors=True)

    def logs(self, pod: str) -> str:
        done = self.podman("logs", f"{pod}-app", check=False)
        return done.stdout + done.stderr


@pytest.fixture(scope="module")
def cluster():
    figures = built_image()
    print(f"kube: image built in {figures['seconds']:.0f} s, {figures['mb']:.0f} MB")
    c = Cluster()
    image.redis_image(c.cmd, c.env)
    try:
        started = time.monotonic()
        c.up()
        print(f"kube: played in {time.monotonic() - started:.1f} s")
        yield c
    finally:
        c.down()


def test_the_probes_make_the_pods_ready(cluster):
    app = manifests()[("Deployment", "stockdemo")]["spec"]["template"]["spec"]["containers"][0]
    for name in APP_PODS:
        ports = cluster.host_ports[name]
        kubelet(app["startupProbe"], app, ports)
        kubelet(app["readinessProbe"], app, ports)
        kubelet(app["livenessProbe"], app, ports)
        cluster.ready_s[name] = time.monotonic() - cluster.played_at
        print(f"kube: {name} ready {cluster.ready_s[name]:.1f} s after kube play")
    assert max(cluster.ready_s.values()) < app["startupProbe"]["periodSeconds"] * app["startupProbe"][
        "failureThreshold"] + 10
    # Redis's own exec probe, as written: `redis-cli ping` inside its container.
    redis = manifests()[("Deployment", "stockdemo-redis")]["spec"]["template"]["spec"]["containers"][0]
    ping = cluster.podman("exec", "stockdemo-redis-redis", *redis["readinessProbe"]["exec"]["command"])
    assert ping.stdout.strip() == "PONG"
    # Both app pods in the balancer: each answers its health check through it.
    wait_until(lambda: all(http_ok(f"{cluster.url}/_stcore/health", 2) for _ in range(4)), 30,
               "HAProxy reaching the pods", interval=1)


def test_the_sandbox_in_a_pod_runs_the_seed_and_stops_a_fork_a_socket_and_a_loop(cluster):
    exit_code, failed, runs = run_in_container(
        [*cluster.cmd, "exec", "-i", "-w", "/app", f"{APP_PODS[0]}-app"], cluster.env)
    print(f"kube: the sandbox's walls in the pod: {runs['seed']['walls']}")
    check_container_runs(exit_code, failed, runs)


def test_a_session_through_the_service_gets_a_graph(cluster):
    run = run_apart(playground(cluster.url, 9))
    assert run["ok"], run["errors"]
    assert run["steps"] == list(range(9))
    assert run["replica"] in APP_PODS


async def _class_across_pods(cluster: Cluster) -> dict:
    """A teacher starts a class, students join through the service, the teacher moves T."""
    teacher = Member(cluster.url, "classroom", {}, 60)
    students: list[Member] = []
    try:
        await teacher.open()
        await teacher.run_page()
        await teacher.click("class_start")
        await teacher.until(lambda: any("class=" in t for t in teacher.texts))
        code = re.search(r"class=([A-Z0-9]{8})", next(t for t in teacher.texts if "class=" in t))[1]
        teacher.go("playground")
        await teacher.run_page()
        students = [Member(cluster.url, "playground", {"class": code}, 60)
                    for _ in range(STUDENTS)]
        for s in students:
            await s.open()
        await asyncio.gather(*(s.run_page() for s in students))
        spread = {name: sum(s.replica == name for s in students) for name in APP_PODS}
        teacher.set_value("seq_len", 12)
        await teacher.send(teacher.rerun_fragment)
        await asyncio.gather(*(s.until(lambda s=s: any(r.seq_len == 12 for r in s.runs), 30)
                               for s in students))
        followed = sum(int(s.value("seq_len")) == 12 for s in students)

        # Kill the pod the teacher is not on, with its students; they reconnect as a browser does.
        doomed = next(name for name in APP_PODS if name != teacher.replica)
        moved = [s for s in students if s.replica == doomed]
        killed = time.monotonic()
        cluster.podman("pod", "kill", doomed)
        for s in moved:
            await s.until(lambda s=s: s.closed, 30)
        closed = time.monotonic() - killed
        retries = await asyncio.gather(*(reconnect_as_a_browser(s) for s in moved))
        await asyncio.gather(*(s.run_page() for s in moved))
        # The first run to finish may be the class bar's, before the page has drawn its stage.
        try:
            await asyncio.gather(*(s.until(lambda s=s: s.stage is not None, 30) for s in moved))
        except TimeoutError:
            stuck = [s for s in moved if s.stage is None]
            first = stuck[0]
            pytest.fail(f"{len(stuck)} of {len(moved)} moved students drew no stage on the survivor "
                        f"(now {time.perf_counter():.3f}; closed {first.closed}; graphs "
                        f"{first.graphs[-3:]}; tasks {[t.done() and t.exception() for t in first._tasks]}); "
                        "what the first was sent since its reconnect:\n" + "\n".join(first.wire))
        after = {"closed_s": round(closed, 1), "back_s": round(time.monotonic() - killed, 1),
                 "replicas": [s.replica for s in moved], "retries": sum(retries),
                 "seq_len": [int(s.value("seq_len")) for s in moved],
                 "following": [s.seen("following the teacher") for s in moved]}
        # And the class goes on there: the teacher moves again, everyone follows.
        teacher.set_value("seq_len", 15)
        await teacher.send(teacher.rerun_fragment)
        await asyncio.gather(*(s.until(lambda s=s: any(r.seq_len == 15 for r in s.runs), 30)
                               for s in students))
        errors = [e for m in (teacher, *students) for e in m.errors]
        return {"spread": spread, "followed": followed, "doomed": doomed, "moved": len(moved),
                "after": after, "followed_after": sum(int(s.value("seq_len")) == 15 for s in students),
                "errors": errors}
    finally:
        for m in (teacher, *students):
            await m.close()


def test_a_class_spans_both_pods_and_a_killed_pods_sessions_come_back_on_the_other(cluster):
    out = run_apart(_class_across_pods(cluster))
    print(f"kube: class {out}")
    assert all(n > 0 for n in out["spread"].values()), out["spread"]  # students on both pods
    assert out["followed"] == STUDENTS  # through Redis, whichever pod each is on
    assert out["moved"] > 0
    survivor = next(name for name in APP_PODS if name != out["doomed"])
    assert out["after"]["replicas"] == [survivor] * out["moved"]
    assert out["after"]["closed_s"] < 10  # HAProxy marks the pod down and closes its sessions
    assert out["after"]["seq_len"] == [12] * out["moved"]  # the page its URL carries
    assert all(out["after"]["following"])
    assert out["followed_after"] == STUDENTS
    assert out["errors"] == []


def test_a_new_session_after_the_kill_is_served_by_the_survivor(cluster):
    """Runs after the kill above: the service keeps serving, on the pod that is left."""
    killed = [name for name in APP_PODS
              if cluster.podman("pod", "inspect", name, "--format", "{{.State}}").stdout.strip()
              != "Running"]
    assert len(killed) == 1
    s = GraphSession(cluster.url, "playground", query={"seq_len": "6"})
    run = run_apart(playground(cluster.url, 6, s))
    assert run["ok"] and run["steps"] == list(range(6))
    assert run["replica"] != killed[0]
