"""Run one command in a podman container and remove the container however the run ends:
bugbout's one container runner, for the podman sandbox and for each test run of the
podman environment.

It runs ``podman run``: the podman command line is the only way to hand a container
this process's open descriptors, and it is the fastest way to run one container (no
service in between). A run names either an image or a root folder:

- **A root folder** (the sandbox): an empty skeleton of this machine's top-level
  entries, each bind-mounted read-only from the host, then the run's ``layers`` on top,
  ancestors first: a masked directory becomes an empty read-only tmpfs, a masked file
  ``/dev/null``, a readable path a read-only bind, a writable one a read-write bind.
  Host mounts that are writable and would show through a read-only entry are bound
  again read-only (a read-only bind does not make its sub-mounts read-only). ``/tmp``,
  ``/var/tmp`` and ``/run`` are private tmpfs.
- **An image** (a test run): the ``mounts`` bound at their destinations, and the
  folders the variables ``mount_env`` name (``HOME``, ``TMPDIR``) read-write.

Either way the process has no capabilities, its own pid, ipc and uts namespaces, and no
network unless the spec keeps it (``--network host``). The variables of this process's
environment are passed in by name (``env`` on top), and its standard streams are the
container's. Its open descriptors above 2 are passed on at the same numbers, unless the
spec names one in ``forward_fd``: that one is forwarded through a file in a bind-mounted
scratch folder, whose JSON lines are copied back when the run ends, which also works
through a podman service (``url``), where descriptors cannot go.

Removal: ``podman run --rm`` removes the container when it ends. When this process is
killed instead (a timeout kills its process group), a watcher it forked into its own
session kills the podman client, removes the container by name, and only then closes
its copy of the caller's output streams, so that a caller reading them to the end
returns once the container is gone.

This module imports only the standard library and nothing of bugbout: it starts with
``python -I`` on this file for every run (:func:`runner_argv`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

LABEL = "io.bugbout"
"""The label on every image and container bugbout creates; its value is one of ROLES."""
ROLES = ("base", "environment", "build", "test", "sandbox", "probe")
"""What a labelled object is: a base image, an environment image, a container building
one, a test run's container, an agent's sandbox container, a probe's container.
Environment images an earlier bugbout made are labelled ``env``: they stay found, as
nothing looks objects up by this value (images by name, cleanup by the label's key)."""
PRIVATE = ("/proc", "/sys", "/dev", "/tmp", "/var/tmp", "/run")
"""Places a root-folder container has its own of: host mounts there are never bound."""
PODMAN_VARIABLES = (
    "CONTAINERS_CONF", "CONTAINERS_STORAGE_CONF", "CONTAINERS_REGISTRIES_CONF",
    "CONTAINER_HOST", "CONTAINER_CONNECTION", "CONTAINER_SSHKEY", "NOTIFY_SOCKET",
    "_CONTAINERS_USERNS_CONFIGURED", "_CONTAINERS_ROOTLESS_UID",
)  # fmt: skip
"""Variables that steer podman itself: never taken from, nor passed to, the process."""
PRIVATE_TMPFS = ("/tmp", "/var/tmp", "/run")
"""Private, empty and writable in a root-folder container (nothing of the host's)."""
RUN_DIR = "/.bugbout-run"
"""Where a run's scratch folder (the forwarded descriptor's file) appears in a container."""
REMOVE_TIMEOUT = 60.0
CLIENT_GONE_TIMEOUT = 10.0
LEFTOVERS = "BUGBOUT_LEFTOVERS"
"""Names a record of what a run started (``bugbout.core.plumbing.confinement.leftovers``): the
container is added to it, so that bugbout removes it for sure (when whatever guards the run
killed this runner and its watcher with it, or bugbout died). Never passed on."""

MASKED, READABLE, WRITABLE = "masked", "readable", "writable"


@dataclass(frozen=True)
class Mount:
    """A host path bind-mounted into a container."""

    source: str
    destination: str
    read_only: bool = False


@dataclass(frozen=True)
class RunSpec:
    """What one run needs; JSON on the runner's command line."""

    podman: str
    """The podman program (an absolute path)."""
    config: dict[str, str]
    """``CONTAINERS_CONF`` and ``CONTAINERS_STORAGE_CONF``: bugbout's podman configuration."""
    argv: list[str]
    workdir: str
    role: str = "test"
    image: str | None = None
    """The image to run; or:"""
    rootfs: str | None = None
    """The skeleton root, one empty directory, file or link per top-level host entry."""
    layers: list[tuple[str, str]] = field(default_factory=list)
    """With ``rootfs``: ``(path, access)``, ancestors first: the host's top-level entries
    (readable unless the confinement says otherwise) and the confinement's paths."""
    mounts: list[Mount] = field(default_factory=list)
    mount_env: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    forward_fd: str | None = None
    """A variable naming a descriptor to forward through a file instead of passing it on."""
    url: str | None = None
    """A podman service to run through (``unix://PATH``); by default podman runs it."""
    network: bool = False
    init: str | None = None
    """The init program (catatonit) to run as the container's pid 1, if there is one."""
    tmp_size: int | None = None
    """With ``rootfs``: the size in bytes of each private tmpfs and of ``/dev/shm``."""
    user: str | None = None
    """``uid:gid`` the process runs as (as root: the confined user); ``None``: podman's."""

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> RunSpec:
        data = json.loads(text)
        data["layers"] = [(path, access) for path, access in data.get("layers", [])]
        data["mounts"] = [Mount(**mount) for mount in data.get("mounts", [])]
        return cls(**data)


def runner_argv(spec: RunSpec) -> list[str]:
    """The command line that runs ``spec`` and exits with the command's exit status."""
    return [sys.executable, "-I", str(Path(__file__).resolve()), spec.to_json()]


def podman_argv(
    spec: RunSpec,
    name: str,
    variables: list[str],
    descriptors: int,
    mountinfo: str,
    *,
    scratch: str | None = None,
) -> list[str]:
    """The ``podman run`` command line for ``spec``: the container named ``name`` gets the
    ``variables`` of the caller's environment, ``spec.env``, its descriptors 3 to
    2+``descriptors``, and ``scratch`` (the forwarded descriptor's folder) at RUN_DIR."""
    command = [spec.podman, *(["--url", spec.url] if spec.url else []), "run", "--rm"]
    command += ["--name", name, "--interactive", "--label", f"{LABEL}={spec.role}"]
    command += ["--network", "host" if spec.network else "none"]
    command += ["--cap-drop", "all", "--security-opt", "no-new-privileges"]
    command += ["--log-driver", "none", "--hostname", "bugbout", "--workdir", spec.workdir]
    command += ["--user", spec.user] if spec.user else []
    if spec.rootfs:
        command += ["--read-only", "--read-only-tmpfs=false"]
        command += ["--shm-size", str(spec.tmp_size)] if spec.tmp_size else []
    if spec.init:
        command += ["--init", "--init-path", spec.init]
    layers = layer_mounts(spec.layers, mountinfo, spec.tmp_size) if spec.rootfs else []
    for mount in [*layers, *_binds(spec)]:
        command += ["--mount", mount]
    argv = list(spec.argv)
    if scratch is not None and spec.forward_fd:
        command += ["--mount", f"type=bind,source={scratch},destination={RUN_DIR}"]
        # read-write, not append: the reader may blank what it read at the start
        argv = ["/bin/sh", "-c", f'exec 3<>{RUN_DIR}/forwarded; exec "$@"', "sh", *argv]
        command += ["--env", f"{spec.forward_fd}=3"]
    for variable in variables:
        command += ["--env", variable]
    for key, value in spec.env.items():
        command += ["--env", f"{key}={value}"]
    if descriptors:
        command += ["--preserve-fds", str(descriptors)]
    root = ["--rootfs", f"{spec.rootfs}:O"] if spec.rootfs else [spec.image or ""]
    return [*command, *root, *argv]


def _hand_over(spec: RunSpec, scratch: str | None) -> None:
    """As ``spec.user``, when given: the forwarded descriptor's folder (this runner's own)
    is that user's, who opens the file inside. The caller hands over what else it writes."""
    if not spec.user or scratch is None:
        return
    uid, gid = (int(part) for part in spec.user.split(":"))
    for path in (Path(scratch), Path(scratch, "forwarded")):
        os.chown(path, uid, gid, follow_symlinks=False)


def _binds(spec: RunSpec) -> list[str]:
    """The ``mount_env`` folders (read-write at their own path) and ``mounts``, each
    destination once, skipping sources that do not exist."""
    found, seen = [], {RUN_DIR}
    wanted = [
        Mount(str(Path(folder).resolve()), folder)
        for folder in (os.environ.get(variable) for variable in spec.mount_env)
        if folder and Path(folder).is_dir()
    ]
    for mount in [*wanted, *spec.mounts]:
        if mount.destination not in seen and Path(mount.source).exists():
            seen.add(mount.destination)
            found.append(
                f"type=bind,source={mount.source},destination={mount.destination},"
                f"ro={str(mount.read_only).lower()}"
            )
    return found


def layer_mounts(
    layers: list[tuple[str, str]], mountinfo: str, tmp_size: int | None = None
) -> list[str]:
    """``--mount`` values for the layers (the private tmpfs ``tmp_size`` bytes each, when
    given), then read-only binds of the writable host mounts that would otherwise show
    through a read-only layer."""
    size = f",tmpfs-size={tmp_size}" if tmp_size else ""
    found = [
        f"type=tmpfs,destination={place},notmpcopyup,tmpfs-mode=1777{size}"
        for place in PRIVATE_TMPFS
        if Path(place).is_dir() and not any(path == place for path, _ in layers)
    ]
    for path, access in layers:
        if access == MASKED:
            if Path(path).is_dir():
                found.append(f"type=tmpfs,destination={path},ro=true,notmpcopyup,tmpfs-mode=0755")
            elif os.path.lexists(path):
                found.append(f"type=bind,source=/dev/null,destination={path},ro=true")
        elif Path(path).exists():
            found.append(f"type=bind,source={path},destination={path},ro={access != WRITABLE}")
    paths = {path for path, _ in layers}
    for point in writable_mounts(mountinfo):
        if point not in paths and _nearest(point, layers) == READABLE:
            found.append(f"type=bind,source={point},destination={point},ro=true")
    return found


def writable_mounts(mountinfo: str) -> list[str]:
    """The host's read-write mount points outside the container's private places."""
    points = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) < 6:
            continue
        point = _unescape(fields[4])
        if point == "/" or "rw" not in fields[5].split(","):
            continue
        if any(point == place or point.startswith(place + "/") for place in PRIVATE):
            continue
        points.append(point)
    return points


def _nearest(point: str, layers: list[tuple[str, str]]) -> str | None:
    """The access of the most specific layer at or above ``point`` (``None``: none is)."""
    access = None
    for path, kind in layers:
        if point == path or point.startswith(path.rstrip("/") + "/"):
            access = kind  # ancestors come first: the last match is the nearest
    return access if Path(point).exists() else None


def _unescape(text: str) -> str:
    """A mountinfo path: spaces, tabs, newlines and backslashes are octal escapes."""
    for escape, character in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        text = text.replace(escape, character)
    return text


# -- running -------------------------------------------------------------------------------


def run(spec: RunSpec) -> int:
    """Run ``spec``; the command's exit status (125: podman could not run it)."""
    forwarded = _forwarded_fd(spec.forward_fd)
    descriptors = 0 if spec.forward_fd else _pass_descriptors()
    caller = dict(os.environ)
    dropped = {
        *PODMAN_VARIABLES,
        LEFTOVERS,
        *spec.env,
        *([spec.forward_fd] if spec.forward_fd else []),
    }
    variables = [name for name in caller if name not in dropped and _valid(name)]
    environ = {k: v for k, v in caller.items() if k not in PODMAN_VARIABLES} | spec.config
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        mountinfo = ""
    name = f"bugbout-{spec.role}-{uuid.uuid4().hex[:16]}"
    _leave_record(spec, name)
    with contextlib.ExitStack() as stack:
        scratch, first = None, b""
        if forwarded is not None:  # what the caller put first (a key line) is seen inside
            scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="bugbout-run-"))
            first = _first_line(forwarded)
            Path(scratch, "forwarded").write_bytes(first)
        _hand_over(spec, scratch)
        argv = podman_argv(spec, name, variables, descriptors, mountinfo, scratch=scratch)
        watcher = _watch(spec, name, environ)
        try:
            client = subprocess.Popen(argv, env=environ, pass_fds=range(3, 3 + descriptors))
        except OSError as exc:
            watcher.done()
            sys.stderr.write(f"bugbout: cannot start podman ({exc}); install it or name it\n")
            return 125
        watcher.guard(client.pid)
        code = client.wait()
        watcher.done()
        if forwarded is not None and scratch is not None:
            _forward(Path(scratch, "forwarded"), forwarded, first)
    return code if code >= 0 else 128 - code


def _leave_record(spec: RunSpec, name: str) -> None:
    """Add the container ``name`` to the record :data:`LEFTOVERS` names, if it names one."""
    path = os.environ.get(LEFTOVERS)
    if not path:
        return
    podman = [spec.podman, *(["--url", spec.url] if spec.url else [])]
    line = json.dumps({"container": name, "podman": podman, "config": spec.config}) + "\n"
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    with contextlib.suppress(OSError), open(os.open(path, flags, 0o600), "a") as record:  # noqa: PTH123
        record.write(line)


def _pass_descriptors() -> int:
    """How many descriptors above 2 to pass on: up to the highest open one, the gaps
    filled with ``/dev/null`` (podman passes a contiguous range)."""
    listed = [int(entry.name) for entry in Path("/proc/self/fd").iterdir()]
    open_fds = []
    for fd in listed:
        if fd > 2:
            with contextlib.suppress(OSError):
                os.fstat(fd)  # the listing's own descriptor is closed by now
                open_fds.append(fd)
    if not open_fds:
        return 0
    highest = max(open_fds)
    while (fd := os.open(os.devnull, os.O_RDWR)) < highest:
        pass  # open() takes the lowest free number: each call fills the lowest gap
    os.close(fd)
    return highest - 2


def _valid(name: str) -> bool:
    return bool(name) and "=" not in name and not name.startswith("-")


def _forwarded_fd(variable: str | None) -> int | None:
    value = os.environ.get(variable) if variable else None
    if value is None or not value.isdigit():
        return None
    try:
        os.fstat(int(value))
    except OSError:
        return None
    return int(value)


def _first_line(fd: int) -> bytes:
    """The first line the caller wrote in the forwarded file (a key for the reader inside),
    or nothing when it is not a file."""
    try:
        head = os.pread(fd, 4096, 0)
    except OSError:
        return b""
    return head.split(b"\n", 1)[0] + b"\n" if b"\n" in head else b""


def _forward(path: Path, fd: int, first: bytes) -> None:
    """Copy the records the container wrote (JSON objects, one a line) to ``fd``; and
    blank ``first`` there as the reader inside blanked it (the sign that it started)."""
    kept = []
    with path.open("rb") as lines:
        if first and lines.read(len(first)) != first:
            with contextlib.suppress(OSError):
                os.pwrite(fd, b" " * (len(first) - 1), 0)
        lines.seek(0)
        for line in lines:
            with contextlib.suppress(ValueError):
                if isinstance(json.loads(line), dict):
                    kept.append(line if line.endswith(b"\n") else line + b"\n")
    data = b"".join(kept)
    while data:
        written = os.write(fd, data)
        data = data[written:]


class _Watcher:
    """A process in its own session that removes the container if the runner dies."""

    def __init__(self, pid: int, pipe: int) -> None:
        self.pid, self.pipe = pid, pipe

    def guard(self, client: int) -> None:
        with contextlib.suppress(OSError):
            os.write(self.pipe, f"{client}\n".encode())

    def done(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self.pipe, b"done\n")
        with contextlib.suppress(OSError):
            os.close(self.pipe)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _watch(spec: RunSpec, name: str, environ: dict[str, str]) -> _Watcher:
    """Fork the watcher. It reads the podman client's pid, then ``done``; end of file
    before ``done`` means the runner was killed: it kills the client and removes the
    container, holding the caller's stdout and stderr until then."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid:
        os.close(read_end)
        return _Watcher(pid, write_end)
    try:  # the watcher
        os.setsid()  # out of the runner's process group: killing the group spares it
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(number, signal.SIG_IGN)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        keep = {0, 1, 2, read_end, null}
        for fd in range(3, _highest_fd() + 1):  # never hold the descriptors passed on
            if fd not in keep:
                with contextlib.suppress(OSError):
                    os.close(fd)
        with open(read_end, "rb") as lines:  # noqa: PTH123
            received = lines.read().decode().split()
        if not received or received[-1] != "done":
            client = int(received[-1]) if received and received[-1].isdigit() else None
            _remove(spec, name, environ, client, null)
    finally:
        os._exit(0)


def _highest_fd() -> int:
    try:
        return max(int(entry.name) for entry in Path("/proc/self/fd").iterdir())
    except (OSError, ValueError):
        return 255


def _remove(
    spec: RunSpec, name: str, environ: dict[str, str], client: int | None, null: int
) -> None:
    """Kill the podman client (so that it creates nothing more), then remove the container."""
    if client is not None and name.encode() in _cmdline(client):
        with contextlib.suppress(OSError):
            os.kill(client, signal.SIGKILL)
        deadline = time.monotonic() + CLIENT_GONE_TIMEOUT
        while name.encode() in _cmdline(client) and time.monotonic() < deadline:
            time.sleep(0.02)
    podman = [spec.podman, *(["--url", spec.url] if spec.url else [])]
    deadline = time.monotonic() + REMOVE_TIMEOUT
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                [*podman, "rm", "--force", "--ignore", "--time", "0", name],
                env=environ, stdin=null, stdout=null, stderr=null,
                timeout=REMOVE_TIMEOUT, check=False,
            )  # fmt: skip
            exists = subprocess.run(
                [*podman, "container", "exists", name],
                env=environ, stdin=null, stdout=null, stderr=null,
                timeout=REMOVE_TIMEOUT, check=False,
            )  # fmt: skip
            if exists.returncode == 1:
                return
        time.sleep(0.2)


def _cmdline(pid: int) -> bytes:
    """A live process's command line (empty once it is gone or a zombie)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: runner.py SPEC-JSON\n")
        return 2
    return run(RunSpec.from_json(argv[0]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
