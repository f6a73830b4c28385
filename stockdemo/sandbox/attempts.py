"""What a learner's code tried that the sandbox refuses, in words, from Python's audit events.

This names things; it enforces nothing. The kernel refuses (``kernel.py``),
and a program that reaches the system calls another way (``ctypes``) is
refused just the same, only with a plainer message. An audit hook
(``sys.addaudithook``, PEP 578) sees ``socket.__new__``, ``os.system``,
``open``... before the call is made, so when the call then fails, or when
the code carries on after a failure (``os.system`` only returns -1), the
learner is told what the sandbox refused: "the sandbox refused to open a
network socket (socket.socket(AF_INET, SOCK_STREAM))".

The words of what was tried are English msgids, made here in the run's child: the
server says them in the reader's language (``said``).
"""

from __future__ import annotations

import os
import socket
import sys

import torch

from stockdemo.graph.recorder import CODE_FILE
from stockdemo.i18n import N_, catalog, language

LEARNER_FILE = CODE_FILE
# Frames that act for themselves: what torch or stockdemo opens on its own (a stack
# trace's source lines, say) is theirs to handle, not the learner's attempt.
_OWN_DIRS = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,  # stockdemo/
             os.path.dirname(torch.__file__) + os.sep)
_IMPORTER = "<frozen importlib"
MAX_ATTEMPTS = 20
MAX_DETAIL = 120
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

# Audit event -> what the code tried, in words (each always refused by the kernel).
REFUSED = {
    "os.system": N_("run a shell command"),
    "subprocess.Popen": N_("start another program"),
    "os.exec": N_("replace itself with another program (exec)"),
    "os.posix_spawn": N_("start another program"),
    "os.spawn": N_("start another program"),
    "os.fork": N_("start a new process (fork)"),
    "os.forkpty": N_("start a new process with a terminal (forkpty)"),
    "os.killpg": N_("send a signal to a process group"),
    "signal.pthread_kill": N_("send a signal to a thread"),
    "socket.getaddrinfo": N_("look up a network address"),
    "socket.gethostbyname": N_("look up a network address"),
    "socket.gethostbyaddr": N_("look up a network address"),
    "urllib.Request": N_("open a web address"),
    "os.symlink": N_("make a link"), "os.link": N_("make a link"),
    "os.chmod": N_("change a file"), "os.chown": N_("change a file"),
    "os.utime": N_("change a file"), "os.chdir": N_("change its working directory"),
    "resource.setrlimit": N_("change its own limits"), "resource.prlimit": N_("change its own limits"),
}
# Allowed in the run's own folder (with Landlock), refused anywhere else.
OWN_FOLDER = {"os.remove": N_("delete a file outside its own folder"),
              "os.rmdir": N_("delete a folder outside its own folder"),
              "os.mkdir": N_("make a folder outside its own folder"),
              "os.rename": N_("rename a file outside its own folder"),
              "os.truncate": N_("change a file outside its own folder")}


class Attempts:
    """The audit hook of one run: ``tried`` lists (what, detail), oldest first, at most 20."""

    def __init__(self, workdir: str, preloaded: frozenset[str], readable: tuple[str, ...] = ()) -> None:
        """``readable``: the folders the run may read besides its own (the interpreter's
        installation); with none, files are refused everywhere but their own folder and
        modules not loaded already cannot be imported (no Landlock here)."""
        self.workdir = workdir.rstrip(os.sep) + os.sep
        self.preloaded = preloaded
        self.readable = tuple(d.rstrip(os.sep) + os.sep for d in readable)
        self.files = bool(readable)
        self.tried: list[tuple[str, str]] = []

    def install(self) -> None:
        sys.addaudithook(self.hook)  # for the rest of this process's life: it is the run's

    def hook(self, event: str, args: tuple) -> None:
        try:
            what = self._what(event, args)
        except Exception:  # a hook must never break the code it watches
            return
        if what is not None and len(self.tried) < MAX_ATTEMPTS and _by_learner(sys._getframe(1), event):
            self.tried.append((what, _short(_detail(event, args))))

    def _what(self, event: str, args: tuple) -> str | None:
        if event in REFUSED:
            return REFUSED[event]
        if event in OWN_FOLDER:
            inside = self.files and self._inside(args[0]) and (
                event != "os.rename" or self._inside(args[1]))
            return None if inside else OWN_FOLDER[event]
        if event == "socket.__new__":
            unix = _enum_name(socket.AddressFamily, args[1]) == "AF_UNIX"
            return N_("open a unix socket") if unix else N_("open a network socket")
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int):
                return None
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS)
            if self._inside(path):
                return None if self.files or not writing else N_("write a file")
            if writing:
                return N_("write a file outside its own folder")
            return None if self._readable(path) else N_("read a file outside its own folder")
        if event == "os.listdir":
            return None if self._inside(args[0]) or self._readable(args[0]) else \
                N_("list a folder outside its own folder")
        if event == "os.kill":
            return None if args[0] == os.getpid() else N_("send a signal to another process")
        if event == "import":
            name = args[0]
            if self.files or name in sys.modules or name.split(".")[0] in self.preloaded:
                return None
            return N_("load a module that is not loaded already")
        if event == "ctypes.dlopen" and args[0] not in (None, ""):
            return N_("load a native library")
        return None

    def _inside(self, path: object) -> bool:
        if path is None or isinstance(path, int):
            return True
        text = os.fsdecode(os.fspath(path))
        full = os.path.normpath(os.path.join(self.workdir, text))
        return (full + os.sep).startswith(self.workdir)

    def _readable(self, path: object) -> bool:
        if not self.readable or path is None or isinstance(path, int):
            return False
        full = os.path.realpath(os.path.join(self.workdir, os.fsdecode(os.fspath(path))))
        return (full + os.sep).startswith(self.readable)

    def last(self, starting: str = "") -> tuple[str, str] | None:
        """The newest attempt (whose words start with ``starting``)."""
        return next((t for t in reversed(self.tried) if t[0].startswith(starting)), None)

    def words(self) -> list[str]:
        """Each refusal once, in words: 'run a shell command (os.system('ls'))'."""
        seen: dict[str, str] = {}
        for what, detail in self.tried:
            seen.setdefault(what, detail)
        return [f"{what} ({detail})" for what, detail in seen.items()]


def said(attempt: str) -> str:
    """One of ``Attempts.words()`` ("run a shell command (os.system('ls'))", English, from the
    run's child) in the language spoken now: its words said, the call left as the code made it."""
    table = catalog(language())
    cuts = [i for i in range(len(attempt), 0, -1) if i == len(attempt) or attempt.startswith(" (", i)]
    for cut in cuts:  # the longest words with a translation: some hold a parenthesis themselves
        words = table.gettext(attempt[:cut])
        if words != attempt[:cut]:
            return words + attempt[cut:]
    return attempt


def _by_learner(frame, event: str) -> bool:
    """Did the learner's code make this call, itself or through the standard library?

    The import system's own file lookups are not: an import that fails says so itself.
    """
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename == LEARNER_FILE:
            return True
        if filename.startswith(_OWN_DIRS) or (event != "import" and filename.startswith(_IMPORTER)):
            return False
        frame = frame.f_back
    return False


def _detail(event: str, args: tuple) -> str:
    """The call as the learner would recognise it: 'import pandas', 'socket.socket(AF_INET, ...)'."""
    if event == "import":
        return f"import {args[0]}"
    if event == "socket.__new__":
        return f"socket.socket({_enum_name(socket.AddressFamily, args[1])}, " \
               f"{_enum_name(socket.SocketKind, args[2])})"
    return f"{event}{_args_text(args)}"


def _enum_name(kind: type, value: object) -> str:
    try:
        return kind(value).name
    except (ValueError, TypeError):
        return str(value)[:20]


def _args_text(args: tuple) -> str:
    shown = []
    for a in args[:3]:
        if isinstance(a, int) and isinstance(getattr(a, "name", None), str):
            shown.append(a.name)  # AF_INET, SOCK_STREAM, SIGKILL
        elif isinstance(a, str | bytes | int | float) or a is None:
            shown.append(repr(a)[:60])
        elif isinstance(a, list | tuple):
            shown.append(repr([x for x in a[:4] if isinstance(x, str | bytes | int)])[:60])
        else:
            shown.append(getattr(a, "name", type(a).__name__)[:40])
    return "(" + ", ".join(shown) + ")"


def _short(text: str) -> str:
    return text if len(text) <= MAX_DETAIL else text[:MAX_DETAIL - 1] + "…"
