"""The ``podman`` environment builder: every test run in a container, built without a registry.

An era's environment is an image: the base image (:meth:`bugbout.sandbox.podman.images.
PodmanImages.base_image`: a named image, a Containerfile, or Debian ``minbase`` with
``python3`` made by debootstrap) with a virtual environment in :data:`ENV_DIR` holding
exactly what the ``uv`` builder would install (the test and runtime dependencies as of
the fix, never the project). uv runs inside a build container (the host's uv binary,
mounted read-only) committed as ``localhost/bugbout-env:<key>``
(:meth:`bugbout.sandbox.podman.images.PodmanImages.build`); an image that exists is
reused.

Each test run is one container (:mod:`bugbout.sandbox.podman.runner`): no network, the
tree under test bind-mounted read-write at its own path (so node ids and ``--rootdir``
are unchanged), the extra paths read-only, the run's private HOME writable; nothing else
of the host is visible. Outcomes come back through a file in a bind-mounted scratch
directory that the runner copies to bugbout's descriptor, so they are collected exactly
as on the host. When a run times out and bugbout kills the runner, a watcher it left in
its own session removes the container.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bugbout.environments import (
    EnvironmentFailure,
    EnvironmentPlugin,
    UvOptions,
    describe,
    hookimpl,
)

if TYPE_CHECKING:
    from bugbout.environments import BaseImage, Command, EnvironmentRequest, Mount, Podman

ENV_DIR = "/opt/bugbout/env"
"""The virtual environment inside an environment image."""
ENV_REPOSITORY = "localhost/bugbout-env"
_UV = "/.bugbout-uv/uv"
_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
_UV_CACHE = "/.bugbout-uv/cache"
_PATH = f"{ENV_DIR}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


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
    """An environment image; each test run is a container of it, run by ``podman`` with
    bugbout's configuration ``config``, or through the podman service at ``url``."""

    image: str
    podman: str
    config: dict[str, str] = field(hash=False)
    url: str | None
    base: str
    python_version: str
    exclude_newer: str | None
    key: str
    import_roots: tuple[str, ...]
    test_extras_error: str | None = None

    @property
    def left_out(self) -> dict[str, str]:
        """The declared test dependencies it lacks, with why (they did not resolve)."""
        if not self.test_extras_error:
            return {}
        return {"declared test extras": f"did not resolve: {self.test_extras_error}"}

    @property
    def description(self) -> str:
        return describe(
            f"podman: Python {self.python_version} on {self.base}",
            self.exclude_newer,
            self.left_out,
        )

    def command(self, args: list[str], tree: Path, extra_paths: list[Path]) -> Command:
        """A runner that runs ``python -m pytest <args>`` in a container of the image."""
        from bugbout.environments import (
            Command,
            Mount,
            RunSpec,
            confined_owner,
            python_path,
            runner_argv,
        )

        where = tree.absolute()
        mounts = [Mount(str(where.resolve()), str(where))]
        mounts += [
            Mount(str(path.resolve()), str(path.absolute()), read_only=True) for path in extra_paths
        ]
        spec = RunSpec(
            podman=self.podman,
            config=dict(self.config),
            argv=[f"{ENV_DIR}/bin/python", "-m", "pytest", *args],
            workdir=str(where),
            role="test",
            image=self.image,
            mounts=mounts,
            mount_env=["HOME", "TMPDIR"],
            env={
                "PYTHONPATH": python_path(where, self.import_roots, extra_paths),
                "VIRTUAL_ENV": ENV_DIR,
                "PATH": _PATH,
            },
            forward_fd="BUGBOUT_OUTCOMES_FD",
            url=self.url,
            user=":".join(map(str, owner)) if (owner := confined_owner()) else None,
        )
        return Command(argv=runner_argv(spec), cwd=where, contained=True)


@dataclass
class PodmanBuilder:
    """Builds (or finds) the environment image of a fix's era."""

    options: PodmanOptions = field(default_factory=PodmanOptions)
    _podman: Podman | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _built: dict[str, PodmanEnvironment] = field(default_factory=dict, init=False, repr=False)

    def podman(self, home: Path) -> Podman:
        """bugbout's podman for ``home``, checked and its service started once: an
        EnvironmentFailure if it cannot work. Ground truth builds environments from several
        threads at once (``tasks.jobs``), and they must share one service."""
        with self._lock:
            if self._podman is None:
                from bugbout.environments import Podman

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
        from bugbout.environments import (
            PodmanError,
            choose_python,
            declared_dependencies,
            declared_python,
            declared_test_dependencies,
            digest,
            exclude_newer_date,
        )

        try:
            podman = self.podman(request.home)
            base = podman.base_image()
            interpreters = podman.pythons(base)
        except PodmanError as exc:
            raise EnvironmentFailure(str(exc)) from None
        dependencies = [d for d in declared_dependencies(request.tree) if not d.startswith("-")]
        minor, interpreter = choose_python(
            declared_python(request.tree),
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
            declared_test_dependencies(request.tree) if self.options.test_extras else []
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
        build = _ImageBuild(
            podman=podman,
            base=base,
            image=image,
            interpreter=str(interpreter),
            required=list(dict.fromkeys([*test_dependencies, *dependencies])),
            declared=declared_tests,
            exclude_newer=exclude_newer,
            index_url=self.options.index_url,
        )
        try:
            error = podman.built(image, build.run).get("io.bugbout.test-extras-error")
        except PodmanError as exc:
            raise EnvironmentFailure(f"building the podman environment failed: {exc}") from None
        environment = PodmanEnvironment(
            image=image,
            podman=shutil.which(podman.executable) or podman.executable,
            config=podman.environ(),
            url=f"unix://{podman.socket_path}" if podman.socket else None,
            base=base.name,
            python_version=version,
            exclude_newer=exclude_newer,
            key=key,
            import_roots=request.project.import_roots,
            test_extras_error=error or None,
        )
        self._built[key] = environment
        return environment


@dataclass
class _ImageBuild:
    """One environment image: uv installs the requirements in a build container of the
    base image, with the declared test extras if it can, else without them."""

    podman: Podman
    base: BaseImage
    image: str
    interpreter: str
    required: list[str]
    declared: list[str]
    exclude_newer: str | None
    index_url: str | None

    def run(self) -> None:
        from bugbout.environments import uv_error

        declared = [d for d in dict.fromkeys(self.declared) if d not in self.required]
        attempts = [[*declared, *self.required], self.required] if declared else [self.required]
        error = None
        for number, requirements in enumerate(attempts):
            code, output = self._install(requirements, error)
            if code == 0:
                return
            reason = uv_error(output)
            if number == len(attempts) - 1:
                raise EnvironmentFailure(
                    f"installing the test and runtime dependencies in {self.base.name} failed: "
                    f"{reason}"
                )
            error = reason

    def _install(self, requirements: list[str], error: str | None) -> tuple[int, str]:
        from bugbout.environments import Mount, uv_binary

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
        uv = Path(uv_binary()).resolve()
        mounts, env = _host_network_settings()
        changes = [
            f"LABEL io.bugbout.key={self.image.rsplit(':', 1)[1]}",
            f"LABEL io.bugbout.requirements={json.dumps(json.dumps(requirements))}",
            f"ENV VIRTUAL_ENV={ENV_DIR}",
            f"ENV PATH={_PATH}",
        ]
        if error is not None:
            changes.append(f"LABEL io.bugbout.test-extras-error={json.dumps(error)}")
        return self.podman.build(
            self.base,
            self.image,
            ["/bin/sh", "-c", script],
            mounts=[Mount(str(uv), _UV, True), Mount(str(cache), _UV_CACHE), *mounts],
            env={
                **env,
                "UV_CACHE_DIR": _UV_CACHE,
                "UV_LINK_MODE": "copy",
                "UV_PYTHON_DOWNLOADS": "never",
                "UV_NO_CONFIG": "1",
                "UV_NO_PROGRESS": "1",
            },
            changes=changes,
        )


def _host_network_settings() -> tuple[list[Mount], dict[str, str]]:
    """What uv on this machine uses to reach the index, for uv in a build container: the
    proxy variables, uv's own variables, and the certificate authorities that
    ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` name (mounted read-only at the same path)."""
    from bugbout.environments import Mount

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
            mounts.append(Mount(str(Path(value).resolve()), value, True))
    return mounts, env


def _path(value: str | None) -> Path | None:
    return Path(value).expanduser() if value else None


@hookimpl
def bugbout_environments() -> Iterator[EnvironmentPlugin]:
    yield EnvironmentPlugin(
        name="podman",
        factory=PodmanBuilder,
        options=PodmanOptions,
        description="a podman image per Python version and dependency era; each test run "
        "in a container with no network (no registry needed)",
    )
