"""cffi in the build of every source distribution when it is pinned: an old ``setup.py``
leaves it out when asked what it needs, and then builds a wheel with no compiled module
(cryptography 1.5's wheel lacked ``_constant_time``: every RSA test failed before and
after the fix)."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from bugbout.core.plumbing.environments import uv_resolution
from bugbout.core.plumbing.environments.uv_program import uv_binary
from bugbout.core.plumbing.environments.uv_resolution import build_helpers
from bugbout.plugins.environments import uv
from bugbout.plugins.environments.uv import UvBuilder
from local_index import Wheel
from test_environments import _local_index, make_tree, request_for
from test_uv_resolution import FakeUv

BACKEND = """\
import base64, hashlib, importlib.util, zipfile


def get_requires_for_build_wheel(config_settings=None):
    return []  # as setup.py says for egg_info: the helper is not named


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = {"crypto/__init__.py": b""}
    if importlib.util.find_spec("cffi"):  # as setuptools honours cffi_modules
        files["crypto/_compiled.py"] = b"COMPILED = True\\n"
    info = "crypto-1.0.dist-info"
    files[info + "/METADATA"] = b"Metadata-Version: 2.1\\nName: crypto\\nVersion: 1.0\\n"
    files[info + "/WHEEL"] = (
        b"Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    )
    record = ""
    name = "crypto-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel_directory + "/" + name, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record += f"{path},sha256={digest.decode()},{len(data)}\\n"
        archive.writestr(info + "/RECORD", record + info + "/RECORD,,\\n")
    return name
"""


def _sdist(path: Path) -> Path:
    """``crypto-1.0.tar.gz``: compiled only when cffi is in its build environment."""
    files = {
        "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\n'
        'backend-path = ["."]\n',
        "PKG-INFO": "Metadata-Version: 2.1\nName: crypto\nVersion: 1.0\n",
        "backend.py": BACKEND,
    }
    with tarfile.open(path, "w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            member = tarfile.TarInfo(f"crypto-1.0/{name}")
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    return path


def _compiled(tmp_path: Path, name: str, options: list[str]) -> bool:
    """Whether ``crypto`` installed by real uv with ``options`` has its compiled module."""
    venv = tmp_path / name
    uv_call = [uv_binary(), "--cache-dir", str(tmp_path / "cache")]
    subprocess.run([*uv_call, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    python = str(venv / "bin" / "python")
    install = ["pip", "install", "-q", "--python", python, "--no-deps", *options, "crypto==1.0"]
    subprocess.run([*uv_call, *install], check=True, timeout=120)
    found = subprocess.run([python, "-c", "import crypto._compiled"], check=False)
    return found.returncode == 0


def test_a_pinned_cffi_reaches_the_build_that_does_not_ask_for_it(tmp_path: Path) -> None:
    cffi = tmp_path / "cffi-1.0-py3-none-any.whl"
    cffi.write_bytes(Wheel("cffi", "1.0", "2016-01-01T00:00:00Z").build())
    index = _local_index(tmp_path / "index", [cffi, _sdist(tmp_path / "crypto-1.0.tar.gz")])
    options = ["--index-url", index]
    assert not _compiled(tmp_path, "bare", options)  # what the wheel of cryptography 1.5 was

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    helped = build_helpers(["crypto==1.0"], ["cffi==1.0", "crypto==1.0"], scratch)
    assert _compiled(tmp_path, "helped", [*options, *helped])


def test_no_helper_pinned_no_configuration(tmp_path: Path) -> None:
    assert build_helpers(["crypto==1.0"], ["crypto==1.0", "six==1.0"], tmp_path) == []
    assert build_helpers(["cffi==1.0", "pycparser==2.0"], ["cffi==1.0"], tmp_path) == []
    assert list(tmp_path.iterdir()) == []


def test_the_builder_gives_the_pinned_cffi_to_the_others_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeUv().install(monkeypatch)
    monkeypatch.setattr(uv_resolution, "supports_exclude_newer_package", lambda: True)
    configurations: list[str] = []

    def reading(args: list[str], **kw: object) -> str:
        if "--config-file" in args:
            configurations.append(Path(args[args.index("--config-file") + 1]).read_text())
        return fake(args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(uv, "run_uv", reading)
    monkeypatch.setattr(uv_resolution, "run_uv", reading)
    tree = make_tree(tmp_path, ["cffi", "crypto"])
    UvBuilder().build(request_for(tree, tmp_path / "home", python="3.12"))
    assert fake.installs[-1] == ["cffi==1.0", "crypto==1.0", "pytest==8.0"]
    assert configurations == [
        '[extra-build-dependencies]\n"crypto" = ["cffi==1.0"]\n"pytest" = ["cffi==1.0"]\n'
    ]


def test_an_environment_built_without_the_helper_is_not_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    FakeUv().install(monkeypatch)
    trees = [make_tree(tmp_path / "cffi", ["cffi", "crypto"]), make_tree(tmp_path / "six", ["six"])]

    def keys() -> list[str]:
        home = tmp_path / f"home-{uv_resolution.BUILD_HELPERS}"
        return [UvBuilder().build(request_for(t, home, python="3.12")).key for t in trees]

    helped = keys()
    monkeypatch.setattr(uv_resolution, "BUILD_HELPERS", ())  # as before cffi reached builds
    bare = keys()
    assert helped[0] != bare[0]
    assert helped[1] == bare[1]  # an environment without cffi keeps its key
