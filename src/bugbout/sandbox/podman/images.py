"""bugbout's podman images, without any registry, and the containers that build them.

The base image is a user-named image (looked up in bugbout's storage, then copied from
the user's own), or one built from the user's Containerfile, or by default a Debian
``minbase`` root filesystem with ``python3`` made by ``debootstrap``, kept as a tar in
:func:`default_cache_dir` and imported. Built once, then found by its name. On it,
:meth:`PodmanImages.build` runs a command in a labelled build container and commits the
result as a new image. Everything here goes through the service's podman-py client,
except copying an image out of the user's own storage (``podman save``), which only the
command line can reach.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bugbout.sandbox.locking import locked
from bugbout.sandbox.podman.config import PodmanError, digest, last_line, one_line
from bugbout.sandbox.podman.runner import LABEL, Mount
from bugbout.sandbox.podman.service import REQUEST_TIMEOUT, PodmanService

BASE_REPOSITORY = "localhost/bugbout-base"
DEBOOTSTRAP_TIMEOUT = 1800.0
BUILD_TIMEOUT = 900.0
_DEFAULT_MIRROR = "http://deb.debian.org/debian"
_PYTHONS = """\
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
"""Lists an image's interpreters as ``{"3.11": [path, "3.11.2"]}`` (any Python 3)."""


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
class PodmanImages(PodmanService):
    """bugbout's podman with its images. ``image`` / ``containerfile``: the base image,
    when not the default debootstrap one. ``suite`` / ``mirror``: what debootstrap
    installs from (default: this machine's Debian release and the mirror apt uses).
    ``cache``: where the debootstrap root filesystem is kept (:func:`default_cache_dir`).
    """

    image: str | None = None
    containerfile: Path | None = None
    suite: str | None = None
    mirror: str | None = None
    cache: Path | None = None
    _base: BaseImage | None = field(default=None, init=False, repr=False)
    _pythons: dict[str, dict[str, list[str]]] = field(default_factory=dict, init=False, repr=False)

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

    def base_problem(self) -> str | None:
        """Why the base image cannot be made, if it cannot."""
        if self.image or self.containerfile:
            if self.containerfile and not self.containerfile.is_file():
                return f"environment.containerfile {self.containerfile} does not exist; name a file"
            return None
        if (self.cache or default_cache_dir(self.home)).joinpath(self._rootfs_name()).is_file():
            return None
        if shutil.which("debootstrap") is None:
            return (
                "the default base image is made by debootstrap, which is not installed: "
                "apt-get install -y debootstrap (or name an image: environment.image=NAME)"
            )
        if os.geteuid() != 0:
            return (
                "debootstrap must run as root to make the base image: run bugbout once as "
                "root, or name an image you have (environment.image=NAME) or a Containerfile"
            )
        return None

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
                    f"({last_line(saved.stderr)}); build or load it (no registry is used)"
                )
            loaded = self.cli("load", "-i", str(archive), timeout=REQUEST_TIMEOUT)
            if loaded.returncode != 0:
                raise PodmanError(f"cannot copy podman image {name}: {last_line(loaded.stderr)}")

    def _containerfile_image(self, containerfile: Path) -> BaseImage:
        if not containerfile.is_file():
            raise PodmanError(
                f"environment.containerfile {containerfile} does not exist; name a file"
            )
        key = digest(containerfile.read_bytes().decode("utf-8", "replace"))
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
                        f"building {containerfile} failed: {one_line(str(exc))}; fix the "
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
        name = f"{BASE_REPOSITORY}:{digest(tar.name, str(stat.st_size), str(stat.st_mtime_ns))}"
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
                        f"podman import of {tar} failed: {one_line(response.text)}; remove "
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
            if not tar.is_file():
                self._debootstrap(tar)
        return tar

    def _debootstrap(self, tar: Path) -> None:
        mirror = self.mirror or apt_mirror()
        with tempfile.TemporaryDirectory(prefix=".bugbout-rootfs-", dir=tar.parent) as scratch:
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
                    "set environment.mirror to a nearer Debian mirror"
                ) from None
            if made.returncode != 0:
                raise PodmanError(
                    f"debootstrap {self._suite()} from {mirror} failed: "
                    f"{last_line(made.stdout + made.stderr)}; "
                    "set environment.mirror or environment.suite"
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
                raise PodmanError(f"cannot pack {rootfs}: {last_line(packed.stderr)}")
            partial.rename(tar)

    # -- images built on the base --------------------------------------------------------

    def pythons(self, base: BaseImage) -> dict[str, list[str]]:
        """The base image's Python interpreters by minor version: ``{"3.11": [path,
        "3.11.2"]}`` (asked once per image; kept beside bugbout's podman configuration)."""
        if base.id in self._pythons:
            return self._pythons[base.id]
        record = self.storage_dir / "interpreters" / f"{base.id}.json"
        try:
            found: dict[str, list[str]] = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            container, code, output = self._container(
                base.name, ["python3", "-c", _PYTHONS], "probe"
            )
            container.remove(force=True)
            try:
                found = json.loads(output.strip().splitlines()[-1]) if code == 0 else {}
            except (ValueError, IndexError):
                found = {}
            if not found:
                raise PodmanError(
                    f"the base image {base.name} has no Python 3 (python3 -c failed: "
                    f"{last_line(output)}); use an image with python3, "
                    "or leave environment.image unset"
                ) from None
            record.parent.mkdir(parents=True, exist_ok=True)
            record.write_text(json.dumps(found), encoding="utf-8")
        self._pythons[base.id] = found
        return found

    def built(self, image: str, build: Callable[[], None]) -> dict[str, str]:
        """Call ``build`` unless ``image`` exists (once across processes); its labels."""
        client = self.client()
        with locked(self.storage_dir / "locks" / f"{digest(image)}.lock"):
            if not client.images.exists(image):
                build()
            labels: dict[str, str] = client.images.get(image).labels or {}
        return labels

    def build(
        self,
        base: BaseImage,
        image: str,
        argv: list[str],
        *,
        mounts: Sequence[Mount] = (),
        env: dict[str, str] | None = None,
        changes: Sequence[str] = (),
    ) -> tuple[int, str]:
        """Run ``argv`` in a build container of ``base`` with the host's network and, when
        it succeeds, commit it as ``image`` (labelled ``environment``, with ``changes``); its
        exit code and output. The container is removed either way."""
        container, code, output = self._container(
            base.name, argv, "build", network=True, mounts=mounts, env=env
        )
        try:
            if code == 0:
                repository, tag = image.rsplit(":", 1)
                changes = [f"LABEL {LABEL}=environment", *changes]
                container.commit(repository=repository, tag=tag, changes=changes)
        finally:
            container.remove(force=True)
        return code, output

    def _container(
        self,
        image: str,
        argv: list[str],
        role: str,
        *,
        network: bool = False,
        mounts: Sequence[Mount] = (),
        env: dict[str, str] | None = None,
    ) -> tuple[Any, int, str]:
        """Run ``argv`` in a new labelled container of ``image``; the container (not yet
        removed), its exit code and its output."""
        container = self.client().containers.create(
            image,
            argv,
            labels={LABEL: role},
            network_mode="host" if network else "none",
            mounts=[
                {
                    "type": "bind",
                    "source": m.source,
                    "target": m.destination,
                    "read_only": m.read_only,
                }
                for m in mounts
            ],
            environment=env or {},
        )
        try:
            container.start()
            code = int(container.wait(condition="exited", timeout=BUILD_TIMEOUT))
            logs = container.logs(stdout=True, stderr=True)
            output = (logs if isinstance(logs, bytes) else b"".join(logs)).decode(
                "utf-8", "replace"
            )
        except Exception:
            container.remove(force=True)
            raise
        return container, code, output


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
