"""The walls around one run, all enforced by the kernel: rlimits, Landlock, a seccomp allow-list.

``confine`` is called in the forked child, after it has closed every file
descriptor but its two pipes and before the learner's code is compiled. Once
it returns, nothing in this process can undo it (``no_new_privs``, an rlimit
lowered to its hard value, a Landlock domain and a seccomp filter only ever
tighten, and the filter refuses the calls that would change them).

- **its own session**, and when started as root, the user ``nobody``.
- **rlimits**: CPU seconds (soft = hard: the kernel kills with SIGKILL at the
  limit), address space (the child's size at the fork plus the memory budget),
  the size of any one file it writes, 16 open files, 0 new processes (for a
  non-root user), no core dumps.
- **Landlock** (unprivileged, Linux 5.13+): the process may read, write, make
  and remove files beneath its own empty working directory (the run's folder,
  removed when the run ends), and read the interpreter's own installation (its
  standard library and site-packages: ``interpreter_dirs``) and, by name, the
  files the dynamic loader reads (``LOADER_FILES``). Nothing else: not
  ``/etc``, not ``/proc``, not the app's source, not another run's folder. No
  TCP bind or connect (ABI 4+); no signals to processes outside it, no
  abstract unix sockets (ABI 6+). Where Landlock is missing, the seccomp
  filter refuses every ``open`` instead (only modules already loaded import).
  Run as root, the process becomes ``nobody`` and keeps one capability,
  ``CAP_DAC_READ_SEARCH``, so that it can read an interpreter installed under
  ``/root`` (mode 700): Landlock still bounds what it reads, and the seccomp
  filter refuses ``open_by_handle_at``.
- **seccomp** (libseccomp through ``pyseccomp``): an allow-list written from
  what a PyTorch forward, Python's own machinery and a ``print`` call here
  (``strace -f -c`` of the child, docs/decisions.md). Everything else fails
  with ``EPERM``: sockets, ``execve``, ``fork``/``clone`` (no processes,
  no threads), ``ptrace``, ``mount``, ``unshare``, ``kill`` of anyone but
  itself, ``open`` for writing. Syscalls of another architecture (i386 on
  x86_64) kill the process.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import signal
import sys
import sysconfig

import pyseccomp as seccomp

from stockdemo.forkserver import walls

_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_KEEPCAPS, PR_SET_NO_NEW_PRIVS = 1, 4, 8, 38
CAP_DAC_READ_SEARCH = 2
_CAPABILITY_VERSION_3 = 0x20080522
OPEN_FILES = 16

# Landlock's uapi (include/uapi/linux/landlock.h): the same numbers on every architecture.
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 1, 1 << 2, 1 << 3
FS_REMOVE_DIR, FS_REMOVE_FILE, FS_MAKE_DIR, FS_MAKE_REG = 1 << 4, 1 << 5, 1 << 7, 1 << 8
FS_REFER, FS_TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
READ_ONLY = FS_READ_FILE | FS_READ_DIR
# The run's own folder: files and folders made, written, read, renamed and removed there.
OWN_FOLDER = (READ_ONLY | FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_DIR | FS_MAKE_REG
              | FS_REFER | FS_TRUNCATE)
# What the dynamic loader reads to find a library (a C extension's dependencies), by name.
LOADER_FILES = ("/etc/ld.so.cache",)
# Every filesystem right each ABI knows: handled (so refused) unless a rule grants it.
_FS_RIGHTS = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 where there is none (old kernel, or a container's
    seccomp profile that refuses the call)."""
    version = _libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                            ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(0, version)


def _fs_rights(abi: int) -> int:
    return _FS_RIGHTS[max(k for k in _FS_RIGHTS if k <= abi)]


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def interpreter_dirs() -> tuple[str, ...]:
    """The interpreter's own installation: its standard library, its compiled modules and every
    site-packages folder on ``sys.path``. Never the working directory or the app's source."""
    paths = sysconfig.get_paths()
    prefixes = tuple(os.path.realpath(p) + os.sep for p in {sys.prefix, sys.base_prefix, sys.exec_prefix})
    found = {paths["stdlib"], paths["platstdlib"], paths["purelib"], paths["platlib"]}
    found |= {p for p in sys.path if p and os.path.isabs(p)
              and (os.path.realpath(p) + os.sep).startswith(prefixes)}
    dirs = {os.path.realpath(p) for p in found if os.path.isdir(p)}
    # The stdlib of a venv's Python contains the venv's lib folder: keep the widest of nested ones.
    return tuple(sorted(d for d in dirs if not any(d.startswith(o + os.sep) for o in dirs if o != d)))


def landlock(workdir: str, abi: int, readable: tuple[str, ...] = ()) -> None:
    """Let this process reach files only beneath ``workdir`` (its own) and read ``readable``
    (folders or single files); no TCP; no outside signals."""
    handled = _fs_rights(abi)
    attr = _RulesetAttr(handled_access_fs=handled)
    size = 8  # ABI 1-3 know handled_access_fs only
    if abi >= 4:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
        size = 16
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
    ruleset = _check(_libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                                   ctypes.c_uint32(0)), "landlock_create_ruleset")
    try:
        _rule(ruleset, workdir, OWN_FOLDER & handled)
        for path in readable:
            try:
                _rule(ruleset, path, READ_ONLY if os.path.isdir(path) else FS_READ_FILE)
            except FileNotFoundError:
                continue  # no loader cache on this system: nothing to read
        _check(_libc.syscall(SYS_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _rule(ruleset: int, path: str, rights: int) -> None:
    where = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        rule = _PathBeneath(allowed_access=rights, parent_fd=where)
        _check(_libc.syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule),
                             ctypes.c_uint32(0)), "landlock_add_rule")
    finally:
        os.close(where)


# What the child may call (strace -f -c of the seed, a loop with prints, a memory bomb,
# a traceback, a sleep). Names missing on an architecture are skipped.
ALLOWED = (
    # memory
    "brk", "mmap", "munmap", "mremap", "mprotect", "madvise",
    # its own pipes, stdin (/dev/null), files it opened read-only
    "read", "readv", "pread64", "write", "writev", "close", "lseek", "fstat", "getdents64",
    # threads' and signals' plumbing, time, sleep (the wall clock bounds it), exit
    "futex", "set_robust_list", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack",
    "restart_syscall", "clock_gettime", "clock_getres", "gettimeofday", "time",
    "clock_nanosleep", "nanosleep", "select", "pselect6", "poll", "ppoll", "sched_yield",
    "exit", "exit_group",
    # facts about itself
    "getpid", "gettid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getrandom",
    "getrusage", "times", "uname", "getcwd", "sched_getaffinity",
)
# With Landlock, what files and folders need: Landlock decides where, these only let the call be made.
FILE_CALLS = (
    "open", "openat", "stat", "lstat", "newfstatat", "statx", "access", "faccessat", "faccessat2",
    "readlink", "readlinkat", "unlink", "unlinkat", "mkdir", "mkdirat", "rmdir", "rename", "renameat",
    "renameat2", "ftruncate", "fsync", "fdatasync", "pwrite64", "pwritev", "fallocate",
)
AT_EMPTY_PATH = 0x1000
TCGETS = 0x5401
FD_CLOEXEC_IOCTLS = (0x5450, 0x5451)  # FIONCLEX, FIOCLEX
FCNTL_SAFE = (1, 2, 3, 4)  # F_GETFD, F_SETFD, F_GETFL, F_SETFL
NOBODY = 65534


def seccomp_filter(pid: int, files: bool) -> seccomp.SyscallFilter:
    """The allow-list for process ``pid``. ``files``: may open, make and remove files (Landlock
    says where: without it, no file at all)."""
    f = seccomp.SyscallFilter(seccomp.ERRNO(errno.EPERM))
    for name in ALLOWED:
        _allow(f, name)
    Arg = seccomp.Arg
    # Signals: only to itself (os.abort raises SIGABRT with tgkill).
    _allow(f, "kill", Arg(0, seccomp.EQ, pid))
    _allow(f, "tgkill", Arg(0, seccomp.EQ, pid))
    _allow(f, "tkill", Arg(0, seccomp.EQ, pid))
    # fstat of an open file descriptor, never of a path.
    _allow(f, "newfstatat", Arg(3, seccomp.MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH))
    _allow(f, "statx", Arg(2, seccomp.MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH))
    _allow(f, "ioctl", Arg(1, seccomp.EQ, TCGETS))  # isatty()
    for request in FD_CLOEXEC_IOCTLS:  # a descriptor's own close-on-exec flag (os.set_inheritable)
        _allow(f, "ioctl", Arg(1, seccomp.EQ, request))
    for command in FCNTL_SAFE:  # not F_SETOWN: SIGIO would be a signal to another process
        _allow(f, "fcntl", Arg(1, seccomp.EQ, command))
    _allow(f, "prlimit64", Arg(2, seccomp.EQ, 0))  # read its limits, never set them
    if files:
        for name in FILE_CALLS:
            _allow(f, name)
    return f


def _allow(f: seccomp.SyscallFilter, name: str, *args: seccomp.Arg) -> None:
    try:
        f.add_rule(seccomp.ALLOW, name, *args)
    except (ValueError, OSError):
        pass  # not a syscall of this architecture


def _prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), f"prctl({option})")


def _set_limit(which: int, value: int) -> None:
    resource.setrlimit(which, (value, value))


def yield_cpu(pid: int = 0) -> None:
    """Run only on CPU the pages leave: ``pid``'s session's autogroup at nice 19 (``lower_group``),
    the task idle-class. 0: this process. The fork server calls it for each run once the run
    has used its grace of CPU (``watch.GRACE_CPU_S``): a class's short programs run as fast
    as a page, a long one yields.

    Where the kernel groups tasks by session (autogroup, in the root cgroup), a new session
    (``setsid`` below) weighs as much as a whole server's, and a nice or a class counts only
    inside its group: each endless loop got a server's share. In a container's cgroup there is
    no autogroup, and the idle class does it. Lowering needs no privilege.
    """
    lower_group(pid)
    try:
        os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        pass  # the fork server's nice stays


def lower_group(pid: int = 0) -> None:
    """``pid``'s session's autogroup at nice 19 (0: this process's). Its /proc file is its
    owner's to write, and root's once the run is not dumpable: a fork server not run as root
    cannot, so there the run lowers its own group at once (``confine``)."""
    try:
        with open(f"/proc/{pid or 'self'}/autogroup", "w") as f:
            f.write("19")
    except OSError:
        pass  # no autogroup here, or not ours to lower


def confine(workdir: str, cpu_s: int, memory_mb: int, landlock_version: int, parent_pid: int,
            file_mb: int = 16) -> str:
    """Wall this process in (see the module docstring) -> 'landlock N' or 'no landlock'.

    Call with only the file descriptors the run needs open, with
    ``workdir`` existing and empty. Raises OSError if a wall cannot be built:
    the caller must then not run the code.
    """
    os.setsid()  # its own process group: a signal to "its group" reaches no one else
    if os.geteuid() != 0:
        lower_group()  # the fork server may not, later (the idle class it sets after the run's grace)
    if os.geteuid() == 0:  # root (a development box): run as nobody, one wall more
        os.chown(workdir, NOBODY, NOBODY)
        if landlock_version:
            _prctl(PR_SET_KEEPCAPS, 1)  # through the change of user, for _read_past_modes
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
        if landlock_version:
            _read_past_modes()
    # After any change of user, which clears both settings.
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the fork server gone (it is single-threaded): so is this run
    if os.getppid() != parent_pid:
        os._exit(1)  # the fork server died before the line above
    _prctl(PR_SET_DUMPABLE, 0)  # no core file; its /proc entries belong to root
    os.chdir(workdir)
    _set_limit(resource.RLIMIT_CORE, 0)
    _set_limit(resource.RLIMIT_FSIZE, file_mb * 2**20 if landlock_version else 0)
    _set_limit(resource.RLIMIT_NOFILE, OPEN_FILES)
    _set_limit(resource.RLIMIT_NPROC, 0)
    _set_limit(resource.RLIMIT_AS, walls.vm_bytes() + memory_mb * 2**20)
    _set_limit(resource.RLIMIT_CPU, cpu_s)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    if landlock_version:
        landlock(workdir, landlock_version, (*interpreter_dirs(), *LOADER_FILES))
    seccomp_filter(os.getpid(), files=bool(landlock_version)).load()
    return f"landlock {landlock_version}" if landlock_version else "no landlock"


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _read_past_modes() -> None:
    """As ``nobody`` after root: keep only CAP_DAC_READ_SEARCH, so that the interpreter's files
    under a folder like /root (mode 700) can be read; Landlock says which files."""
    header = _CapHeader(_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    data[0].effective = data[0].permitted = 1 << CAP_DAC_READ_SEARCH
    _check(_libc.capset(ctypes.byref(header), data), "capset")
