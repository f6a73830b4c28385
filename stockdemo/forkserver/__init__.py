"""One warm process per server that forks both the sandbox's runs and training's workers.

    from stockdemo.forkserver import shared
    channel, process = shared().connect("sandbox")     # a pool's own channel to it

A fresh ``import torch`` takes 1.5-2 s and about 250 MB; a fork of a process that already
has it takes milliseconds and shares those pages until they are written. So one process,
started as a clean subprocess of the server, imports torch and what both kinds of child
need, warms both once (the kinds whose pools are loaded: a server's both, the command
line's the sandbox alone; ``want``), freezes its heap, and then only forks. Before, the
sandbox and the training pool each had a warm parent of their own (docs/decisions.md has
the memory saved).

- ``client.py``: the server's side: the process started, replaced, and a channel per pool;
- ``wire.py``: what crosses (JSON frames, and file descriptors);
- ``walls.py``: what every child walls itself in with (the sandbox adds its own);
- ``handler.py``: what the process's loop and each kind's handler give each other;
- ``process.py``: the process itself: the warm-up, its select loop, forks and reaping. It
  sits above what it forks (``sandbox/``, ``train/``); the rest sits at the foundation, so
  that every pool may ask it.
"""

from stockdemo.forkserver.client import ForkServer, clean_env, shared, want

__all__ = ["ForkServer", "clean_env", "shared", "want"]
