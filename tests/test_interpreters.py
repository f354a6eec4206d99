"""Choosing an interpreter for a project, finding the ones installed, and its PYTHONPATH."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.plumbing.environments.interpreters import (
    available_interpreters,
    choose_python,
    interpreter_version,
    python_path,
)

# -- choosing a Python ----------------------------------------------------------------------

ALL = {v: Path(f"/py/{v}/bin/python{v}") for v in ("3.7", "3.8", "3.9", "3.10", "3.11", "3.12")}


@pytest.mark.parametrize(
    ("declared", "date", "chosen"),
    [
        (None, "2021-06-15T10:00:00+02:00", "3.9"),
        (None, "2020-10-06", "3.9"),
        (None, "2020-10-05", "3.8"),  # released that day: not yet usable
        (None, "2017-01-01", "3.7"),  # nothing released yet: the oldest
        (None, None, "3.12"),
        (">=3.10", "2021-06-15", "3.10"),
        (">=3.6,<3.9", "2023-01-01", "3.8"),
        ("<=3.9", "2024-01-01", "3.9"),
        (">=3.9.1", "2021-01-01", "3.9"),
        ("~=3.8", "2021-01-01", "3.9"),
        (">=2.7, !=3.0.*, !=3.1.*", "2019-01-01", "3.7"),
        ("not a specifier", "2022-01-01", "3.10"),
    ],
)
def test_choose_python(declared: str | None, date: str | None, chosen: str) -> None:
    assert choose_python(declared, date, ALL, None) == (chosen, ALL[chosen])


def test_pinned_python_wins() -> None:
    assert choose_python(">=3.11", "2024-01-01", ALL, "3.8") == ("3.8", ALL["3.8"])
    assert choose_python(None, None, ALL, "3.9.18") == ("3.9", ALL["3.9"])


def test_pinned_python_missing() -> None:
    with pytest.raises(EnvironmentFailure) as error:
        choose_python(None, None, ALL, "3.6")
    message = str(error.value)
    assert "\n" not in message
    assert "3.7, 3.8, 3.9, 3.10, 3.11, 3.12" in message
    assert "pyenv install 3.6" in message


def test_declared_python_unsatisfiable() -> None:
    with pytest.raises(EnvironmentFailure, match=r"'>=3\.13'.*available: 3\.7, 3\.8"):
        choose_python(">=3.13", "2025-01-01", ALL, None)


# -- interpreters ---------------------------------------------------------------------------


def fake_python(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_available_interpreters_from_pyenv_and_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "pyenv"
    fake_python(root / "versions/3.9.1/bin/python3.9")
    newest = fake_python(root / "versions/3.9.18/bin/python3.9")
    fake_python(root / "versions/3.6.15/bin/python3.6")
    fake_python(root / "versions/my-venv/bin/python3.8")
    fake_python(root / "shims/python3.12")
    on_path = fake_python(tmp_path / "bin/python3.10")
    fake_python(tmp_path / "bin/python3.5")
    monkeypatch.setenv("PYENV_ROOT", str(root))
    monkeypatch.setenv("PATH", os.pathsep.join([str(root / "shims"), str(tmp_path / "bin")]))

    found = available_interpreters()

    running = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert found["3.9"] == newest
    assert found["3.10"] == on_path.resolve()
    assert running in found
    assert set(found) == {"3.6", "3.9", "3.10", running}


def test_available_interpreters_here() -> None:
    found = available_interpreters()
    assert f"{sys.version_info[0]}.{sys.version_info[1]}" in found
    for version, path in found.items():
        assert tuple(map(int, version.split("."))) >= (3, 6)
        assert "shims" not in path.parts
        assert interpreter_version(path).startswith(version + ".")


def test_interpreter_version_failure(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentFailure, match="cannot run"):
        interpreter_version(tmp_path / "missing")


# -- PYTHONPATH -----------------------------------------------------------------------------


def test_python_path(tmp_path: Path) -> None:
    extra = tmp_path / "plugin"
    assert python_path(tmp_path, ["src"], [extra]) == os.pathsep.join(
        [str(extra), str(tmp_path / "src"), str(tmp_path)]
    )
    assert python_path(tmp_path, ["."], []) == str(tmp_path)
