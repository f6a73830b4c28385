"""deploy/: the Kubernetes manifests against Kubernetes' own schemas, the HAProxy config against haproxy."""

from __future__ import annotations

import copy
import http.client
import shutil
import socket
import subprocess
from collections import Counter
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml

from deploy.serve import free_port, haproxy_config, haproxy_says
from harness.helpers import ROOT, wait_until

K8S = ROOT / "deploy" / "k8s"
KUBERNETES_VERSION = "1.37.0"


def documents() -> list[dict]:
    docs = [d for path in sorted(K8S.glob("*.yaml")) for d in yaml.safe_load_all(path.read_text()) if d]
    assert docs, "no manifests in deploy/k8s"
    return docs


def by_kind(kind: str) -> list[dict]:
    return [d for d in documents() if d["kind"] == kind]


@pytest.mark.parametrize("doc", documents(), ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_every_manifest_validates_against_the_kubernetes_schema(doc):
    kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_the_validator_rejects_a_broken_deployment():
    broken = copy.deepcopy(by_kind("Deployment")[0])
    broken["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["port"] = [8501]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)


def test_service_and_ingress_reach_the_app_pods_on_their_health_checked_port():
    [app] = [d for d in by_kind("Deployment") if d["metadata"]["name"] == "stockdemo"]
    pod = app["spec"]["template"]
    [container] = pod["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["port"] in ports
    services = {s["metadata"]["name"]: s for s in by_kind("Service")}
    [ingress] = by_kind("Ingress")
    for rule in ingress["spec"]["rules"]:
        for path in rule["http"]["paths"]:
            backend = path["backend"]["service"]
            service = services[backend["name"]]
            assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
            [port] = [p for p in service["spec"]["ports"] if p["name"] == backend["port"]["name"]]
            assert port["targetPort"] in ports
    # The image's own port is the one the manifests use.
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert f"EXPOSE {ports['http']}" in dockerfile


def test_the_app_finds_redis_at_the_service_the_manifests_define():
    [app] = [d for d in by_kind("Deployment") if d["metadata"]["name"] == "stockdemo"]
    env = {e["name"]: e.get("value") for e in app["spec"]["template"]["spec"]["containers"][0]["env"]}
    host_port = env["STOCKDEMO_REDIS_URL"].removeprefix("redis://").split("/")[0]
    host, port = host_port.split(":")
    [service] = [s for s in by_kind("Service") if s["metadata"]["name"] == host]
    assert int(port) in [p["port"] for p in service["spec"]["ports"]]


def test_the_app_pods_may_reach_redis_and_dns_and_nothing_else():
    [app] = [d for d in by_kind("Deployment") if d["metadata"]["name"] == "stockdemo"]
    [redis] = [d for d in by_kind("Deployment") if d["metadata"]["name"] == "stockdemo-redis"]
    [policy] = by_kind("NetworkPolicy")
    spec = policy["spec"]
    assert spec["policyTypes"] == ["Egress"]
    assert spec["podSelector"]["matchLabels"].items() <= app["spec"]["template"]["metadata"]["labels"].items()
    allowed = {(p["protocol"], p["port"]) for rule in spec["egress"] for p in rule["ports"]}
    assert allowed == {("TCP", 6379), ("UDP", 53), ("TCP", 53)}
    to_redis = [rule for rule in spec["egress"] if {"protocol": "TCP", "port": 6379} in rule["ports"]]
    [peer] = [peer for rule in to_redis for peer in rule["to"]]
    redis_labels = redis["spec"]["template"]["metadata"]["labels"]
    assert peer["podSelector"]["matchLabels"].items() <= redis_labels.items()
    redis_port = redis["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"]
    assert redis_port == 6379
    # The sandbox needs no privilege: the app's container gets none.
    context = app["spec"]["template"]["spec"]["containers"][0]["securityContext"]
    assert context["allowPrivilegeEscalation"] is False and context["capabilities"] == {"drop": ["ALL"]}
    assert "privileged" not in context


def test_haproxy_accepts_the_rendered_config(tmp_path):
    haproxy = shutil.which("haproxy", path="/usr/sbin:/usr/bin:/sbin:/bin")
    if haproxy is None:
        pytest.fail("haproxy is missing: apt-get install haproxy (.ci/run installs it)")
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text(haproxy_config("127.0.0.1", 8501, [("r1", 9001), ("r2", 9002)], tmp_path / "admin.sock"))
    check = subprocess.run([haproxy, "-c", "-f", str(cfg)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    # And rejects a broken one: the check is not a formality.
    cfg.write_text(cfg.read_text().replace("balance leastconn", "balance sideways"))
    assert subprocess.run([haproxy, "-c", "-f", str(cfg)], capture_output=True).returncode != 0


def _websocket_statuses(port: int, n: int, protocols: str, cookie: str) -> Counter:
    """``n`` websocket upgrades of Streamlit's stream, one after another -> count by HTTP status."""
    statuses: Counter = Counter()
    for _ in range(n):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/_stcore/stream", headers={
            "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": protocols,
            "Cookie": cookie})
        response = conn.getresponse()
        response.read()
        conn.close()
        statuses[response.status] += 1
    return statuses


def test_reconnects_that_name_a_session_have_a_lectures_allowance_and_new_websockets_keep_theirs(
        tmp_path):
    """Through HAProxy alone (its one replica's port closed: a websocket let through gets 503).

    A lecture of 300 reconnects at once, twice over in 10 s; the replica judges each by the
    session it names (tests/test_replica_limits.py)."""
    haproxy = shutil.which("haproxy", path="/usr/sbin:/usr/bin:/sbin:/bin")
    if haproxy is None:
        pytest.fail("haproxy is missing: apt-get install haproxy (.ci/run installs it)")
    port = free_port()
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text(haproxy_config("127.0.0.1", port, [("r1", free_port())], tmp_path / "admin.sock"))
    proc = subprocess.Popen([haproxy, "-db", "-f", str(cfg)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: socket.create_connection(("127.0.0.1", port), timeout=1).close() or True,
                   10, "haproxy's port")
        # Streamlit's frontend names the session it had when it reconnects (a third subprotocol).
        cookie = "SRV=r1; _streamlit_xsrf=x"
        resumes = _websocket_statuses(port, 620, "streamlit, 2|ab|cd|1, 5f0c-session", cookie)
        assert resumes == Counter({503: 600, 429: 20}), resumes  # 600 in 10 s let through, then 429
        # A session's first websocket names none: it counts as new, under its own 200 in 10 s.
        new = _websocket_statuses(port, 5, "streamlit, 2|ab|cd|1", cookie)
        assert new == Counter({503: 5}), new
        counts = haproxy_says(tmp_path / "admin.sock", "show table reconnects")
        assert "http_req_rate(10000)=620" in counts, counts  # every reconnect, for the loop's guard
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def cloud_requirements() -> list[str]:
    """requirements.txt as docs/hosting.md tells a Community Cloud deployment to write it."""
    doc = (ROOT / "docs" / "hosting.md").read_text()
    after = doc.split("<!-- cloud requirements:", 1)[1].split("-->", 1)[1]
    block = []
    for line in after.lstrip("\n").splitlines():
        if not line.strip():
            if block:
                break
            continue
        if not line.startswith("      "):
            break
        block.append(line.strip())
    assert block, "docs/hosting.md lost its Community Cloud requirements"
    return block + (ROOT / "requirements.txt").read_text().splitlines()


def test_the_community_cloud_requirements_parse_and_resolve_torch_to_its_cpu_build():
    from packaging.requirements import Requirement
    from packaging.version import Version

    indexes, pins = [], {}
    for raw in cloud_requirements():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            option, _, value = line.partition(" ")
            assert option == "--extra-index-url", f"an option pip would read differently: {line}"
            url = urlsplit(value.strip())
            assert url.scheme == "https" and url.netloc and not url.query, line
            indexes.append(value.strip())
            continue
        req = Requirement(line)  # raises on anything pip would not parse
        [spec] = req.specifier
        assert spec.operator == "==", f"not pinned exactly: {line}"
        pins[req.name] = req.specifier
    assert indexes == ["https://download.pytorch.org/whl/cpu"]
    torch = pins["torch"]
    assert torch.contains("2.13.0+cpu") and torch.contains("2.13.0")
    assert Version("2.13.0+cpu") > Version("2.13.0")  # so pip prefers the CPU build
    assert set(pins) >= {"streamlit", "torch", "plotly", "pandas"}


def test_the_client_limits_count_rates_by_address_or_forwarded_address_or_are_left_out(tmp_path):
    haproxy = shutil.which("haproxy", path="/usr/sbin:/usr/bin:/sbin:/bin")
    if haproxy is None:
        pytest.fail("haproxy is missing: apt-get install haproxy (.ci/run installs it)")
    servers = [("r1", 9001)]
    on = haproxy_config("127.0.0.1", 8501, servers, tmp_path / "a.sock")
    forwarded = haproxy_config("127.0.0.1", 8501, servers, tmp_path / "a.sock", client_address="forwarded")
    off = haproxy_config("127.0.0.1", 8501, servers, tmp_path / "a.sock", client_limits=False)
    assert "tcp-request connection track-sc0 src" in on and "X-Forwarded-For" not in on
    # Behind a proxy: no connection-level tracking (every connection is the proxy's).
    assert "tcp-request connection" not in forwarded
    assert "http-request track-sc0 req.hdr_ip(X-Forwarded-For,-1)" in forwarded
    # Rates only: nothing counts the websockets an address holds open.
    for cfg in (on, forwarded):
        assert "gpc_rate(3,10s)" in cfg and "sc_gpc_rate(1,0) gt" in cfg
        assert "conn_cur(1)" not in cfg and "websockets_per_client" not in cfg
    assert "track-sc" not in off and "sc-inc-gpc" not in off
    assert "/_stcore/health" in off and "default_backend replicas" in off
    for name, text in (("on", on), ("forwarded", forwarded), ("off", off)):
        cfg = tmp_path / f"{name}.cfg"
        cfg.write_text(text)
        check = subprocess.run([haproxy, "-c", "-f", str(cfg)], capture_output=True, text=True)
        assert check.returncode == 0, name + check.stdout + check.stderr
    with pytest.raises(ValueError):
        haproxy_config("127.0.0.1", 8501, servers, tmp_path / "a.sock", client_address="cookie")
