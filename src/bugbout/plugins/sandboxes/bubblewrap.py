"""The ``bubblewrap`` sandbox: Linux namespaces through ``bwrap``.

The confined process sees the whole machine read-only, a private ``/tmp``, ``/var/tmp``
and ``/run``, fresh ``/dev`` (read-only, but for a private ``/dev/shm``) and ``/proc``;
the private temporary filesystems hold at most the confinement's ``tmp_size`` bytes
each. Its confinement's paths are layered on top:
masked directories become empty read-only tmpfs, masked files ``/dev/null``, readable
paths are bound read-only and writable ones read-write, the most specific path last.
It gets its own pid, ipc and uts namespaces (it sees and signals only its own
processes), and its own network namespace, with only loopback, unless the confinement
keeps the network. It has no capabilities, even when bugbout runs as root, so it cannot
unmount what hides a path. The kernel's global settings in ``/proc`` (``/proc/sys``,
``/proc/sysrq-trigger``...) are read-only and its memory and keys (``/proc/kcore``...)
hidden: a uid 0 without capabilities may still write a sysctl such as
``kernel.core_pattern``, which the kernel then runs as root on the host. A seccomp filter
(:mod:`bugbout.sandbox.seccomp`) refuses the system calls no agent or test needs. It
dies with bwrap: killing bwrap, or the process group it was started in, kills every
process of the sandbox.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

from bugbout.sandboxes import (
    Access,
    Confinement,
    Options,
    PluginError,
    SandboxPlugin,
    confined_owner,
    confined_view,
    hookimpl,
    layers,
    resolve,
    seccomp_program,
    setpriv,
)

PROBE_TIMEOUT = 30.0
PROBE_SIZE = 1_000_000
"""The size of the probe's temporary filesystems."""
SYSCTL = Path("/proc/sys")
"""Where the kernel settings that decide whether namespaces work are read."""
PRIVATE_DIRS = ("/tmp", "/var/tmp")
"""Temporary directories replaced by private, empty ones."""
RUNTIME_DIRS = ("/run", "/var/run")
"""Runtime directories hidden when ``hide_run`` is set: they hold the sockets of the
machine's daemons (docker, dbus, the user's session), which a read-only mount does not
stop a process from connecting to."""
RESOLV_CONF = Path("/etc/resolv.conf")
NO_SANDBOX = "or set sandbox=none to run agents unconfined"
BECOME = ("CAP_SETUID", "CAP_SETGID", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH")
"""The capabilities kept, as root, until setpriv becomes the confined user."""
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
"""The kernel's global knobs in ``/proc``, made read-only: permissions, not capabilities,
guard most of them, so a uid 0 without capabilities could write them."""
PROC_HIDDEN = (
    "/proc/kcore", "/proc/keys", "/proc/key-users", "/proc/timer_list", "/proc/sched_debug",
    "/proc/latency_stats", "/proc/acpi", "/proc/asound", "/proc/scsi", "/sys/firmware",
    "/sys/kernel/debug", "/sys/kernel/security",
)  # fmt: skip
"""What the kernel tells of its memory, keys, timers and firmware: hidden."""
SECCOMP_OPEN = """
filter=$1 program=$2; shift 2
fd=9
while [ -e "/proc/$$/fd/$fd" ]; do
  fd=$((fd - 1))
  if [ "$fd" -lt 3 ]; then echo "bwrap: no descriptor free for the seccomp filter" >&2; exit 125; fi
done
eval "exec $fd<\\"\\$filter\\""
exec "$program" --seccomp "$fd" "$@"
"""
"""A shell script that opens the filter on a descriptor its caller did not pass on (the
highest free one up to 9, as every shell can name it) and becomes bwrap, which reads the
filter and closes it: the command line is all a sandbox hands its caller, and a caller
may pass descriptors of its own (a test run's outcome file)."""


class BubblewrapOptions(Options):
    """Options of the ``bubblewrap`` sandbox."""

    executable: str = "bwrap"
    """The bwrap program: a name looked up on ``PATH`` or a path."""
    hide_run: bool = True
    """Replace ``/run`` with an empty directory (keeping ``/etc/resolv.conf`` if it points
    there), so that the daemons' sockets are out of reach."""


class Bubblewrap:
    """Wraps commands in bwrap; see the module documentation for what they can do."""

    name = "bubblewrap"

    def __init__(self, options: BubblewrapOptions | None = None) -> None:
        self.options = options or BubblewrapOptions()
        found = shutil.which(self.options.executable)
        self.executable = str(Path(found).absolute()) if found else None
        self._lock = threading.Lock()
        self._probed = False
        self._problem: str | None = None
        self._sized = False
        """Whether this bwrap sizes a tmpfs (``--size``, bubblewrap 0.8 and later)."""
        self._bases: dict[tuple[bool, int | None], tuple[list[str], list[Path]]] = {}
        """:meth:`_base` by its arguments: the machine's folders it looks at stay put."""
        self._filter_lock = threading.Lock()
        self._filter: Path | None = None
        """The seccomp filter's file, written on the first :meth:`wrap`; ``None`` where
        bugbout has no filter for this processor."""
        self.owner = confined_owner()
        """The host uid and gid confined processes run as, when not bugbout's own."""
        program = setpriv()
        self._become = (
            [program, f"--reuid={self.owner[0]}", f"--regid={self.owner[1]}",
             "--clear-groups", "--inh-caps=-all", "--"]
            if self.owner and program else []
        )  # fmt: skip

    def problem(self) -> str | None:
        """``None`` if bwrap can build a sandbox here (tried once), else why not and the fix."""
        with self._lock:
            if not self._probed:
                self._problem = self._probe()
                self._probed = True
            return self._problem

    def wrap(self, argv: list[str], confinement: Confinement) -> list[str]:
        """``argv`` run by bwrap under ``confinement``, in its working directory."""
        workdir = resolve(confinement.workdir)
        if not workdir.is_dir():
            raise PluginError(f"cannot confine a process to {workdir}: it is not a directory")
        self.problem()
        if self.owner is not None:
            confinement = confined_view(confinement, self.owner)
        # empty: the folders made empty, where bwrap makes the mount points it needs
        command, empty = self._kept_base(confinement.network, confinement.tmp_size)
        read_only: list[str] = []
        bound: set[Path] = set()
        for layer in layers(confinement):
            path = str(layer.path)
            if layer.access is Access.MASKED:
                if layer.path.is_dir():
                    command += ["--tmpfs", path]
                    read_only += ["--remount-ro", path]
                    empty.append(layer.path)
                elif os.path.lexists(path):
                    command += ["--ro-bind", "/dev/null", path]
                continue
            command += self._enterable(layer.path, empty, bound)
            bound.add(layer.path)
            if layer.access is Access.READABLE:
                command += ["--ro-bind-try", path, path]
            else:
                command += ["--bind-try", path, path]
        # Last, once every mount point inside them exists; not recursive, so what is
        # bound inside a masked directory keeps its own access.
        return self._filtered(
            [*command, *read_only, "--chdir", str(workdir), "--", *self._become, *argv]
        )

    def _enterable(self, path: Path, empty: list[Path], made: set[Path]) -> list[str]:
        """For a confined user, the folders bwrap would make (owner-only) on the way to
        ``path`` in one of the ``empty`` ones, made beforehand so that anyone may enter
        them; each is added to ``made``."""
        if self.owner is None:
            return []
        inside = set(empty)
        options: list[str] = []
        below = False  # whether a folder above this one is made empty
        for folder in reversed(path.parents):
            if below and folder not in made:
                options += ["--perms", "0755", "--dir", str(folder)]
                made.add(folder)
            below = below or folder in inside
        return options

    def _filtered(self, command: list[str]) -> list[str]:
        """``command`` (bwrap's) with the seccomp filter loaded before it runs anything."""
        path = self.filter_path()
        if path is None:
            return command
        return ["/bin/sh", "-c", SECCOMP_OPEN, "bwrap", str(path), *command]

    def filter_path(self) -> Path | None:
        """The seccomp filter for this machine, written once in ``BUGBOUT_HOME/seccomp/``
        under its hash; ``None`` where bugbout has no filter for this processor."""
        with self._filter_lock:
            if self._filter is None:
                program = seccomp_program(os.uname().machine)
                if program is None:
                    return None
                from bugbout.sandboxes import bugbout_home

                self._filter = _written(bugbout_home() / "seccomp", program)
            return self._filter

    def _kept_base(self, network: bool, tmp_size: int | None) -> tuple[list[str], list[Path]]:
        """:meth:`_base`, worked out once per network and size (after the probe), a copy
        each call."""
        with self._lock:
            kept = self._bases.get((network, tmp_size))
            if kept is None:
                kept = self._bases[network, tmp_size] = self._base(network, tmp_size)
        return list(kept[0]), list(kept[1])

    def _base(self, network: bool, tmp_size: int | None = None) -> tuple[list[str], list[Path]]:
        """bwrap and the options every sandbox has: the machine read-only, private
        temporary and runtime directories (of ``tmp_size`` bytes each), its own
        namespaces, no capabilities; and the directories it made empty."""
        size = ["--size", str(tmp_size)] if tmp_size is not None and self._sized else []
        # Temporary directories anyone may write, as on a host, for a confined user.
        shared = [*size, "--perms", "01777"] if self.owner is not None else size
        command = [self.executable or self.options.executable]
        command += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        # /dev is a tmpfs of bwrap's own size: read-only, with a sized /dev/shm in it.
        command += [*shared, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
        command += [arg for path in PROC_READ_ONLY for arg in ("--ro-bind-try", path, path)]
        for path in PROC_HIDDEN:
            if Path(path).is_dir():
                command += ["--tmpfs", path, "--remount-ro", path]
            elif Path(path).exists():
                command += ["--ro-bind", "/dev/null", path]
        private = [resolve(Path(entry)) for entry in PRIVATE_DIRS]
        hidden = [resolve(Path(entry)) for entry in RUNTIME_DIRS] if self.options.hide_run else []
        done: list[Path] = []
        for directory in (*private, *hidden):
            if directory.is_dir() and directory not in done:
                command += [*(shared if directory in private else size), "--tmpfs", str(directory)]
                done.append(directory)
        resolver = resolve(RESOLV_CONF)
        if any(resolver.is_relative_to(d) for d in hidden if d in done) and resolver.is_file():
            command += self._enterable(resolver, done, set())
            command += ["--ro-bind", str(resolver), str(resolver)]
        command += ["--unshare-pid", "--unshare-ipc", "--unshare-uts"]
        if not network:
            command.append("--unshare-net")
        # --new-session: no controlling terminal, so no TIOCSTI keystroke injection into
        # the user's shell. It does not break killing the caller's process group: bwrap
        # stays in it, and when bwrap dies --die-with-parent kills the sandbox's init,
        # which takes every process of the pid namespace with it.
        command += ["--die-with-parent", "--new-session"]
        if os.geteuid() == 0:
            # As root bwrap keeps every capability by default: the process could unmount
            # the tmpfs that masks a path, or remount the machine read-write. The few
            # that let setpriv enter the confined user's folders and become that user stay
            # only until it has (which clears them all): a uid other than 0 has none.
            command += ["--cap-drop", "ALL"]
            if self.owner is not None:
                command += [arg for cap in BECOME for arg in ("--cap-add", cap)]
        return command, done

    def _try(self) -> subprocess.CompletedProcess[str]:
        """An empty sandbox, as every sandbox is built (as root: becoming the confined
        user too)."""
        return subprocess.run(
            self._filtered(
                [*self._base(network=False, tmp_size=PROBE_SIZE)[0], "--", *self._become, "true"]
            ),
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )

    def _probe(self) -> str | None:
        if self.executable is None:
            return (
                f"bubblewrap is not installed ({self.options.executable} is not on PATH): "
                f"install it (apt install bubblewrap, dnf install bubblewrap), {NO_SANDBOX}"
            )
        try:
            self._sized = True
            result = self._try()
            if "--size" in result.stderr:  # before bubblewrap 0.8: tmpfs cannot be sized
                self._sized = False
                result = self._try()
        except subprocess.TimeoutExpired:
            return (
                f"bubblewrap ({self.executable}) did not start a sandbox in "
                f"{PROBE_TIMEOUT:.0f} s; {NO_SANDBOX}"
            )
        except OSError as exc:
            return f"bubblewrap ({self.executable}) cannot run: {exc}; {NO_SANDBOX}"
        if result.returncode == 0:
            return None
        lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit status {result.returncode}"
        return f"bubblewrap cannot create a sandbox here ({reason}): {namespace_fix()}"


def _written(folder: Path, program: bytes) -> Path:
    """``program`` in ``folder``, named by its hash; written to a temporary name then
    renamed, so two bouts writing at once each rename a whole file."""
    path = folder / f"filter-{hashlib.sha256(program).hexdigest()[:16]}.bpf"
    temporary = folder / f".{path.name}.{os.getpid()}.{threading.get_ident()}"
    try:
        if path.is_file() and path.read_bytes() == program:
            return path
        folder.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(program)
        temporary.replace(path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise PluginError(
            f"cannot write bubblewrap's seccomp filter in {folder} ({exc.strerror}): make "
            "BUGBOUT_HOME writable, or point it elsewhere"
        ) from exc
    return path


def namespace_fix() -> str:
    """How to let bwrap create namespaces on this machine, in one phrase."""

    def setting(name: str) -> str | None:
        try:
            return (SYSCTL / name).read_text().strip()
        except OSError:
            return None

    if setting("kernel/apparmor_restrict_unprivileged_userns") == "1":
        return (
            "AppArmor restricts unprivileged user namespaces (Ubuntu 24.04 and later); run "
            "`sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0` or install an "
            f"AppArmor profile that lets bwrap use them, {NO_SANDBOX}"
        )
    if setting("kernel/unprivileged_userns_clone") == "0":
        return (
            "unprivileged user namespaces are disabled; run "
            f"`sudo sysctl kernel.unprivileged_userns_clone=1`, {NO_SANDBOX}"
        )
    if setting("user/max_user_namespaces") == "0":
        return (
            f"user namespaces are disabled; run `sudo sysctl user.max_user_namespaces=10000`, "
            f"{NO_SANDBOX}"
        )
    return (
        "user namespaces seem unavailable (inside a container? allow it to create "
        f"namespaces, e.g. with a seccomp profile that permits unshare), {NO_SANDBOX}"
    )


@hookimpl
def bugbout_sandboxes() -> Iterator[SandboxPlugin]:
    yield SandboxPlugin(
        name=Bubblewrap.name,
        factory=Bubblewrap,
        options=BubblewrapOptions,
        description=(
            "Linux namespaces through bwrap: the machine read-only, masked paths hidden, "
            "private /tmp, no network"
        ),
    )
