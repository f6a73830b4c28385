"""Build stockdemo's container image (``make image``), with podman or docker.

    python deploy/image.py [--base auto|debian|IMAGE] [--tag stockdemo:latest] [--engine podman|docker]

The base is the Dockerfile's build argument ``BASE``; the default is the
official ``python:3.11-slim``. ``--base auto`` (what ``make image`` passes
unless ``BASE=`` says otherwise) uses it when it is here or can be pulled, and
otherwise builds a base from Debian's own packages (``--base debian``): a host
that reaches Debian's mirror and PyPI but no container registry, such as the
development machine and its CI, still gets an image.

What such a machine needs is all here, said once:

- **podman's settings** (``deploy/containers.conf``, through ``CONTAINERS_CONF``):
  the ``runc`` runtime and the ``cgroupfs`` cgroup manager (``crun``, podman's
  default, refuses the hybrid cgroups of the development machine), and no
  default ulimits (they cannot be set there).
- **the Debian base** (``debian_base``): ``debootstrap --variant=minbase`` of
  bookworm with python3, python3-venv and ca-certificates, from the mirror in
  the apt sources, imported as ``localhost/stockdemo-base:bookworm`` (about
  2 minutes and 275 MB, measured; kept, and reused by later builds).
- **pip's proxy and local wheels** (``pip_mounts``): when the host's pip has a
  certificate authority of its own or a find-links folder (``pip config
  list``; the CPU torch wheel lies in one here), both are mounted read-only into
  the build (``podman build -v``) and named to pip through the build arguments
  ``PIP_CERT`` and ``PIP_FIND_LINKS``. Where the CPU torch wheel is in that
  folder, PyTorch's CPU index (which only PyPI's proxy can reach here) is not
  asked. Docker's ``build`` cannot mount folders: with docker the build uses the
  network as the host's docker daemon does.

docker is used only where podman is missing and a docker daemon answers.
Prints the build's time and the image's size.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
CONTAINERS_CONF = ROOT / "deploy" / "containers.conf"
OFFICIAL_BASE = "docker.io/library/python:3.11-slim"
DEBIAN_BASE = "localhost/stockdemo-base:bookworm"
DEBIAN_PACKAGES = "python3,python3-venv,ca-certificates"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
DEBIAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
REDIS_IMAGE = "docker.io/library/redis:7.0"  # deploy/k8s/redis.yaml's
REDIS_STANDIN = ROOT / "deploy" / "redis.Containerfile"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
TAG = "localhost/stockdemo:latest"


def engine() -> list[str]:
    """The container engine's command: podman where it is installed, else a docker that answers."""
    if shutil.which("podman"):
        return ["podman"]
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "info"], capture_output=True).returncode == 0:
        return [docker]
    sys.exit("image: neither podman nor a running docker found. Install podman "
             "(Debian: apt-get install podman runc) or start docker.")


def engine_env(cmd: list[str]) -> dict[str, str]:
    """The environment to run ``cmd`` in: podman reads deploy/containers.conf."""
    env = dict(os.environ)
    if Path(cmd[0]).name == "podman":
        if not shutil.which("runc", path=env.get("PATH", "") + ":/usr/sbin:/sbin"):
            sys.exit("image: podman needs the runc runtime here (deploy/containers.conf): "
                     "apt-get install runc")
        env["CONTAINERS_CONF"] = str(CONTAINERS_CONF)
    return env


def run(cmd: list[str], env: dict[str, str], **kwargs) -> subprocess.CompletedProcess:
    print("image: $ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, env=env, **kwargs)


def has_image(cmd: list[str], env: dict[str, str], name: str) -> bool:
    return subprocess.run([*cmd, "image", "inspect", name], env=env,
                          capture_output=True).returncode == 0


def apt_mirror() -> str:
    """The Debian mirror the host's apt uses (deb822 ``URIs:`` or a ``deb`` line)."""
    files = sorted(glob.glob("/etc/apt/sources.list.d/*.sources")) + ["/etc/apt/sources.list"]
    for name in files:
        try:
            lines = Path(name).read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            words = line.split()
            if words[:1] == ["URIs:"] and len(words) > 1 and "security" not in words[1]:
                return words[1]
            if words[:1] == ["deb"] and "security" not in line:
                return next(w for w in words[1:] if "://" in w)
    return DEFAULT_MIRROR


def debian_base(cmd: list[str], env: dict[str, str], name: str = DEBIAN_BASE) -> str:
    """Build the base image from Debian's packages (debootstrap) unless it is already here."""
    if has_image(cmd, env, name):
        print(f"image: base {name} is here (built earlier from Debian's packages)", flush=True)
        return name
    debootstrap = shutil.which("debootstrap", path=env.get("PATH", "") + ":/usr/sbin:/sbin")
    if debootstrap is None:
        sys.exit("image: no registry to pull the base from, and no debootstrap to build one: "
                 "apt-get install debootstrap")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="stockdemo-base-") as rootfs:
        run([debootstrap, "--variant=minbase", f"--include={DEBIAN_PACKAGES}", "bookworm", rootfs,
             apt_mirror()], env, check=True, stdout=subprocess.DEVNULL)
        # Downloaded packages and apt's lists: 60 MB nobody in the image uses.
        for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for path in Path(rootfs, leftover).glob("*"):
                if path.is_file():
                    path.unlink()
        tar = subprocess.Popen(["tar", "-C", rootfs, "--numeric-owner", "-c", "."],
                               stdout=subprocess.PIPE)
        # An imported tree has no environment: PATH as Debian's own images set it.
        run([*cmd, "import", "--change", f"ENV PATH={DEBIAN_PATH}", "--change", 'CMD ["/bin/bash"]',
             "-", name], env, stdin=tar.stdout, check=True, stdout=subprocess.DEVNULL)
        if tar.wait():
            sys.exit("image: tar of the base's files failed")
    print(f"image: base {name} built from Debian's packages in "
          f"{time.monotonic() - started:.0f} s", flush=True)
    return name


def redis_image(cmd: list[str], env: dict[str, str]) -> str:
    """deploy/k8s/redis.yaml's image: here, pulled, or built from Debian's redis-server and tagged so."""
    if has_image(cmd, env, REDIS_IMAGE):
        return REDIS_IMAGE
    if run([*cmd, "pull", "-q", REDIS_IMAGE], env, capture_output=True).returncode == 0:
        return REDIS_IMAGE
    base = debian_base(cmd, env)
    print(f"image: {REDIS_IMAGE} cannot be pulled here: building a stand-in from Debian's "
          f"redis-server ({REDIS_STANDIN.name})", flush=True)
    run([*cmd, "build", "-f", str(REDIS_STANDIN), "-t", REDIS_IMAGE, f"--build-arg=BASE={base}",
         str(REDIS_STANDIN.parent)], env, check=True, stdout=subprocess.DEVNULL)
    return REDIS_IMAGE


def pick_base(cmd: list[str], env: dict[str, str], base: str) -> str:
    if base == "debian":
        return debian_base(cmd, env)
    if base != "auto":
        return base
    if has_image(cmd, env, OFFICIAL_BASE):
        return OFFICIAL_BASE
    if run([*cmd, "pull", "-q", OFFICIAL_BASE], env, capture_output=True).returncode == 0:
        return OFFICIAL_BASE
    print(f"image: {OFFICIAL_BASE} cannot be pulled here (no registry reachable): building "
          "the base from Debian's packages instead", flush=True)
    return debian_base(cmd, env)


def pip_config() -> dict[str, str]:
    """The host's ``pip config list`` as key -> value (``global.cert``, ``:env:.find-links``...)."""
    try:
        out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True,
                             text=True).stdout
    except OSError:
        return {}  # no pip here: nothing of the host's to pass on
    pairs = (line.split("=", 1) for line in out.splitlines() if "=" in line)
    return {k.strip(): v.strip().strip("'\"") for k, v in pairs}


def pip_mounts(config: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """-> (``-v`` options, build arguments) giving the build the host's pip CA and local wheels."""
    def setting(name: str) -> str:
        for scope in (":env:", "global", "user", "site", "install"):
            if f"{scope}.{name}" in config:
                return config[f"{scope}.{name}"]
        return ""

    volumes, args = [], {}
    cert = setting("cert")
    if cert and Path(cert).is_file():
        # Mounted where the build looks for it; the base's own CA list stays as it is.
        volumes += ["-v", f"{cert}:/etc/stockdemo-build/ca.crt:ro"]
        args["PIP_CERT"] = "/etc/stockdemo-build/ca.crt"
    links = [p for p in setting("find-links").split() if Path(p).is_dir()]
    for i, folder in enumerate(links):
        volumes += ["-v", f"{folder}:/etc/stockdemo-build/wheels{i}:ro"]
    if links:
        args["PIP_FIND_LINKS"] = " ".join(f"/etc/stockdemo-build/wheels{i}" for i in range(len(links)))
        if any(glob.glob(f"{folder}/torch-*+cpu-*.whl") for folder in links):
            args["TORCH_INDEX"] = ""  # the CPU wheel is in the folder: no other index needed
    return volumes, args


def build(base: str = "auto", tag: str = TAG, cmd: list[str] | None = None) -> dict[str, float]:
    """Build the image -> {"seconds": build time, "mb": its size}. Exits on failure."""
    cmd = cmd or engine()
    env = engine_env(cmd)
    base = pick_base(cmd, env, base)
    volumes, args = ([], {}) if Path(cmd[0]).name != "podman" else pip_mounts(pip_config())
    build_args = [f"--build-arg=BASE={base}"] + [f"--build-arg={k}={v}" for k, v in args.items()]
    # podman writes OCI images unless told otherwise, and OCI has no HEALTHCHECK.
    image_format = ["--format", "docker"] if Path(cmd[0]).name == "podman" else []
    started = time.monotonic()
    done = run([*cmd, "build", "-f", str(DOCKERFILE), "-t", tag, *image_format, *build_args, *volumes,
                str(ROOT)], env)
    if done.returncode:
        sys.exit(f"image: the build failed ({done.returncode})")
    seconds = time.monotonic() - started
    size = subprocess.run([*cmd, "image", "inspect", "--format", "{{.Size}}", tag], env=env,
                          capture_output=True, text=True, check=True).stdout.strip()
    mb = int(size) / 1e6
    print(f"image: {tag} built in {seconds:.0f} s from {base}: {mb:.0f} MB", flush=True)
    return {"seconds": seconds, "mb": mb}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default=os.environ.get("BASE") or "auto",
                    help=f"auto (default: {OFFICIAL_BASE}, else Debian's packages), debian, "
                         "or any image name")
    ap.add_argument("--tag", default=TAG)
    ap.add_argument("--engine", choices=("podman", "docker"), help="default: podman if installed")
    args = ap.parse_args()
    build(args.base, args.tag, [args.engine] if args.engine else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
