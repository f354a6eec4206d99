"""bugbout's podman: its configuration, its service, its base image, and one container run.

Everything here follows what works on a Debian 12 host with cgroup v1 ("hybrid"), capped
ulimits and no container registry (docs/containers.md says why each choice is made):

- **Configuration.** Two files under ``BUGBOUT_HOME/podman/`` (:attr:`Podman.config_dir`),
  passed to every podman process through ``CONTAINERS_CONF`` and
  ``CONTAINERS_STORAGE_CONF``; nothing under ``/etc`` changes. The runtime is ``runc``
  (crun refuses hybrid cgroup hosts), the cgroup manager ``cgroupfs``, the default network
  none, and the ulimits at the caller's hard limits (podman's default ``nofile`` of 1048576
  cannot be set without ``CAP_SYS_RESOURCE``). Storage is kernel overlay in a private
  graph root, so bugbout's images and containers never mix with the user's.
- **Service.** :meth:`Podman.client` starts ``podman system service --time=0`` on a
  private socket (or uses the socket the user names) and returns a podman-py client. The
  service it starts stops when :meth:`Podman.close` is called or this process ends.
- **Base image**, without any registry: a user-named image, or one built from the user's
  Containerfile, or (the default) a Debian ``minbase`` root filesystem with ``python3`` made
  by ``debootstrap``, kept as a tar in :func:`default_cache_dir` and imported with
  ``podman import``. Built once, then found by its name.
- **Labels.** Every image and container bugbout creates carries the label :data:`LABEL`
  (its value says what it is: :data:`ROLES`); :meth:`Podman.cleanup` removes them.
- **Problems.** :meth:`Podman.problem` runs a real container and, when that fails, says
  which cause (missing programs, runtime, cgroups, ulimits, storage) and how to fix it.
- **One run.** :func:`run_container` runs a command in a container with no network and
  removes the container however it ends, even when its caller is killed: it is what
  :func:`runner_argv` starts as a separate process.

This module imports only the standard library when it is loaded: the runner starts with
``python -I`` for every test run, and podman-py is imported only by :meth:`Podman.client`.

Example::

    podman = Podman(bugbout_home())
    if (problem := podman.problem()) is not None:
        raise SystemExit(problem)
    image = podman.base_image()             # e.g. localhost/bugbout-base:3f0c...
    client = podman.client()                # podman-py, against bugbout's service
    ...
    podman.cleanup()                        # every container and image bugbout made
    podman.close()
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import http.client
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from podman import PodmanClient

LABEL = "io.bugbout"
"""The label on every image and container bugbout creates; its value is one of ROLES."""
ROLES = ("base", "env", "build", "test", "sandbox", "probe")
"""What a labelled object is: a base image, an environment image, a container building
one, a test run's container, an agent's sandbox container, a probe's container."""
INSTALL = "apt-get install -y podman runc conmon fuse-overlayfs uidmap slirp4netns debootstrap"
"""How to install podman and what it needs on Debian and Ubuntu."""
BASE_REPOSITORY = "localhost/bugbout-base"
API_VERSION = "v4.0.0"
"""The libpod REST API version the runner speaks (podman 4.0 and later answer it)."""
SERVICE_TIMEOUT = 30.0
PROBE_TIMEOUT = 120.0
DEBOOTSTRAP_TIMEOUT = 1800.0
REQUEST_TIMEOUT = 600.0
NPROC = 4096
"""Processes per container; at most the caller's hard limit."""
RUN_DIR = "/.bugbout-run"
"""Where a run's scratch directory (its output and forwarded fd) appears in a container."""
_DEFAULT_MIRROR = "http://deb.debian.org/debian"


class PodmanError(Exception):
    """Podman could not do what was asked; the message is one line that says what to do."""


@dataclass(frozen=True)
class BaseImage:
    """An image to build on: its reference and its image id."""

    name: str
    id: str


def default_cache_dir(home: Path) -> Path:
    """Where the debootstrap root filesystem is kept: ``/var/cache/bugbout`` when this
    process may write there (root), else ``BUGBOUT_HOME/podman/cache``. It outlives
    ``BUGBOUT_HOME`` on purpose: making it takes about a minute."""
    system = Path("/var/cache/bugbout")
    if os.geteuid() == 0:
        return system
    return home / "podman" / "cache"


@dataclass
class Podman:
    """bugbout's podman for one ``BUGBOUT_HOME``.

    ``socket``: an existing podman service's socket (a path or ``unix://`` URL) to use
    instead of starting one. ``storage``: the graph root's parent (default
    ``BUGBOUT_HOME/podman``). ``image`` / ``containerfile``: the base image, when not the
    default debootstrap one. ``suite`` / ``mirror``: what debootstrap installs from
    (default: this machine's Debian release and the mirror apt uses). ``cache``: where
    the debootstrap root filesystem is kept (:func:`default_cache_dir`).
    """

    home: Path
    socket: str | None = None
    storage: Path | None = None
    image: str | None = None
    containerfile: Path | None = None
    suite: str | None = None
    mirror: str | None = None
    cache: Path | None = None
    driver: str = "overlay"
    executable: str = "podman"
    _service: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)
    _socket_dir: Path | None = field(default=None, init=False, repr=False)
    _client: Any = field(default=None, init=False, repr=False)
    _base: BaseImage | None = field(default=None, init=False, repr=False)

    # -- configuration ---------------------------------------------------------------

    @property
    def config_dir(self) -> Path:
        """Where ``containers.conf`` and ``storage.conf`` are written."""
        return self.home / "podman"

    @property
    def storage_dir(self) -> Path:
        return self.storage or self.config_dir

    @property
    def runtime_dir(self) -> Path:
        """bugbout's podman folder on a runtime path (``/run`` as root, else
        ``XDG_RUNTIME_DIR``), which every sandbox hides: the run root and the service's
        socket live under it, with short paths."""
        runtime = Path("/run") if os.geteuid() == 0 else None
        if runtime is None and os.environ.get("XDG_RUNTIME_DIR"):
            runtime = Path(os.environ["XDG_RUNTIME_DIR"])
        if runtime is None or not os.access(runtime, os.W_OK):
            runtime = Path(tempfile.gettempdir())
        return runtime / f"bugbout-podman-{os.geteuid()}"

    @property
    def runroot(self) -> Path:
        """podman's run root (locks, mounts, conmon's sockets) for this storage: a short
        path on a runtime folder, since conmon's sockets live under it and a unix socket's
        path allows about 107 bytes (past that, every container takes 20 s to be seen
        exiting)."""
        return self.runtime_dir / _digest(str(self.storage_dir))

    def environ(self) -> dict[str, str]:
        """The variables that point podman at bugbout's configuration (files written now)."""
        self.config_dir.mkdir(parents=True, exist_ok=True)
        containers, storage = self.config_dir / "containers.conf", self.config_dir / "storage.conf"
        _write_if_changed(containers, containers_conf(self.runroot))
        _write_if_changed(storage, storage_conf(self.storage_dir, self.driver, self.runroot))
        return {"CONTAINERS_CONF": str(containers), "CONTAINERS_STORAGE_CONF": str(storage)}

    def cli(self, *args: str, timeout: float = PROBE_TIMEOUT) -> subprocess.CompletedProcess[str]:
        """The podman command line with bugbout's configuration (not through the service)."""
        return subprocess.run(
            [self.executable, *args],
            env={**os.environ, **self.environ()},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )

    # -- the service -----------------------------------------------------------------

    @property
    def socket_path(self) -> Path:
        """The service's socket (starting the service if bugbout runs it)."""
        if self.socket:
            return Path(self.socket.removeprefix("unix://"))
        self._start()
        assert self._socket_dir is not None
        return self._socket_dir / "podman.sock"

    def client(self) -> PodmanClient:
        """A podman-py client of bugbout's podman service (started on first use)."""
        if self._client is None:
            from podman import PodmanClient

            path = self.socket_path
            if not _answers(path):
                raise PodmanError(
                    f"no podman service answers on {path}; start one with `podman system "
                    f"service --time=0 unix://{path}` or leave env.socket unset"
                )
            self._client = PodmanClient(base_url=f"unix://{path}", timeout=REQUEST_TIMEOUT)
        client: PodmanClient = self._client
        return client

    def _start(self) -> None:
        if self._service is not None and self._service.poll() is None:
            return
        if shutil.which(self.executable) is None:
            raise PodmanError(f"podman is not installed: {INSTALL}")
        # A short path (unix sockets allow about 107 bytes) on the runtime folder, not in
        # TMPDIR: a sandbox hides /run and /tmp, but a TMPDIR elsewhere may stay readable,
        # and reading a socket's folder is enough to connect to it.
        runtime = self.runtime_dir
        runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
        if runtime.stat().st_uid != os.geteuid():
            raise PodmanError(
                f"{runtime} belongs to another user: remove it, or set XDG_RUNTIME_DIR to "
                "a folder of your own"
            )
        self._socket_dir = Path(tempfile.mkdtemp(prefix="service-", dir=runtime))
        weakref.finalize(self, shutil.rmtree, self._socket_dir, True)
        path = self._socket_dir / "podman.sock"
        log = self.config_dir / "service.log"
        env = {**os.environ, **self.environ()}
        # The shell stops the service when this process ends, however it ends: its stdin
        # is a pipe only this process holds, and reading it returns at end of file.
        keeper = 'podman=$1; shift; "$podman" "$@" & pid=$!; read -r _; kill "$pid"; wait "$pid"'
        with log.open("ab") as output:
            self._service = subprocess.Popen(
                ["/bin/sh", "-c", keeper, "sh", self.executable, "system", "service",
                 "--time=0", f"unix://{path}"],
                stdin=subprocess.PIPE, stdout=output, stderr=output, env=env,
                start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + SERVICE_TIMEOUT
        while not _answers(path):
            if self._service.poll() is not None or time.monotonic() > deadline:
                tail = _tail(log)
                self.close()
                raise PodmanError(f"podman system service did not start: {tail} (log: {log})")
            time.sleep(0.05)

    def close(self) -> None:
        """Stop the service this object started (a named socket's service keeps running)."""
        self._client = None
        service, self._service = self._service, None
        if service is not None:
            if service.stdin is not None:
                with contextlib.suppress(OSError):
                    service.stdin.close()
            try:
                service.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(service.pid, signal.SIGKILL)
                service.wait()
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None
            self._release_storage()

    def _release_storage(self) -> None:
        """Undo the mount podman's overlay driver leaves on its own folder, so that the
        storage can be deleted like any folder; it stays while anything uses it."""
        home = self.storage_dir / "storage" / "overlay"
        if os.geteuid() == 0 and os.path.ismount(home) and shutil.which("umount"):
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                subprocess.run(["umount", str(home)], capture_output=True, timeout=30, check=False)

    def __enter__(self) -> Podman:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what can go wrong -----------------------------------------------------------

    def problem(self, *, base: bool = True) -> str | None:
        """``None`` when podman runs containers here (and, with ``base``, the base image can
        be made); else the cause and its fix, one line."""
        if shutil.which(self.executable) is None:
            return f"podman is not installed: {INSTALL}"
        if self.socket:
            path = Path(self.socket.removeprefix("unix://"))
            if not _answers(path):
                return (
                    f"no podman service answers on {path}: start it with `podman system "
                    f"service --time=0 unix://{path}`, or unset env.socket so bugbout starts one"
                )
        if shutil.which("runc") is None:
            return (
                "podman needs runc here (crun refuses cgroup v1 'hybrid' hosts, even with "
                "--cgroups=disabled): apt-get install -y runc"
            )
        if shutil.which("conmon") is None:
            return "podman needs conmon: apt-get install -y conmon"
        if self.driver == "overlay" and not _kernel_has("overlay"):
            return (
                "the kernel has no overlay filesystem for podman's storage: load it "
                "(modprobe overlay), or set env.driver=vfs (slow: it copies the image per run)"
            )
        if base and (cause := self.base_problem()) is not None:
            return cause
        return self._run_problem()

    def base_problem(self) -> str | None:
        """Why the base image cannot be made, if it cannot."""
        if self.image or self.containerfile:
            if self.containerfile and not self.containerfile.is_file():
                return f"env.containerfile {self.containerfile} does not exist; name a file"
            return None
        if (self.cache or default_cache_dir(self.home)).joinpath(self._rootfs_name()).is_file():
            return None
        if shutil.which("debootstrap") is None:
            return (
                "the default base image is made by debootstrap, which is not installed: "
                "apt-get install -y debootstrap (or name an image: env.image=NAME)"
            )
        if os.geteuid() != 0:
            return (
                "debootstrap must run as root to make the base image: run bugbout once as "
                "root, or name an image you have (env.image=NAME) or a Containerfile"
            )
        return None

    def _run_problem(self) -> str | None:
        """Run ``true`` in a real container (the host's ``/usr`` read-only, no image
        needed) and explain a failure."""
        with tempfile.TemporaryDirectory(prefix="bugbout-podman-probe-") as scratch:
            rootfs = Path(scratch) / "rootfs"
            (rootfs / "usr").mkdir(parents=True)
            binds = ["-v", "/usr:/usr:ro"]
            for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
                host = Path("/") / name
                if host.is_symlink():
                    (rootfs / name).symlink_to(host.readlink())
                elif host.is_dir():
                    (rootfs / name).mkdir()
                    binds += ["-v", f"{host}:{host}:ro"]
            try:
                result = self.cli(
                    "run", "--rm", "--network", "none", "--label", f"{LABEL}=probe",
                    *binds, "--rootfs", f"{rootfs}:O", "true",
                )  # fmt: skip
            except subprocess.TimeoutExpired:
                return f"podman did not run a container within {PROBE_TIMEOUT:.0f} s"
            finally:
                if self._service is None:
                    self._release_storage()
        if result.returncode == 0:
            return None
        return explain(result.stderr, self.config_dir)

    # -- images ----------------------------------------------------------------------

    def base_image(self) -> BaseImage:
        """The image to build environments on, made (and kept) on first use."""
        if self._base is None:
            if self.image:
                self._base = self._named_image(self.image)
            elif self.containerfile:
                self._base = self._containerfile_image(self.containerfile)
            else:
                self._base = self._debootstrap_image()
        return self._base

    def _named_image(self, name: str) -> BaseImage:
        from podman.errors import ImageNotFound

        client = self.client()
        try:
            image = client.images.get(name)
        except ImageNotFound:
            self._copy_from_default_storage(name)
            image = client.images.get(name)
        return BaseImage(name=name, id=str(image.id))

    def _copy_from_default_storage(self, name: str) -> None:
        """Copy ``name`` from the user's own podman storage into bugbout's."""
        with tempfile.TemporaryDirectory(prefix="bugbout-podman-") as scratch:
            archive = Path(scratch) / "image.tar"
            own = {k: v for k, v in os.environ.items() if not k.startswith("CONTAINERS_")}
            saved = subprocess.run(
                [self.executable, "save", "--format", "oci-archive", "-o", str(archive), name],
                env=own, capture_output=True, text=True, timeout=REQUEST_TIMEOUT, check=False,
            )  # fmt: skip
            if saved.returncode != 0:
                raise PodmanError(
                    f"podman image {name} exists neither in bugbout's storage nor in yours "
                    f"({_last_line(saved.stderr)}); build or load it (no registry is used)"
                )
            loaded = self.cli("load", "-i", str(archive), timeout=REQUEST_TIMEOUT)
            if loaded.returncode != 0:
                raise PodmanError(f"cannot copy podman image {name}: {_last_line(loaded.stderr)}")

    def _containerfile_image(self, containerfile: Path) -> BaseImage:
        if not containerfile.is_file():
            raise PodmanError(f"env.containerfile {containerfile} does not exist; name a file")
        key = _digest(containerfile.read_bytes().decode("utf-8", "replace"))
        name = f"{BASE_REPOSITORY}:file-{key}"
        client = self.client()
        with locked(self.storage_dir / "locks" / "base.lock"):
            if not client.images.exists(name):
                from podman.errors import APIError, BuildError

                try:
                    client.images.build(
                        path=str(containerfile.parent.absolute()),
                        dockerfile=containerfile.name,
                        tag=name,
                        labels={LABEL: "base"},
                        rm=True,
                    )
                except (APIError, BuildError) as exc:
                    raise PodmanError(
                        f"building {containerfile} failed: {_one_line(str(exc))}; fix the "
                        "Containerfile (it must not need a registry)"
                    ) from None
        return BaseImage(name=name, id=str(client.images.get(name).id))

    def _rootfs_name(self) -> str:
        return f"debian-{self._suite()}-{_architecture()}-minbase-python3.tar"

    def _suite(self) -> str:
        return self.suite or _os_release().get("VERSION_CODENAME") or "bookworm"

    def _debootstrap_image(self) -> BaseImage:
        tar = self.rootfs_tar()
        stat = tar.stat()
        name = f"{BASE_REPOSITORY}:{_digest(tar.name, str(stat.st_size), str(stat.st_mtime_ns))}"
        client = self.client()
        with locked(self.storage_dir / "locks" / "base.lock"):
            if not client.images.exists(name):
                with tar.open("rb") as body:
                    response = client.api.post(
                        "/images/import",
                        params={
                            "reference": name,
                            "changes": ["ENV LANG=C.UTF-8", f"LABEL {LABEL}=base"],
                            "message": f"bugbout: {tar.name}",
                        },
                        data=body,
                        headers={"Content-Type": "application/x-tar"},
                    )
                if response.status_code >= 300:
                    raise PodmanError(
                        f"podman import of {tar} failed: {_one_line(response.text)}; remove "
                        "that file to make it again"
                    )
        return BaseImage(name=name, id=str(client.images.get(name).id))

    def rootfs_tar(self) -> Path:
        """The debootstrap root filesystem (Debian minbase and python3), made on first use."""
        cache = self.cache or default_cache_dir(self.home)
        tar = cache / self._rootfs_name()
        if tar.is_file():
            return tar
        problem = self.base_problem()
        if problem is not None:
            raise PodmanError(problem)
        cache.mkdir(parents=True, exist_ok=True)
        with locked(cache / f"{tar.name}.lock"):
            if tar.is_file():
                return tar
            mirror = self.mirror or apt_mirror()
            with tempfile.TemporaryDirectory(prefix=".bugbout-rootfs-", dir=cache) as scratch:
                rootfs = Path(scratch) / "rootfs"
                try:
                    made = subprocess.run(
                        ["debootstrap", "--variant=minbase", "--include=python3",
                         self._suite(), str(rootfs), mirror],
                        capture_output=True, text=True, timeout=DEBOOTSTRAP_TIMEOUT,
                        check=False, stdin=subprocess.DEVNULL,
                    )  # fmt: skip
                except subprocess.TimeoutExpired:
                    raise PodmanError(
                        f"debootstrap from {mirror} took over {DEBOOTSTRAP_TIMEOUT:.0f} s; "
                        "set env.mirror to a nearer Debian mirror"
                    ) from None
                if made.returncode != 0:
                    raise PodmanError(
                        f"debootstrap {self._suite()} from {mirror} failed: "
                        f"{_last_line(made.stdout + made.stderr)}; set env.mirror or env.suite"
                    )
                for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
                    for path in (rootfs / leftover).glob("*"):
                        if path.is_file():
                            path.unlink()
                partial = Path(scratch) / "rootfs.tar"
                packed = subprocess.run(
                    ["tar", "-C", str(rootfs), "--numeric-owner", "-cf", str(partial), "."],
                    capture_output=True, text=True, timeout=DEBOOTSTRAP_TIMEOUT, check=False,
                )  # fmt: skip
                if packed.returncode != 0:
                    raise PodmanError(f"cannot pack {rootfs}: {_last_line(packed.stderr)}")
                partial.rename(tar)
        return tar

    # -- cleaning up -----------------------------------------------------------------

    def cleanup(self, *, images: bool = True) -> tuple[int, int]:
        """Remove every container (and, with ``images``, every image) bugbout labelled in
        its storage; how many of each were removed."""
        client = self.client()
        containers = client.containers.list(all=True, filters={"label": LABEL})
        for container in containers:
            with contextlib.suppress(Exception):
                container.remove(force=True)
        removed = 0
        if images:
            labelled = client.images.list(filters={"label": LABEL})
            # Environment images first: they are built on the base images.
            labelled.sort(key=lambda image: image.labels.get(LABEL) == "base")
            for image in labelled:
                with contextlib.suppress(Exception):
                    client.images.remove(image.id, force=True)
                    removed += 1
            self._base = None
        return len(containers), removed


# -- configuration files -------------------------------------------------------------------


def hard_limit(which: int) -> int:
    """The caller's hard limit (an unlimited one counts as podman's own default)."""
    _, hard = resource.getrlimit(which)
    return 1048576 if hard == resource.RLIM_INFINITY else int(hard)


def containers_conf(runroot: Path) -> str:
    """``containers.conf``: runc, cgroupfs, no network by default, ulimits within ours."""
    nofile = hard_limit(resource.RLIMIT_NOFILE)
    nproc = min(NPROC, hard_limit(resource.RLIMIT_NPROC))
    return (
        "# Written by bugbout: podman as it works on cgroup v1 hosts with capped ulimits.\n"
        "[containers]\n"
        f'default_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]\n'
        'netns = "none"\n'
        'log_driver = "k8s-file"\n'
        "[engine]\n"
        'runtime = "runc"\n'
        'cgroup_manager = "cgroupfs"\n'
        'events_logger = "file"\n'
        f"tmp_dir = {json.dumps(str(runroot / 'libpod'))}\n"
    )


def storage_conf(directory: Path, driver: str = "overlay", runroot: Path | None = None) -> str:
    """``storage.conf``: a private graph root under ``directory``, and a run root (by
    default beside it)."""
    return (
        "# Written by bugbout: its images and containers, apart from the user's.\n"
        "[storage]\n"
        f"driver = {json.dumps(driver)}\n"
        f"graphroot = {json.dumps(str(directory / 'storage'))}\n"
        f"runroot = {json.dumps(str(runroot or directory / 'run'))}\n"
    )


def explain(stderr: str, config_dir: Path) -> str:
    """What a failed ``podman run`` means, and the fix, as one line."""
    text = stderr.lower()
    last = _last_line(stderr)
    if "hybrid mode" in text or ("crun" in text and "cgroup" in text):
        return (
            f"podman's runtime crun refuses this cgroup v1 'hybrid' host ({last}): install "
            f"runc (apt-get install -y runc); bugbout selects it in {config_dir}/containers.conf"
        )
    if "rlimit" in text:
        return (
            f"podman cannot raise a ulimit without CAP_SYS_RESOURCE ({last}): keep nofile at "
            f"or below `ulimit -Hn` and nproc at or below 32768 in {config_dir}/containers.conf"
        )
    if "systemd" in text or "cgroup" in text:
        return (
            f"podman cannot manage this host's cgroups ({last}): use cgroup_manager = "
            f'"cgroupfs" as {config_dir}/containers.conf does, and runc as the runtime'
        )
    if "pivot_root" in text:
        return f"runc cannot pivot_root into the container ({last}): use a real root filesystem"
    if any(word in text for word in ("overlay", "graphdriver", "storage", "mount")):
        return (
            f"podman's storage does not work here ({last}): check "
            f"{config_dir}/storage.conf, or set env.driver=vfs (slow)"
        )
    return f"podman cannot run a container: {last} (configuration: {config_dir})"


def apt_mirror() -> str:
    """The Debian mirror apt uses on this machine (deb822 or one-line sources)."""
    sources = Path("/etc/apt/sources.list.d/debian.sources")
    with contextlib.suppress(OSError):
        for line in sources.read_text(encoding="utf-8").splitlines():
            if line.startswith("URIs:") and line.split()[1:]:
                return line.split()[1]
    with contextlib.suppress(OSError):
        for line in Path("/etc/apt/sources.list").read_text(encoding="utf-8").splitlines():
            words = line.split()
            if len(words) >= 3 and words[0] == "deb" and "security" not in words[1]:
                return next(word for word in words[1:] if "://" in word)
    return _DEFAULT_MIRROR


# -- one container run ---------------------------------------------------------------------


@dataclass(frozen=True)
class Mount:
    """A host path bind-mounted into a container."""

    source: str
    destination: str
    read_only: bool = False


@dataclass(frozen=True)
class RunSpec:
    """What :func:`run_container` runs: JSON on the runner's command line.

    The container has no network. It gets the runner's own environment (but its ``PATH``)
    with ``env`` on top. The directories ``mount_env`` name (e.g. ``HOME``, ``TMPDIR``)
    are bind-mounted read-write at the same path when they exist. When the variable
    ``forward_fd`` names an open file descriptor of the runner, the command inside sees
    that variable pointing at a file, whose lines are copied to the runner's descriptor
    when the run ends.
    """

    socket: str
    image: str
    argv: list[str]
    workdir: str
    mounts: list[Mount] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    mount_env: list[str] = field(default_factory=list)
    forward_fd: str | None = None
    role: str = "test"

    def to_json(self) -> str:
        from dataclasses import asdict

        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> RunSpec:
        data = json.loads(text)
        data["mounts"] = [Mount(**mount) for mount in data.get("mounts", [])]
        return cls(**data)


def runner_argv(spec: RunSpec) -> list[str]:
    """The command line that runs ``spec`` in a container and exits with its exit code.

    It starts quickly (``python -I`` on this file: only the standard library), copies the
    container's output to its stdout, and the container is removed however the runner
    ends, even when it is killed (a watcher in its own session removes it)."""
    return [sys.executable, "-I", str(Path(__file__).resolve()), "run", spec.to_json()]


def run_container(spec: RunSpec) -> int:
    """Run ``spec`` in a container; its exit code (125: the container did not run)."""
    forwarded = _forwarded_fd(spec.forward_fd)
    with tempfile.TemporaryDirectory(prefix="bugbout-podman-run-") as scratch:
        scratch_dir = Path(scratch)
        (scratch_dir / "output").touch()
        if forwarded is not None:  # what the caller put first (a key line) is seen inside
            (scratch_dir / "forwarded").write_bytes(_first_line(forwarded))
        api = _Api(spec.socket)
        watcher = _watch(spec.socket)
        name = f"bugbout-{spec.role}-{uuid.uuid4().hex[:12]}"
        watcher.guard(name)  # before it exists: a kill while it is created still removes it
        try:
            container = api.create(
                {**_container_spec(spec, scratch_dir, forwarded is not None), "name": name}
            )
        except PodmanError as exc:
            watcher.done()
            sys.stderr.write(f"bugbout: {exc}\n")
            return 125
        try:
            exit_code = api.run(container)
        except PodmanError as exc:
            sys.stderr.write(f"bugbout: {exc}\n")
            exit_code = 125
        finally:
            with contextlib.suppress(PodmanError, OSError):
                api.remove(container)
            watcher.done()
        with (scratch_dir / "output").open("rb") as output:
            shutil.copyfileobj(output, sys.stdout.buffer)
        sys.stdout.flush()
        if forwarded is not None:
            _forward(scratch_dir / "forwarded", forwarded)
    return exit_code


def _forwarded_fd(variable: str | None) -> int | None:
    value = os.environ.get(variable) if variable else None
    if value is None or not value.isdigit():
        return None
    try:
        os.fstat(int(value))
    except OSError:
        return None
    return int(value)


def _container_spec(spec: RunSpec, scratch: Path, forward: bool) -> dict[str, Any]:
    dropped = {"PATH", *([spec.forward_fd] if spec.forward_fd else [])}
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(spec.env)
    mounts = [
        {"destination": RUN_DIR, "source": str(scratch), "type": "bind", "options": ["rbind"]}
    ]
    seen = {RUN_DIR}
    for variable in spec.mount_env:
        directory = os.environ.get(variable)
        if directory and Path(directory).is_dir() and directory not in seen:
            seen.add(directory)
            mounts.append(_mount(Mount(str(Path(directory).resolve()), directory)))
    for mount in spec.mounts:
        if mount.destination not in seen and Path(mount.source).exists():
            seen.add(mount.destination)
            mounts.append(_mount(mount))
    redirect = f">{RUN_DIR}/output 2>&1"
    if forward and spec.forward_fd:
        # read-write, not append: the reader may blank what it read at the start
        redirect = f"3<>{RUN_DIR}/forwarded {redirect}"
        env[spec.forward_fd] = "3"
    return {
        "image": spec.image,
        "command": ["/bin/sh", "-c", f'exec {redirect}; exec "$@"', "sh", *spec.argv],
        "env": env,
        "work_dir": spec.workdir,
        "mounts": mounts,
        "netns": {"nsmode": "none"},
        "cap_drop": ["all"],  # as under bubblewrap: the tests need no privilege
        "no_new_privileges": True,
        "labels": {LABEL: spec.role},
        "log_configuration": {"driver": "none"},
        "hostname": "bugbout",
    }


def _mount(mount: Mount) -> dict[str, Any]:
    options = ["rbind", "ro" if mount.read_only else "rw"]
    return {
        "destination": mount.destination,
        "source": mount.source,
        "type": "bind",
        "options": options,
    }


def _first_line(fd: int) -> bytes:
    """The first line the caller wrote in the forwarded file (a key for the reader inside),
    or nothing when it is not a file."""
    try:
        head = os.pread(fd, 4096, 0)
    except OSError:
        return b""
    return head.split(b"\n", 1)[0] + b"\n" if b"\n" in head else b""


def _forward(path: Path, fd: int) -> None:
    """Copy the records the container wrote (JSON objects, one a line) to ``fd``."""
    kept = []
    with path.open("rb") as lines:
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

    def guard(self, container: str) -> None:
        with contextlib.suppress(OSError):
            os.write(self.pipe, f"{container}\n".encode())

    def done(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self.pipe, b"done\n")
        with contextlib.suppress(OSError):
            os.close(self.pipe)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _watch(socket_path: str) -> _Watcher:
    """Fork the watcher: it reads the container's id, then ``done``; end of file before
    ``done`` means the runner was killed, and the watcher removes the container."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid:
        os.close(read_end)
        return _Watcher(pid, write_end)
    try:  # the watcher
        os.close(write_end)
        os.setsid()  # out of the runner's process group: killing the group spares it
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, signal.SIG_IGN)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # nobody waits for the runner's output because of the watcher
            os.dup2(null, fd)
        with open(read_end, "rb") as lines:  # noqa: PTH123
            received = lines.read().decode().split()
        if received and received[-1] != "done":
            for _ in range(20):  # the runner may have died while podman was creating it
                try:
                    _Api(socket_path).remove(received[-1])
                    break
                except Exception:
                    time.sleep(0.25)
    finally:
        os._exit(0)


class _Connection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float | None) -> None:
        super().__init__("podman", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.socket_path)
        self.sock = sock


@dataclass
class _Api:
    """The few libpod REST calls a run needs, with the standard library (importing
    podman-py would cost each test run about 0.2 s)."""

    socket: str

    def call(
        self, method: str, path: str, body: object = None, timeout: float | None = 60.0
    ) -> Any:
        connection = _Connection(self.socket, timeout)
        try:
            connection.request(
                method,
                f"/{API_VERSION}/libpod{path}",
                body=None if body is None else json.dumps(body),
                headers={"Content-Type": "application/json"},
            )
            response = connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise PodmanError(f"podman service at {self.socket}: {exc!r}") from None
        finally:
            connection.close()
        if response.status >= 300:
            try:
                message = json.loads(data).get("message") or data.decode()
            except ValueError:
                message = data.decode("utf-8", "replace")
            raise PodmanError(_one_line(message))
        return json.loads(data) if data.strip() else None

    def create(self, spec: Mapping[str, Any]) -> str:
        return str(self.call("POST", "/containers/create", spec)["Id"])

    def run(self, container: str) -> int:
        """Start ``container`` and wait for it to exit: its exit code."""
        self.call("POST", f"/containers/{container}/start")
        code = self.call("POST", f"/containers/{container}/wait?condition=exited", timeout=None)
        return int(code)

    def remove(self, container: str) -> None:
        self.call("DELETE", f"/containers/{container}?force=true&timeout=0")


# -- helpers -------------------------------------------------------------------------------


def _answers(path: Path) -> bool:
    """Whether a podman service answers ``_ping`` on ``path``."""
    connection = _Connection(str(path), 5.0)
    try:
        connection.request("GET", "/_ping")
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):  # nothing there, or not a podman service
        return False
    finally:
        connection.close()


def _kernel_has(filesystem: str) -> bool:
    try:
        listed = Path("/proc/filesystems").read_text(encoding="utf-8")
    except OSError:
        return True
    return any(line.split()[-1:] == [filesystem] for line in listed.splitlines())


def _os_release() -> dict[str, str]:
    found: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/etc/os-release").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition("=")
            found[key.strip()] = value.strip().strip('"')
    return found


def _architecture() -> str:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        result = subprocess.run(
            ["dpkg", "--print-architecture"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if result.returncode == 0 and result.stdout.strip():
            return result.stdout.strip()
    return os.uname().machine


def _write_if_changed(path: Path, text: str) -> None:
    with contextlib.suppress(OSError):
        if path.read_text(encoding="utf-8") == text:
            return
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` (its folder made), for work done once per key."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as file:
        fcntl.flock(file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(file, fcntl.LOCK_UN)


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def _tail(path: Path) -> str:
    try:
        return _last_line(path.read_text(encoding="utf-8", errors="replace")[-4000:])
    except OSError:
        return "no log"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:400] if lines else "no error output"


def _one_line(text: str) -> str:
    return " ".join(text.split())[:400]


def _main(argv: Sequence[str]) -> int:
    if len(argv) == 2 and argv[0] == "run":
        return run_container(RunSpec.from_json(argv[1]))
    sys.stderr.write("usage: podman.py run SPEC-JSON\n")
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
