"""The Debian packages each make command needs: installed with apt-get when root, else named.

    python3 deploy/system.py test     # make test: browsers, HAProxy, Redis, containers, sandbox
    python3 deploy/system.py serve    # make serve: HAProxy, Redis and the sandbox's libseccomp

Exits 0 when everything is there (after installing it, as root), 1 with the one command
to run when it is not root, so a missing part fails the command instead of skipping tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

# Debian package -> the file that shows it is installed.
SERVE = {
    "haproxy": "/usr/sbin/haproxy",
    "redis-server": "/usr/bin/redis-server",
    "libseccomp2": "/usr/lib/x86_64-linux-gnu/libseccomp.so.2",  # the sandbox's system call filter
}
TEST = {
    **SERVE,
    "chromium": "/usr/bin/chromium",  # the browser tests (Playwright drives Debian's Chromium)
    "podman": "/usr/bin/podman",  # the image and the cluster manifests (tests/test_image.py, test_kube.py)
    "runc": "/usr/sbin/runc",  # podman's runtime here: crun refuses this machine's hybrid cgroups
    "debootstrap": "/usr/sbin/debootstrap",  # the image's base, where no registry can be reached
    # Chinese glyphs for the browser tests and screenshots in zh_CN (the app ships no font)
    "fonts-noto-cjk": "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
}
NEEDS = {"serve": SERVE, "test": TEST}


def _installed(package: str, marker: str) -> bool:
    if os.path.exists(marker):
        return True
    try:  # another architecture keeps libraries elsewhere: ask dpkg
        status = subprocess.run(["dpkg-query", "-W", "-f", "${db:Status-Status}", package],
                                capture_output=True, text=True, check=False).stdout
    except FileNotFoundError:
        return False
    return status.strip() == "installed"


def missing(command: str) -> list[str]:
    """The Debian packages ``command`` needs that are not installed."""
    return [package for package, marker in NEEDS[command].items() if not _installed(package, marker)]


def ensure(command: str) -> None:
    """Install what ``command`` needs (as root, with apt-get), or exit naming the one command to run."""
    packages = missing(command)
    if not packages:
        return
    listed = " ".join(packages)
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        sys.exit(f"make {command} needs Debian's {listed}. Install them with:\n"
                 f"    sudo apt-get install -y {listed}")
    print(f"make {command}: installing Debian's {listed} (apt-get)", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", *packages], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    still = missing(command)
    if still:
        sys.exit(f"make {command}: apt-get ran, but {' '.join(still)} is still missing")


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in NEEDS:
        print(f"usage: python3 deploy/system.py {{{','.join(NEEDS)}}}", file=sys.stderr)
        sys.exit(2)
    ensure(sys.argv[1])
