"""What a sandboxed game process may not ask of the kernel: the seccomp filter of
``isolation: sandbox`` (docs/security.md lists it).

A game never needs a kernel object it could share with another sandbox or with the host
(keyrings), a way to watch the host's files (inotify, fanotify), to look into or trace another
process, to mount or enter namespaces, or memory that no limit counts. :data:`DENIED` are the
system calls refused; each returns ``EPERM`` (never a kill: a library that probes one goes
on). ``clone3`` returns ``ENOSYS`` (its flags are behind a pointer, which a filter cannot
read; the C library then uses ``clone``, whose namespace flags are refused), and
``rt_sigaction`` may not change ``SIGCHLD`` (a process ignoring it has its children reaped
by the kernel, their CPU time counted nowhere: see the game's CPU budget in
:mod:`dixit_lab.isolation.sandbox_template`). Any other architecture's system calls (the 32-bit
and x32 ABIs) kill the process.

The filter is compiled here, in the engine, with libseccomp's ctypes binding (PyPI's
``pyseccomp``, in the ``sandbox`` extra) into classic BPF; the game process loads those bytes
with one ``prctl`` before it imports its agent (:func:`load`), so nothing inside the sandbox
needs libseccomp. Without the binding, :func:`filter_problem` says so in one line and no
sandbox starts.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import tempfile
from typing import Any

__all__ = ["CLONE_NAMESPACES", "DENIED", "compiled", "filter_problem", "join_new_keyring",
           "load"]

#: the system calls refused with EPERM, by what they would reach
DENIED: dict[str, tuple[str, ...]] = {
    "kernel keyrings": ("keyctl", "add_key", "request_key"),
    "watching files": ("inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init",
                       "fanotify_mark"),
    "other processes": ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
                        "pidfd_getfd"),
    "kernel interfaces": ("perf_event_open", "bpf", "userfaultfd", "io_uring_setup",
                          "io_uring_enter", "io_uring_register"),
    "mounts": ("mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen",
               "fsmount", "fsconfig", "fspick", "mount_setattr", "chroot"),
    "namespaces": ("unshare", "setns"),
    "memory no limit counts": ("shmget", "memfd_create"),
    "the kernel itself": ("kexec_load", "kexec_file_load", "init_module", "finit_module",
                          "delete_module", "reboot", "swapon", "swapoff", "acct",
                          "quotactl", "syslog"),
}

#: ``clone``'s flags that make a namespace (each refused with EPERM)
CLONE_NAMESPACES = {"CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000,
                    "CLONE_NEWUTS": 0x04000000, "CLONE_NEWIPC": 0x08000000,
                    "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
                    "CLONE_NEWNET": 0x40000000}

_SIGCHLD = 17
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_KEYCTL_JOIN_SESSION_KEYRING = 1


def _binding() -> Any:
    import pyseccomp

    return pyseccomp


def filter_problem() -> str | None:
    """None if the filter can be compiled here, else one line saying what is missing."""
    try:
        compiled()
    except ImportError:
        return ("isolation: sandbox needs libseccomp's Python binding for its system-call "
                "filter: pip install 'dixit-lab[sandbox]' (pyseccomp; Debian: apt-get install "
                "libseccomp2)")
    except (OSError, RuntimeError, ValueError) as error:
        return f"isolation: sandbox cannot compile its system-call filter here: {error}"
    return None


@functools.lru_cache(maxsize=1)
def compiled() -> tuple[bytes, int]:
    """The filter as classic BPF (8 bytes an instruction) and the native number of
    ``keyctl`` (for :func:`join_new_keyring`). Raises ImportError without the binding,
    ValueError where libseccomp does not know a system call of :data:`DENIED`."""
    seccomp = _binding()
    native = seccomp.system_arch()
    unknown = [name for names in DENIED.values() for name in names
               if seccomp.resolve_syscall(native, name) < 0]
    unknown += [name for name in ("clone", "clone3", "rt_sigaction", "keyctl")
                if seccomp.resolve_syscall(native, name) < 0]
    if unknown:
        raise ValueError(f"this libseccomp does not know {', '.join(unknown)} (2.5 or later "
                         f"is needed)")
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    rules.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
    denied = seccomp.ERRNO(errno.EPERM)
    for names in DENIED.values():
        for name in names:
            rules.add_rule(denied, name)
    for flag in CLONE_NAMESPACES.values():
        rules.add_rule(denied, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    rules.add_rule(denied, "rt_sigaction", seccomp.Arg(0, seccomp.EQ, _SIGCHLD),
                   seccomp.Arg(1, seccomp.NE, 0))
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        program = out.read()
    if not program or len(program) % 8:
        raise RuntimeError(f"libseccomp exported {len(program)} bytes of BPF")
    return program, seccomp.resolve_syscall(native, "keyctl")


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load(libc: Any, program: bytes) -> None:
    """Load ``program`` (from :func:`compiled`) into the calling thread, and the threads and
    processes it starts later; raises OSError if the kernel refuses it."""
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p).value)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"the system-call filter was refused: {errno.errorcode.get(error)}")


def join_new_keyring(libc: Any, keyctl: int) -> None:
    """Leave every session keyring this process shares (the engine's, its login's): join a
    new anonymous one, its own (``keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL)``)."""
    libc.syscall.restype = ctypes.c_long
    if libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(_KEYCTL_JOIN_SESSION_KEYRING),
                    ctypes.c_void_p(None)) < 0:
        error = ctypes.get_errno()
        raise OSError(error, f"a new session keyring was refused: {errno.errorcode.get(error)}")
