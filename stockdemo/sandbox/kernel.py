"""The walls around one run, all enforced by the kernel: rlimits, Landlock, a seccomp allow-list.

``confine`` is called in the forked child, after it has closed every file
descriptor but its two pipes and before the learner's code is compiled. Once
it returns, nothing in this process can undo it (``no_new_privs``, an rlimit
lowered to its hard value, a Landlock domain and a seccomp filter only ever
tighten, and the filter refuses the calls that would change them).

- **its own session**, and when started as root, the user ``nobody``.
- **rlimits**: CPU seconds (soft = hard: the kernel kills with SIGKILL at the
  limit), address space (the child's size at the fork plus the memory budget),
  file size 0, 16 open files, 0 new processes (for a non-root user), no core
  dumps.
- **Landlock** (unprivileged, Linux 5.13+): the only files the process may
  open are beneath its empty working directory, read-only; no TCP bind or
  connect (ABI 4+); no signals to processes outside it, no abstract unix
  sockets (ABI 6+). Where Landlock is missing, the seccomp filter refuses
  every ``open`` instead.
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

import pyseccomp as seccomp

_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
OPEN_FILES = 16

# Landlock's uapi (include/uapi/linux/landlock.h): the same numbers on every architecture.
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
FS_READ_FILE, FS_READ_DIR = 1 << 2, 1 << 3
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


def landlock(workdir: str, abi: int) -> None:
    """Let this process open files only beneath ``workdir``, read-only; no TCP; no outside signals."""
    attr = _RulesetAttr(handled_access_fs=_fs_rights(abi))
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
        where = os.open(workdir, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            rule = _PathBeneath(allowed_access=FS_READ_FILE | FS_READ_DIR, parent_fd=where)
            _check(_libc.syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule),
                                 ctypes.c_uint32(0)), "landlock_add_rule")
        finally:
            os.close(where)
        _check(_libc.syscall(SYS_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)), "landlock_restrict_self")
    finally:
        os.close(ruleset)


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
O_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
AT_EMPTY_PATH = 0x1000
TCGETS = 0x5401
FCNTL_SAFE = (1, 2, 3, 4)  # F_GETFD, F_SETFD, F_GETFL, F_SETFL
NOBODY = 65534


def seccomp_filter(pid: int, files: bool) -> seccomp.SyscallFilter:
    """The allow-list for process ``pid``. ``files``: may open files read-only (Landlock says where)."""
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
    _allow(f, "ioctl", Arg(1, seccomp.EQ, TCGETS))  # isatty(), nothing else
    for command in FCNTL_SAFE:  # not F_SETOWN: SIGIO would be a signal to another process
        _allow(f, "fcntl", Arg(1, seccomp.EQ, command))
    _allow(f, "prlimit64", Arg(2, seccomp.EQ, 0))  # read its limits, never set them
    if files:
        _allow(f, "openat", Arg(2, seccomp.MASKED_EQ, O_WRITES, 0))
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


def vm_bytes() -> int:
    """This process's address space now (VmSize), from /proc/self/statm."""
    with open("/proc/self/statm", "rb") as f:  # bytes: decoding could need a module not loaded
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def yield_cpu() -> None:
    """Run only on CPU the pages leave: this session's autogroup at nice 19, this task idle-class.

    Where the kernel groups tasks by session (autogroup, in the root cgroup), a new session
    (``setsid`` above) weighs as much as a whole server's, and a nice or a class counts only
    inside its group: each endless loop got a server's share. In a container's cgroup there is
    no autogroup, and the idle class does it. Lowering needs no privilege.
    """
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write("19")
    except OSError:
        pass  # no autogroup here
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        pass  # the parent's nice stays


def confine(workdir: str, cpu_s: int, memory_mb: int, landlock_version: int, parent_pid: int) -> str:
    """Wall this process in (see the module docstring) -> 'landlock N' or 'no landlock'.

    Call with only the file descriptors the run needs open, with
    ``workdir`` existing and empty. Raises OSError if a wall cannot be built:
    the caller must then not run the code.
    """
    os.setsid()  # its own process group: a signal to "its group" reaches no one else
    yield_cpu()  # before the change of user: a session's autogroup is its owner's to lower
    if os.geteuid() == 0:  # root (a development box): run as nobody, one wall more
        os.chown(workdir, NOBODY, NOBODY)
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
    # After any change of user, which clears both settings.
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the warm parent gone (it is single-threaded): so is this run
    if os.getppid() != parent_pid:
        os._exit(1)  # the parent died before the line above
    _prctl(PR_SET_DUMPABLE, 0)  # no core file; its /proc entries belong to root
    os.chdir(workdir)
    _set_limit(resource.RLIMIT_CORE, 0)
    _set_limit(resource.RLIMIT_FSIZE, 0)
    _set_limit(resource.RLIMIT_NOFILE, OPEN_FILES)
    _set_limit(resource.RLIMIT_NPROC, 0)
    _set_limit(resource.RLIMIT_AS, vm_bytes() + memory_mb * 2**20)
    _set_limit(resource.RLIMIT_CPU, cpu_s)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    if landlock_version:
        landlock(workdir, landlock_version)
    seccomp_filter(os.getpid(), files=bool(landlock_version)).load()
    return f"landlock {landlock_version}" if landlock_version else "no landlock"
