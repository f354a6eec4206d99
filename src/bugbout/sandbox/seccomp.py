"""A seccomp filter for confined processes: the system calls an agent or a test never
needs, refused.

The filter is a classic BPF program, as ``bwrap --seccomp FD`` loads it (and as
``prctl(PR_SET_SECCOMP)`` takes it). It refuses, with ``EPERM``:

- mounting and the new mount API, ``pivot_root``, ``chroot``, ``setns``, and ``clone``
  or ``unshare`` with a namespace flag (no new user namespace in which a process would
  hold capabilities again); ``clone3``, whose flags a filter cannot read, answers
  ``ENOSYS``, so the C library falls back to ``clone``;
- loading code into the kernel: modules, ``kexec``, ``bpf``;
- the kernel's keyring, ``perf_event_open``, ``userfaultfd``, ``io_uring`` (``ENOSYS``:
  programs fall back to ordinary calls), file handles (``open_by_handle_at``);
- other processes' memory: ``ptrace``, ``process_vm_readv``/``writev``;
- machine-wide settings: the clocks, ``reboot``, swap, accounting, quotas, the kernel
  log, port I/O, and ``personality`` but for the values a program may ask for
  (``PER_LINUX``, ``PER_LINUX32``, ``UNAME26``, and the query ``0xffffffff``): no
  switching off address randomisation;
- every call of another architecture's ABI (32-bit or x32 calls on x86_64), which
  would bypass the numbers above: the process is killed.

Example::

    program = seccomp_program("x86_64")     # bytes, or None on another processor
"""

from __future__ import annotations

import errno
import struct

# Classic BPF, as <linux/filter.h> and <linux/seccomp.h> define it.
_LOAD = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_ERRNO = 0x00050000
_NR, _ARCH, _ARG0 = 0, 4, 16
"""Offsets in ``struct seccomp_data``: the call's number, its ABI, its first argument
(the low 32 bits on a little-endian machine)."""

_X32_BIT = 0x40000000
NAMESPACE_FLAGS = 0x7E020080
"""``CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME``."""
PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)
"""The ``personality`` values allowed: Linux, 32-bit Linux, ``UNAME26``, both, the query."""

REFUSED = (
    "mount", "umount2", "pivot_root", "chroot", "setns", "fsopen", "fsconfig", "fsmount",
    "fspick", "move_mount", "open_tree", "mount_setattr",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "bpf",
    "keyctl", "add_key", "request_key", "perf_event_open", "userfaultfd",
    "open_by_handle_at", "name_to_handle_at", "lookup_dcookie",
    "ptrace", "process_vm_readv", "process_vm_writev",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "iopl", "ioperm",
    "vhangup", "nfsservctl", "uselib",
)  # fmt: skip
"""Calls refused with ``EPERM`` whatever their arguments."""
ABSENT = ("clone3", "io_uring_setup", "io_uring_enter", "io_uring_register")
"""Calls answered ``ENOSYS``, as on a kernel without them: callers fall back."""

_X86_64 = {
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "setns": 308,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "move_mount": 429,
    "open_tree": 428, "mount_setattr": 442, "init_module": 175, "finit_module": 313,
    "delete_module": 176, "kexec_load": 246, "kexec_file_load": 320, "bpf": 321,
    "keyctl": 250, "add_key": 248, "request_key": 249, "perf_event_open": 298,
    "userfaultfd": 323, "open_by_handle_at": 304, "name_to_handle_at": 303,
    "lookup_dcookie": 212, "ptrace": 101, "process_vm_readv": 310,
    "process_vm_writev": 311, "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163,
    "quotactl": 179, "quotactl_fd": 443, "syslog": 103, "settimeofday": 164,
    "clock_settime": 227, "clock_adjtime": 305, "adjtimex": 159, "iopl": 172,
    "ioperm": 173, "vhangup": 153, "nfsservctl": 180, "uselib": 134, "clone3": 435,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "clone": 56, "unshare": 272, "personality": 135,
}  # fmt: skip
_AARCH64 = {
    "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "setns": 268,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "move_mount": 429,
    "open_tree": 428, "mount_setattr": 442, "init_module": 105, "finit_module": 273,
    "delete_module": 106, "kexec_load": 104, "kexec_file_load": 294, "bpf": 280,
    "keyctl": 219, "add_key": 217, "request_key": 218, "perf_event_open": 241,
    "userfaultfd": 282, "open_by_handle_at": 265, "name_to_handle_at": 264,
    "lookup_dcookie": 18, "ptrace": 117, "process_vm_readv": 270,
    "process_vm_writev": 271, "reboot": 142, "swapon": 224, "swapoff": 225, "acct": 89,
    "quotactl": 60, "quotactl_fd": 443, "syslog": 116, "settimeofday": 170,
    "clock_settime": 112, "clock_adjtime": 266, "adjtimex": 171, "nfsservctl": 42,
    "vhangup": 58, "clone3": 435, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "clone": 220, "unshare": 97, "personality": 92,
}  # fmt: skip
"""System call numbers of the two ABIs (``asm/unistd_64.h``, ``asm-generic/unistd.h``);
a call an ABI does not have (``iopl`` on arm64) cannot be made there."""
ABIS = {"x86_64": (0xC000003E, _X86_64), "aarch64": (0xC00000B7, _AARCH64)}
"""Each processor's ``AUDIT_ARCH`` value and call numbers, by ``os.uname().machine``."""


def seccomp_program(machine: str) -> bytes | None:
    """The filter for processes of ``machine`` (``os.uname().machine``) as ``struct
    sock_filter`` entries, or ``None`` where bugbout has no call numbers for it."""
    if machine not in ABIS:
        return None
    arch, numbers = ABIS[machine]
    code: list[tuple[int, int, int, int]] = [
        (_LOAD, 0, 0, _ARCH),
        (_JEQ, 1, 0, arch),
        (_RET, 0, 0, _KILL_PROCESS),
        (_LOAD, 0, 0, _NR),
    ]
    if machine == "x86_64":  # x32 calls reuse the numbers with a bit set
        code += [(_JGE, 0, 1, _X32_BIT), (_RET, 0, 0, _KILL_PROCESS)]
    refuse = _errno(errno.EPERM)
    for name in REFUSED:
        if name in numbers:
            code += _when(numbers[name], [refuse])
    for name in ABSENT:
        code += _when(numbers[name], [_errno(errno.ENOSYS)])
    namespaces = [(_LOAD, 0, 0, _ARG0), (_JSET, 0, 1, NAMESPACE_FLAGS), refuse, _allow()]
    code += _when(numbers["clone"], namespaces) + _when(numbers["unshare"], namespaces)
    allowed = [(_LOAD, 0, 0, _ARG0)]
    for value in PERSONALITIES:
        allowed += [(_JEQ, 0, 1, value), _allow()]
    code += _when(numbers["personality"], [*allowed, refuse])
    code.append(_allow())
    return b"".join(struct.pack("=HBBI", *entry) for entry in code)


def _when(number: int, body: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """``body`` (which ends by returning) when the call is ``number``; else on. The call's
    number must be in the accumulator, and ``body`` may load something else only where
    it returns on every path."""
    return [(_JEQ, 0, len(body), number), *body]


def _errno(code: int) -> tuple[int, int, int, int]:
    return (_RET, 0, 0, _ERRNO | code)


def _allow() -> tuple[int, int, int, int]:
    return (_RET, 0, 0, _ALLOW)
