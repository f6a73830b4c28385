"""One command for a class: N app replicas behind HAProxy, with a shared Redis.

    python deploy/serve.py [--replicas N] [--port 8501] [--address 0.0.0.0] [--state FILE]
                           [--client-limits on|off] [--client-address src|forwarded] [--capacity N]
                           [--rejoin-after S]

(``make serve`` runs this; ``REPLICAS=n`` and ``PORT`` choose.) It starts:

- ``redis-server`` (Debian's) on a free loopback port, with an append-only
  file in a temporary folder, restarted if it dies: the shared class state. Every replica gets its address as
  ``STOCKDEMO_REDIS_URL=redis://127.0.0.1:<port>/0``.
- N replicas of the app (default: one per core) on free loopback ports, each
  with ``STOCKDEMO_TRAIN_WORKERS`` set so that all replicas together train on
  one worker process per core, and one ``server.cookieSecret`` for all
  (generated per start). Each starts through ``deploy/replica.py``, so its
  training workers are warm before a learner presses Train, and serves
  ``app.py`` behind its own limits (``deploy/replica_app.py``): at most
  ``--capacity`` sessions for a new learner (then a page says the class is
  full), each session's messages at a person's rate.
- HAProxy (Debian's) on ``--address:--port``, from ``deploy/haproxy.cfg``:
  cookie affinity, websockets kept open, health checks on
  ``/_stcore/health``, Streamlit's files from its cache, and each client
  address's rates limited (``--client-limits``; ``--client-address forwarded``
  behind another proxy).

A replica that exits is taken out of HAProxy at once (through its admin
socket; the health check would notice within 1-2 s) and started again here,
through ``deploy/replica.py --cold`` (its training workers start on the first
Train visit, not while the survivors carry its class). Its sessions reconnect
to the survivors and rebuild their pages from their URLs. The restarted replica
rejoins ``REJOIN_AFTER_S`` seconds (``--rejoin-after``) after it answers again: back at once, it
took part of the reconnecting sessions back while it was still starting.
While it is held out, Redis says so
(``sd:replicas:held``): the replica roll (``stockdemo.classroom.replicas``) does not count
it, and once it is back the fuller replica hands it its share of the class. Ctrl-C (or
SIGTERM) stops everything this started.
``--state FILE`` writes the ports and process ids as JSON once everything
answers (tests and bench/load.py read it).

If ``haproxy`` or ``redis-server`` is missing, this installs them with
``apt-get`` when run as root, and otherwise says what to install.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from deploy import system  # noqa: E402  (also a script)
from deploy.replica_limits import NOT_PAGE_ENDINGS, NOT_PAGES, busy_page  # noqa: E402  (also a script)

# stockdemo/host.py alone: ``import stockdemo`` would load torch into this launcher.
_spec = importlib.util.spec_from_file_location("stockdemo_host", ROOT / "stockdemo" / "host.py")
host = sys.modules["stockdemo_host"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(host)
TEMPLATE = ROOT / "deploy" / "haproxy.cfg"
REJOIN_AFTER_S = 20.0  # a restarted replica's wait before it takes sessions again
BUSY_RETRY_S = 10  # HAProxy's page-load rate counts over 10 s
START_TIMEOUT_S = 90.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    """In the child: get SIGTERM when serve.py dies, even by SIGKILL (Linux prctl)."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def find_programs() -> dict[str, str]:
    """program -> path; what is missing is installed with apt-get when root, else named (deploy/system.py)."""
    system.ensure("serve")
    return {program: system.SERVE[program] for program in ("haproxy", "redis-server")}


def keep_blocks(text: str, name: str, keep: bool) -> str:
    """The template with the block marked ``# >>> name`` ... ``# <<< name`` kept or left out."""
    if keep or f"    # >>> {name}" not in text:  # kept, or inside a block already left out
        return text
    head, rest = text.split(f"    # >>> {name}", 1)
    return head + rest.split(f"    # <<< {name}\n", 1)[1]


def haproxy_config(bind: str, port: int, replicas: list[tuple[str, int]], admin: Path,
                   client_limits: bool = True, client_address: str = "src") -> str:
    """The template with this start's address, servers and admin socket filled in.

    ``client_limits=False`` leaves out the per-client limits: for a benchmark that
    stands for many schools behind many addresses. ``client_address``: ``src`` (each
    connection's own address) or ``forwarded`` (behind another proxy: the address it
    appended to X-Forwarded-For). The page HAProxy sends a client over its page-load
    rate is written beside the admin socket.
    """
    if client_address not in ("src", "forwarded"):
        raise ValueError(f"client_address must be src or forwarded, not {client_address!r}")
    servers = "\n".join(f"    server {name} 127.0.0.1:{p} check cookie {name}" for name, p in replicas)
    text = keep_blocks(TEMPLATE.read_text(), "client limits", client_limits)
    text = keep_blocks(text, "direct clients", client_address == "src")
    text = keep_blocks(text, "forwarded clients", client_address == "forwarded")
    page = Path(admin).with_name("busy.html")
    page.write_text(busy_page("Too many at once from your network",
                              "Many browsers at your address opened the app in the last seconds.",
                              BUSY_RETRY_S))
    return string.Template(text).substitute(
        bind=bind, port=port, servers=servers, socket=admin, busy_page=page,
        not_page_prefixes=" ".join(NOT_PAGES), not_page_endings=" ".join(NOT_PAGE_ENDINGS))


def haproxy_says(admin: Path, command: str) -> str:
    """One command to HAProxy's admin socket -> its answer ("" is success for ``set server``)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(2)
        s.connect(str(admin))
        s.sendall(command.encode() + b"\n")
        chunks = []
        while chunk := s.recv(4096):
            chunks.append(chunk)
    return b"".join(chunks).decode().strip()


def hold_out(admin: Path, name: str, out: bool) -> bool:
    """Take replica ``name`` out of the balancer (maintenance: not even its cookies reach it) or back.

    -> whether HAProxy did. A failure is said and is not fatal: a dead replica
    not held out is still taken out by the health checks.
    """
    try:
        answer = haproxy_says(admin, f"set server replicas/{name} state {'maint' if out else 'ready'}")
    except OSError as err:
        answer = str(err)
    if answer:
        print(f"serve: could not {'hold out' if out else 'take back'} replica {name} through "
              f"HAProxy's admin socket: {answer}", file=sys.stderr, flush=True)
    return not answer


@dataclass
class Replica:
    name: str
    port: int
    env: dict[str, str]
    proc: subprocess.Popen | None = None
    started: float = 0.0
    rejoin_at: float | None = None  # held out of the balancer until then (None: in it)
    held_out: bool = False

    def start(self, log, warm: bool = True) -> None:
        """``warm``: through deploy/replica.py, the training workers started first.

        A replica started again after a crash is not warmed: its workers' imports
        and warm-up runs (about 4 s of CPU) would take the cores the survivor needs
        while every session of the dead one reconnects to it. Its workers start on
        its first Train visit instead.
        """
        launch = [sys.executable, str(ROOT / "deploy" / "replica.py"), *([] if warm else ["--cold"])]
        self.proc = subprocess.Popen(
            [*launch,
             "--server.port", str(self.port), "--server.address", "127.0.0.1",
             "--server.headless", "true", "--browser.gatherUsageStats", "false"],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
            # Its own process group, with its training workers: stop() ends them together.
            start_new_session=True, preexec_fn=_die_with_parent)
        self.started = time.monotonic()


# stockdemo.classroom.replicas.REPLICAS_HELD_KEY: replicas held out of the balancer, which the
# replica roll leaves out (a tab sent to one would land back where it came from).
REPLICAS_HELD_KEY = "sd:replicas:held"


def say_held(redis_port: int, name: str, held: bool) -> None:
    """Tell the replica roll (stockdemo.classroom.replicas) that ``name`` is out of the balancer, or back."""
    import redis  # make serve installs requirements.txt first

    try:
        client = redis.Redis(port=redis_port, socket_timeout=1.0, socket_connect_timeout=1.0)
        if held:
            client.hset(REPLICAS_HELD_KEY, name, "1")
        else:
            client.hdel(REPLICAS_HELD_KEY, name)
    except redis.RedisError as err:
        print(f"serve: could not tell the class store that {name} is "
              f"{'out of' if held else 'back in'} the balancer: {err}", file=sys.stderr, flush=True)


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


def redis_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def wait_until(check, what: str, procs: list[subprocess.Popen]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not check():
        dead = [p for p in procs if p.poll() is not None]
        if dead:
            raise RuntimeError(f"{what}: {dead[0].args[0]} exited with {dead[0].returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not answer within {START_TIMEOUT_S:.0f} s")
        time.sleep(0.1)


def _signal(p: subprocess.Popen, sig: int) -> None:
    """``sig`` to ``p``, and to its whole process group if it led one (a replica and its workers).

    The group outlives its leader: a replica that died leaves its workers to end here.
    """
    try:
        os.killpg(p.pid, sig)
        return
    except ProcessLookupError:
        pass  # not a group leader (haproxy, redis-server), or nothing left in its group
    if p.poll() is None:
        p.send_signal(sig)


def stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        _signal(p, signal.SIGTERM)
    deadline = time.monotonic() + 10
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal(p, signal.SIGKILL)
            p.wait()


def serve(args: argparse.Namespace) -> int:
    programs = find_programs()
    limits = host.limits()  # the cgroup's quota and memory, not the machine's
    cores = limits.cpus
    n = args.replicas or cores
    workdir = Path(tempfile.mkdtemp(prefix="stockdemo-serve-"))
    log = sys.stdout  # the replicas' and HAProxy's lines, interleaved: one terminal to watch
    procs: list[subprocess.Popen] = []
    replicas: list[Replica] = []

    def on_term(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    # Ctrl-C even where SIGINT came in ignored: a shell starts background jobs that way,
    # and Python then installs no KeyboardInterrupt of its own.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        redis_port = free_port()

        def start_redis() -> subprocess.Popen:
            # An append-only file in the work dir: a redis-server that dies is started
            # again on the same port and reloads it, so a class goes on where it was.
            return subprocess.Popen(
                [programs["redis-server"], "--port", str(redis_port), "--bind", "127.0.0.1",
                 "--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
                 "--dir", str(workdir), "--loglevel", "warning"],
                stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)

        redis = start_redis()
        procs.append(redis)
        env = {**os.environ,
               "STOCKDEMO_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
               # All replicas together: one training worker per core.
               "STOCKDEMO_TRAIN_WORKERS": str(max(1, cores // n)),
               # Each replica sizes its caches and sandbox from its share of the memory.
               "STOCKDEMO_MEMORY_MB": os.environ.get("STOCKDEMO_MEMORY_MB") or str(limits.memory_mb // n),
               # One secret for all replicas, so a session's cookies are valid on any of them.
               "STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(32),
               # As hosted: a file changed under a running server must not unload modules.
               "STREAMLIT_SERVER_FILE_WATCHER_TYPE": "none",
               **({"STOCKDEMO_CAPACITY": str(args.capacity)} if args.capacity else {})}
        for i in range(n):
            # Its name on the replica roll (stockdemo.classroom.replicas) is its name here and in HAProxy.
            replica = Replica(f"r{i + 1}", free_port(), {**env, "STOCKDEMO_REPLICA": f"r{i + 1}"})
            replica.start(log)
            replicas.append(replica)
            procs.append(replica.proc)
        cfg = workdir / "haproxy.cfg"
        admin = workdir / "haproxy.sock"
        cfg.write_text(haproxy_config(args.address, args.port, [(r.name, r.port) for r in replicas],
                                      admin, client_limits=args.client_limits == "on",
                                      client_address=args.client_address))
        check = subprocess.run([programs["haproxy"], "-c", "-f", str(cfg)], capture_output=True, text=True)
        if check.returncode:
            raise RuntimeError(f"haproxy rejected {cfg}:\n{check.stdout}{check.stderr}")
        wait_until(lambda: redis_answers(redis_port), "redis-server", procs)
        for r in replicas:
            wait_until(lambda r=r: healthy(f"http://127.0.0.1:{r.port}/_stcore/health"),
                       f"replica {r.name}", procs)
        haproxy = subprocess.Popen([programs["haproxy"], "-db", "-f", str(cfg)],
                                   stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        procs.append(haproxy)
        local = "127.0.0.1" if args.address in ("0.0.0.0", "::") else args.address
        wait_until(lambda: healthy(f"http://{local}:{args.port}/_stcore/health"), "haproxy", procs)

        def write_state() -> None:
            if args.state:
                state = {"port": args.port, "url": f"http://{local}:{args.port}",
                         "redis_port": redis_port, "haproxy_pid": haproxy.pid,
                         "redis_pid": redis.pid, "config": str(cfg),
                         "replicas": [{"name": r.name, "port": r.port, "pid": r.proc.pid,
                                       "held_out": r.held_out} for r in replicas]}
                tmp = Path(args.state + ".tmp")
                tmp.write_text(json.dumps(state))
                tmp.replace(args.state)

        write_state()
        print(f"serve: stockdemo on http://{local}:{args.port} ({n} replicas on ports "
              f"{', '.join(str(r.port) for r in replicas)}, redis on {redis_port}); Ctrl-C stops it",
              flush=True)
        while True:
            time.sleep(0.5)
            if haproxy.poll() is not None:
                raise RuntimeError(f"haproxy exited with {haproxy.returncode}")
            if redis.poll() is not None:
                # Meanwhile the replicas say "class mode unavailable" and work solo.
                print(f"serve: redis-server exited ({redis.returncode}); starting it again", flush=True)
                procs.remove(redis)
                redis = start_redis()
                procs.append(redis)
                write_state()
            for r in replicas:
                if r.proc.poll() is not None:
                    print(f"serve: replica {r.name} exited ({r.proc.returncode}); starting it again, "
                          f"out of the balancer until {args.rejoin_after:g} s after it answers",
                          flush=True)
                    r.held_out, r.rejoin_at = hold_out(admin, r.name, True), None
                    say_held(redis_port, r.name, True)
                    procs.remove(r.proc)
                    _signal(r.proc, signal.SIGTERM)  # its training workers, if any are left
                    r.start(log, warm=False)
                    procs.append(r.proc)
                    write_state()
                elif r.held_out:
                    if r.rejoin_at is None:
                        if healthy(f"http://127.0.0.1:{r.port}/_stcore/health"):
                            r.rejoin_at = time.monotonic() + args.rejoin_after
                    elif time.monotonic() >= r.rejoin_at:
                        if hold_out(admin, r.name, False):
                            r.held_out = False
                            say_held(redis_port, r.name, False)
                            print(f"serve: replica {r.name} is back in the balancer", flush=True)
                            write_state()
                        else:  # in maintenance until HAProxy takes the command: try again
                            r.rejoin_at = time.monotonic() + 5.0
    except KeyboardInterrupt:
        print("serve: stopping", flush=True)
        return 0
    except RuntimeError as err:
        print(f"serve: {err}", file=sys.stderr, flush=True)
        return 1
    finally:
        # The balancer first, so nobody is sent to a replica that is stopping.
        stop(procs[::-1])
        if args.state:
            Path(args.state).unlink(missing_ok=True)
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replicas", type=int, default=int(os.environ.get("REPLICAS") or 0),
                    help="app processes (default: one per core)")
    ap.add_argument("--port", type=int, default=int(os.environ.get("PORT") or 8501))
    ap.add_argument("--address", default="0.0.0.0", help="where HAProxy listens")
    ap.add_argument("--state", help="write ports and process ids here as JSON once ready")
    ap.add_argument("--client-limits", choices=("on", "off"),
                    default=os.environ.get("STOCKDEMO_CLIENT_LIMITS") or "on",
                    help="HAProxy's per-address rate limits (deploy/haproxy.cfg); off for a benchmark "
                         "standing for many schools (or STOCKDEMO_CLIENT_LIMITS=off)")
    ap.add_argument("--client-address", choices=("src", "forwarded"),
                    default=os.environ.get("STOCKDEMO_CLIENT_ADDRESS") or "src",
                    help="whose rates the client limits count: each connection's address, or behind "
                         "another proxy the address it appended to X-Forwarded-For")
    ap.add_argument("--capacity", type=int, default=int(os.environ.get("STOCKDEMO_CAPACITY") or 0),
                    help="sessions a page load may take a replica to; past it the page says the "
                         "class is full (default: deploy/replica_app.py's)")
    ap.add_argument("--rejoin-after", type=float, default=REJOIN_AFTER_S,
                    help="s a restarted replica stays out of the balancer once it answers "
                         "(tests shorten it)")
    args = ap.parse_args()
    if args.replicas < 0 or args.capacity < 0 or not 0 < args.port < 65536:
        ap.error("--replicas and --capacity must be >= 1 and --port 1..65535")
    if not 0 <= args.rejoin_after <= 3600:
        ap.error("--rejoin-after must be 0..3600 s")
    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
