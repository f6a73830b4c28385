"""JupyterLab and marimo from PyPI on loopback ports, and a notebook driven by Playwright.

Used by tests/browser/test_notebook_browser.py and bench/notebook_zoom.py. JupyterLab runs
with its own config, runtime, settings and workspace folders (nothing of the machine's is
read or left behind), no token (``--IdentityProvider.token=``), and the news feed off (a
request to the network and a toast over the notebook). The kernels import ``stockdemo``
from this checkout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import nbformat
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from harness.helpers import ROOT, free_port, wait_until

NO_NEWS = {"fetchNews": "false", "checkForUpdates": False}
VIEW = ".jp-OutputArea .gv[data-drawn-graph]"


@contextmanager
def jupyterlab(folder: Path, timeout: float = 120.0) -> Iterator[str]:
    """``jupyter lab`` serving ``folder`` -> its base URL while the block runs; stopped after."""
    settings = folder / ".lab" / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps(NO_NEWS))
    env = {"JUPYTER_CONFIG_DIR": str(folder / ".lab" / "config"),
           "JUPYTER_RUNTIME_DIR": str(folder / ".lab" / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(folder / ".lab" / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(folder / ".lab" / "workspaces")}
    port = free_port()
    with _serving(["jupyter", "lab", "--allow-root", "--IdentityProvider.token=", "--no-browser",
                   f"--port={port}", "--ServerApp.ip=127.0.0.1", f"--ServerApp.root_dir={folder}"],
                  folder, env, f"http://127.0.0.1:{port}", "/api/status", timeout) as url:
        yield url


@contextmanager
def marimo_app(app: Path, timeout: float = 120.0) -> Iterator[str]:
    """``marimo run app`` (read-only, as a reader sees it) -> its URL while the block runs."""
    port = free_port()
    with _serving(["marimo", "run", str(app), "--headless", f"--port={port}", "--host=127.0.0.1"],
                  app.parent, {}, f"http://127.0.0.1:{port}", "/", timeout) as url:
        yield url


@contextmanager
def _serving(command: list[str], folder: Path, env: dict[str, str], url: str, probe: str,
             timeout: float) -> Iterator[str]:
    """``python -m command`` in ``folder``, the kernel's imports from this checkout, until
    ``url + probe`` answers -> ``url``; the server is stopped after, its output in .server.log."""
    log_path = folder / ".server.log"
    log = log_path.open("w")
    proc = subprocess.Popen([sys.executable, "-m", *command], cwd=folder,
                            env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        def answering() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"{command[0]} exited: {log_path.read_text()}")
            with urllib.request.urlopen(url + probe, timeout=1):
                return True

        try:
            wait_until(answering, timeout, f"{command[0]} answering", interval=0.2)
        except AssertionError:
            raise RuntimeError(f"{command[0]} did not answer within {timeout:.0f} s") from None
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def write_notebook(path: Path, cells: list[str]) -> Path:
    """A notebook of code cells with the python3 kernel named (else JupyterLab asks which)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(code) for code in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


def open_notebook(page, url: str, name: str, timeout: float = 120_000) -> None:
    """Open notebook ``name`` and wait until its kernel is idle and connected (a cell run
    before the notebook has a kernel is dropped, and the indicator says idle before that)."""
    with page.expect_websocket(lambda ws: "/api/kernels/" in ws.url, timeout=timeout):
        page.goto(f"{url}/lab/tree/{name}")
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=timeout)
        page.wait_for_selector(".jp-Spinner", state="detached", timeout=timeout)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=timeout)


def run_cell(page, index: int, timeout: float = 300_000) -> str:
    """Run cell ``index`` (Shift+Enter in its editor) and wait for it -> its output's text.

    A request the kernel never took (the prompt still blank after a while: the front end
    said idle before its connection was ready) is sent again.
    """
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    prompt = cell.locator(".jp-InputPrompt")
    before = prompt.inner_text().strip()
    for attempt in range(3):
        cell.locator(".jp-InputArea-editor").click()  # focus stays in a widget after a click there
        page.keyboard.press("Shift+Enter")
        try:
            page.wait_for_function(
                """([i, before]) => {
                    const p = document.querySelectorAll('.jp-Notebook .jp-Cell')[i]
                      .querySelector('.jp-InputPrompt').textContent.trim();
                    return p !== before && /\\[(\\*|\\d+)\\]/.test(p);
                }""", arg=[index, before], timeout=15_000)
            break
        except PlaywrightTimeout:
            print(f"\ncell {index}: not taken in 15 s, sent again")
            if attempt == 2:
                raise
    page.wait_for_function(
        """([i, before]) => {
            const p = document.querySelectorAll('.jp-Notebook .jp-Cell')[i]
              .querySelector('.jp-InputPrompt').textContent.trim();
            return p !== before && /\\[\\d+\\]/.test(p);
        }""", arg=[index, before], timeout=timeout)
    return cell.locator(".jp-OutputArea").inner_text()
