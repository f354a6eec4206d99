"""The ``podman`` environment builder: every test run in a container, built without a registry.

An era's environment is an image: the base image (:meth:`bugbout.sandbox.podman.Podman.
base_image`: a named image, a Containerfile, or Debian ``minbase`` with ``python3`` made by
debootstrap) with a virtual environment in :data:`ENV_DIR` holding exactly what the ``uv``
builder would install (the test and runtime dependencies as of the fix, never the
project). uv runs inside a build container (the host's uv binary, mounted read-only) and
the container is committed as ``localhost/bugbout-env:<key>``, labelled; an image that
exists is reused.

Each test run is one container (:func:`bugbout.sandbox.podman.run_container`): no network,
the tree under test bind-mounted read-write at its own path (so node ids and
``--rootdir`` are unchanged), the extra paths read-only, the run's private HOME
writable; nothing else of the host is visible. Outcomes come back through a file in a
bind-mounted scratch directory that the runner copies to bugbout's descriptor, so they are
collected exactly as on the host. When a run times out and bugbout kills the runner, a
watcher it left in its own session removes the container.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bugbout import EnvironmentPlugin, hookimpl
from bugbout.core.errors import EnvironmentFailure
from bugbout.plugins.environments.uv import UvOptions, describe

if TYPE_CHECKING:
    from bugbout.core.environment import Command, EnvironmentRequest
    from bugbout.sandbox.podman import BaseImage, Podman

ENV_DIR = "/opt/bugbout/env"
"""The virtual environment inside an environment image."""
ENV_REPOSITORY = "localhost/bugbout-env"
BUILD_TIMEOUT = 900.0
_UV = "/.bugbout-uv/uv"
_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
_UV_CACHE = "/.bugbout-uv/cache"
_PATH = f"{ENV_DIR}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_PROBE = """\
import glob, json, os, re, subprocess
VERSION = "import sys; print('%d.%d.%d' % sys.version_info[:3])"
found = {}
for folder in ("/usr/local/bin", "/usr/bin"):
    for path in sorted(glob.glob(folder + "/python3.*")):
        if not re.match(r"python3[.][0-9]+$", os.path.basename(path)):
            continue
        try:
            out = subprocess.Popen([path, "-c", VERSION], stdout=subprocess.PIPE,
                                   universal_newlines=True).communicate()[0]
        except OSError:
            continue
        if out.strip():
            found.setdefault(out.strip().rsplit(".", 1)[0], [path, out.strip()])
print(json.dumps(found))
"""


class PodmanOptions(UvOptions):
    """Options of the ``podman`` environment builder: uv's (uv builds the environment in
    the image), and where the images come from and live."""

    image: str | None = None
    """A base image you have (no registry is used); default: Debian minbase by debootstrap."""
    containerfile: str | None = None
    """A Containerfile to build the base image from (its folder is the build context)."""
    socket: str | None = None
    """An existing podman service's socket; by default bugbout starts a private one."""
    storage: str | None = None
    """Where bugbout's podman keeps images and containers (default ``BUGBOUT_HOME/podman``)."""
    cache: str | None = None
    """Where the debootstrap root filesystem is kept (default ``/var/cache/bugbout`` as root)."""
    suite: str | None = None
    """The Debian release debootstrap installs (default: this machine's)."""
    mirror: str | None = None
    """The Debian mirror debootstrap installs from (default: the one apt uses)."""
    driver: str = "overlay"
    """podman's storage driver: ``overlay`` (kernel), or ``vfs`` (slow, works anywhere)."""


@dataclass(frozen=True)
class PodmanEnvironment:
    """An environment image; each test run is a container of it."""

    image: str
    socket: str
    base: str
    python_version: str
    exclude_newer: str | None
    key: str
    import_root: str
    test_extras_error: str | None = None

    @property
    def description(self) -> str:
        return describe(
            f"podman: Python {self.python_version} on {self.base}",
            self.exclude_newer,
            self.test_extras_error,
        )

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        """A runner that runs ``python -m pytest <args>`` in a container of the image."""
        from bugbout.core.environment import Command
        from bugbout.core.interpreters import python_path
        from bugbout.sandbox.podman import Mount, RunSpec, runner_argv

        where = tree.absolute()
        mounts = [Mount(str(where.resolve()), str(where))]
        mounts += [
            Mount(str(path.resolve()), str(path.absolute()), read_only=True) for path in extra_paths
        ]
        spec = RunSpec(
            socket=self.socket,
            image=self.image,
            argv=[f"{ENV_DIR}/bin/python", "-m", "pytest", *args],
            workdir=str(where),
            mounts=mounts,
            env={
                "PYTHONPATH": python_path(where, self.import_root, extra_paths),
                "VIRTUAL_ENV": ENV_DIR,
                "PATH": _PATH,
            },
            mount_env=["HOME", "TMPDIR"],
            forward_fd="BUGBOUT_OUTCOMES_FD",
            role="test",
        )
        return Command(argv=runner_argv(spec), cwd=where, contained=True)


@dataclass
class PodmanBuilder:
    """Builds (or finds) the environment image of a fix's era."""

    options: PodmanOptions = field(default_factory=PodmanOptions)
    _podman: Podman | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _built: dict[str, PodmanEnvironment] = field(default_factory=dict, init=False, repr=False)
    _interpreters: dict[str, dict[str, list[str]]] = field(
        default_factory=dict, init=False, repr=False
    )

    def podman(self, home: Path) -> Podman:
        """bugbout's podman for ``home``, checked and its service started once: an
        EnvironmentFailure if it cannot work. Ground truth builds environments from several
        threads at once (``tasks.jobs``), and they must share one service."""
        with self._lock:
            if self._podman is None:
                from bugbout.sandbox.podman import Podman

                podman = Podman(
                    home,
                    socket=self.options.socket,
                    storage=_path(self.options.storage),
                    image=self.options.image,
                    containerfile=_path(self.options.containerfile),
                    suite=self.options.suite,
                    mirror=self.options.mirror,
                    cache=_path(self.options.cache),
                    driver=self.options.driver,
                )
                problem = podman.problem()
                if problem is not None:
                    raise EnvironmentFailure(problem)
                podman.client()
                self._podman = podman
            return self._podman

    def close(self) -> None:
        """Stop the podman service this builder started."""
        if self._podman is not None:
            self._podman.close()
            self._podman = None

    def build(self, request: EnvironmentRequest) -> PodmanEnvironment:
        """The environment image for ``request``'s era, built once per key."""
        from bugbout.core import project_metadata as meta
        from bugbout.core.interpreters import choose_python
        from bugbout.core.records import digest
        from bugbout.plugins.environments.uv import exclude_newer_date
        from bugbout.sandbox.podman import PodmanError

        try:
            podman = self.podman(request.home)
            base = podman.base_image()
            interpreters = self._available(podman, base)
        except PodmanError as exc:
            raise EnvironmentFailure(str(exc)) from None
        dependencies = [
            d for d in meta.declared_dependencies(request.tree) if not d.startswith("-")
        ]
        minor, interpreter = choose_python(
            meta.declared_python(request.tree),
            request.date,
            {version: Path(found[0]) for version, found in interpreters.items()},
            request.project.python,
        )
        version = interpreters[minor][1]
        exclude_newer = (
            exclude_newer_date(request.date)
            if self.options.exclude_newer and request.date
            else None
        )
        test_dependencies = list(request.project.test_dependencies)
        declared_tests = (
            meta.declared_test_dependencies(request.tree) if self.options.test_extras else []
        )
        key = digest(
            "podman",
            base.id,
            version,
            json.dumps(sorted(dependencies)),
            json.dumps(sorted(test_dependencies)),
            exclude_newer or "",
            self.options.index_url or "",
            json.dumps(sorted(declared_tests)),
        )
        if key in self._built:
            return self._built[key]
        image = f"{ENV_REPOSITORY}:{key}"
        try:
            error = _Build(
                podman=podman,
                base=base,
                image=image,
                interpreter=str(interpreter),
                required=list(dict.fromkeys([*test_dependencies, *dependencies])),
                declared=declared_tests,
                exclude_newer=exclude_newer,
                index_url=self.options.index_url,
            ).run()
        except PodmanError as exc:
            raise EnvironmentFailure(f"building the podman environment failed: {exc}") from None
        environment = PodmanEnvironment(
            image=image,
            socket=str(podman.socket_path),
            base=base.name,
            python_version=version,
            exclude_newer=exclude_newer,
            key=key,
            import_root=request.project.import_root,
            test_extras_error=error,
        )
        self._built[key] = environment
        return environment

    def _available(self, podman: Podman, base: BaseImage) -> dict[str, list[str]]:
        """The base image's Python interpreters by minor version: ``{"3.11": [path, "3.11.2"]}``
        (asked once per image; kept beside bugbout's podman configuration)."""
        if base.id in self._interpreters:
            return self._interpreters[base.id]
        record = podman.storage_dir / "interpreters" / f"{base.id}.json"
        try:
            found: dict[str, list[str]] = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            code, output = _run(podman, base.name, ["python3", "-c", _PROBE], role="probe")
            try:
                found = json.loads(output.strip().splitlines()[-1]) if code == 0 else {}
            except (ValueError, IndexError):
                found = {}
            if not found:
                raise EnvironmentFailure(
                    f"the base image {base.name} has no Python 3 (python3 -c failed: "
                    f"{_last(output)}); use an image with python3, or leave env.image unset"
                ) from None
            record.parent.mkdir(parents=True, exist_ok=True)
            record.write_text(json.dumps(found), encoding="utf-8")
        self._interpreters[base.id] = found
        return found


@dataclass
class _Build:
    """One environment image: uv in a container of the base image, committed."""

    podman: Podman
    base: BaseImage
    image: str
    interpreter: str
    required: list[str]
    declared: list[str]
    exclude_newer: str | None
    index_url: str | None

    def run(self) -> str | None:
        """Build the image unless it exists; why the declared test dependencies were left
        out, if they were."""
        from bugbout.sandbox.podman import locked

        client = self.podman.client()
        with locked(self.podman.storage_dir / "locks" / f"{self.image.rsplit(':', 1)[1]}.lock"):
            if not client.images.exists(self.image):
                self._build()
            labels = client.images.get(self.image).labels or {}
        error = labels.get("io.bugbout.test-extras-error")
        return error or None

    def _build(self) -> None:
        from bugbout.plugins.environments.uv import uv_error

        declared = [d for d in dict.fromkeys(self.declared) if d not in self.required]
        attempts = [[*declared, *self.required], self.required] if declared else [self.required]
        error = None
        for number, requirements in enumerate(attempts):
            container, code, output = self._install(requirements)
            if code == 0:
                self._commit(container, requirements, error)
                return
            container.remove(force=True)
            reason = uv_error(output)
            if number == len(attempts) - 1:
                raise EnvironmentFailure(
                    f"installing the test and runtime dependencies in {self.base.name} failed: "
                    f"{reason}"
                )
            error = reason

    def _install(self, requirements: list[str]) -> tuple[Any, int, str]:
        import shlex

        from bugbout.plugins.environments.uv import _uv_binary

        python = f"{ENV_DIR}/bin/python"
        options = ["--exclude-newer", self.exclude_newer] if self.exclude_newer else []
        if self.index_url:
            options += ["--index-url", self.index_url]
        script = shlex.join([_UV, "venv", "--no-project", "--python", self.interpreter, ENV_DIR])
        if requirements:
            script += " && " + shlex.join(
                [_UV, "pip", "install", "--python", python, *options, *requirements]
            )
        script += " && " + shlex.join([_UV, "pip", "freeze", "--python", python])
        cache = self.podman.storage_dir / "uv-cache"
        cache.mkdir(parents=True, exist_ok=True)
        uv = Path(_uv_binary()).resolve()
        mounts, env = _host_network_settings()
        return _start(
            self.podman,
            self.base.name,
            ["/bin/sh", "-c", script],
            role="build",
            network=True,
            mounts=[(str(uv), _UV, True), (str(cache), _UV_CACHE, False), *mounts],
            env={
                **env,
                "UV_CACHE_DIR": _UV_CACHE,
                "UV_LINK_MODE": "copy",
                "UV_PYTHON_DOWNLOADS": "never",
                "UV_NO_CONFIG": "1",
                "UV_NO_PROGRESS": "1",
            },
        )

    def _commit(self, container: Any, requirements: list[str], error: str | None) -> None:
        repository, tag = self.image.rsplit(":", 1)
        changes = [
            "LABEL io.bugbout=env",
            f"LABEL io.bugbout.key={tag}",
            f"LABEL io.bugbout.requirements={json.dumps(json.dumps(requirements))}",
            f"ENV VIRTUAL_ENV={ENV_DIR}",
            f"ENV PATH={_PATH}",
        ]
        if error is not None:
            changes.append(f"LABEL io.bugbout.test-extras-error={json.dumps(error)}")
        try:
            container.commit(repository=repository, tag=tag, changes=changes)
        finally:
            container.remove(force=True)


def _host_network_settings() -> tuple[list[tuple[str, str, bool]], dict[str, str]]:
    """What uv on this machine uses to reach the index, for uv in a build container: the
    proxy variables, uv's own variables, and the certificate authorities that
    ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` name (mounted read-only at the same path)."""
    import os

    env = {
        name: value
        for name, value in os.environ.items()
        if name.upper() in _PROXY_VARIABLES or name.startswith("UV_")
    }
    mounts = []
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        value = os.environ.get(name)
        if value and Path(value).exists():
            env[name] = value
            mounts.append((str(Path(value).resolve()), value, True))
    return mounts, env


def _start(
    podman: Podman,
    image: str,
    argv: list[str],
    *,
    role: str,
    network: bool = False,
    mounts: list[tuple[str, str, bool]] | None = None,
    env: dict[str, str] | None = None,
) -> tuple[Any, int, str]:
    """Run ``argv`` in a new labelled container of ``image``; the container (not yet
    removed), its exit code and its output."""
    from bugbout.sandbox.podman import LABEL

    client = podman.client()
    container = client.containers.create(
        image,
        argv,
        labels={LABEL: role},
        network_mode="host" if network else "none",
        mounts=[
            {"type": "bind", "source": source, "target": target, "read_only": read_only}
            for source, target, read_only in mounts or []
        ],
        environment=env or {},
    )
    try:
        container.start()
        code = int(container.wait(condition="exited", timeout=BUILD_TIMEOUT))
        logs = container.logs(stdout=True, stderr=True)
        output = (logs if isinstance(logs, bytes) else b"".join(logs)).decode("utf-8", "replace")
    except Exception:
        container.remove(force=True)
        raise
    return container, code, output


def _run(podman: Podman, image: str, argv: list[str], *, role: str) -> tuple[int, str]:
    container, code, output = _start(podman, image, argv, role=role)
    container.remove(force=True)
    return code, output


def _path(value: str | None) -> Path | None:
    return Path(value).expanduser() if value else None


def _last(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


@hookimpl
def bugbout_environments() -> Iterator[EnvironmentPlugin]:
    yield EnvironmentPlugin(
        name="podman",
        factory=PodmanBuilder,
        options=PodmanOptions,
        description="a podman image per Python version and dependency era; each test run "
        "in a container with no network (no registry needed)",
    )
