"""Interpreters on demand: the era's Python, found on the machine or provided by uv.

uv downloads from a python-build-standalone mirror served on 127.0.0.1
(:mod:`python_mirror`), made from a pyenv Python this machine has; the interpreter search
is pointed at a pyenv root without that version, so uv must provide it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import (
    BoutSettings,
    PluginChoice,
    ProjectSettings,
)
from bugbout.core.plumbing.environments.interpreters import era_python
from bugbout.core.plumbing.environments.managed_pythons import pythons_directory
from bugbout.onboarding.doctor.eras import machine_eras
from bugbout.plugins.environments.uv import UvBuilder, UvOptions
from bugbout.testing import RepositoryBuilder
from history import offline_ground_truth
from python_mirror import downloads_json, hide, mirror, pyenv_python, serving
from test_environments import make_tree, request_for, run

ALL = ["3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]


@pytest.mark.parametrize(
    ("declared", "date", "local", "era"),
    [
        (">=3.7", "2021-06-15", ALL, "3.9"),  # the newest released before the fix, here
        (">=3.7", "2020-06-15", ["3.9", "3.11"], "3.8"),  # none of the era here: provided
        (">=3.7", "2023-11-15", ["3.11"], "3.11"),  # maintained then: no download
        (">=3.7", "2023-11-15", ["3.7", "3.13"], "3.12"),  # 3.7 had ended, 3.13 was to come
        (">=3.7", "2026-12-01", ["3.13"], "3.13"),
        ("<3.11", "2023-11-15", ["3.11", "3.12"], "3.10"),  # what the project allows
        (None, "2017-03-01", ["3.9"], "3.6"),  # released before the fix, not here
        (None, "2016-03-01", ["3.9"], "3.6"),  # older than every known version: the oldest
        (">=3.7", None, ["3.9", "3.11"], "3.11"),  # no date: the newest here
        ("<3.9", None, ["3.11"], "3.8"),  # no date, none allowed here: the newest allowed
    ],
)
def test_era_python(declared: str | None, date: str | None, local: list[str], era: str) -> None:
    assert era_python(declared, date, local, None) == era


def test_era_python_pinned_and_impossible() -> None:
    assert era_python(">=3.11", "2024-01-01", ALL, "3.8.10") == "3.8"
    with pytest.raises(EnvironmentFailure, match="declares Python '>=4'"):
        era_python(">=4", "2024-01-01", ALL, None)


# -- the machine without some versions ------------------------------------------------------


@pytest.mark.parametrize("downloads", ["never", "manual"])
def test_without_downloads_the_era_is_skipped_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, downloads: str
) -> None:
    hide(monkeypatch, tmp_path / "pyenv", "3.7", "3.8")
    tree = make_tree(tmp_path, [], requires_python=">=3.7")
    builder = UvBuilder(UvOptions(python_downloads=downloads))  # type: ignore[arg-type]
    with pytest.raises(EnvironmentFailure) as failure:
        builder.build(request_for(tree, tmp_path / "home", date="2020-06-15"))
    reason = str(failure.value)
    assert reason.startswith("Python 3.8 (this fix's era) is not on this machine and ")
    assert (
        f"environment.python-downloads is {downloads}; install it (e.g. `pyenv install 3.8`)"
        in reason
    )
    assert "\n" not in reason
    assert not (tmp_path / "home" / "envs").exists()


def test_a_fix_of_a_missing_era_gets_an_oracle_that_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ground truth on a synthetic repository whose fix needs Python 3.10, hidden here."""
    hide(monkeypatch, tmp_path / "pyenv", "3.7", "3.8", "3.9", "3.10")
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    repo = RepositoryBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "pyproject.toml": '[project]\nname = "calc"\nrequires-python = ">=3.7,<3.11"\n',
            "src/calc/__init__.py": "",
            "src/calc/ops.py": "def sub(a, b):\n    return a + b\n",
        },
    )
    fix = repo.commit(
        "Fix sub returning the sum (#1)",
        {
            "src/calc/ops.py": "def sub(a, b):\n    return a - b\n",
            "tests/test_ops.py": "from calc.ops import sub\n\n\ndef test_sub():\n"
            "    assert sub(2, 1) == 1\n",
        },
    )
    oracles = offline_ground_truth(repo.path, "src/calc")
    oracle = oracles.root[fix[:12]]
    assert oracle.status == "environment-error"
    assert oracle.reason is not None
    assert oracle.reason.startswith(
        "Python 3.10 (this fix's era) is not on this machine and "
        "environment.python-downloads is never"
    )


def test_a_failed_download_is_one_line_and_asked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide(monkeypatch, tmp_path / "pyenv", "3.7", "3.8")
    tree = make_tree(tmp_path, [], requires_python=">=3.7")
    builder = UvBuilder(UvOptions(python_downloads="automatic"))
    request = request_for(tree, tmp_path / "home", date="2020-06-15")
    with serving(tmp_path / "mirror") as (url, requested):
        listing = downloads_json("3.8", 99, f"{url}/absent.tar.gz", "0" * 64)
        (tmp_path / "downloads.json").write_text(json.dumps(listing))
        monkeypatch.setenv("UV_PYTHON_DOWNLOADS_JSON_URL", str(tmp_path / "downloads.json"))
        with pytest.raises(EnvironmentFailure) as first:
            builder.build(request)
        asked = len(requested)
        with pytest.raises(EnvironmentFailure) as second:
            builder.build(request)
    assert asked >= 1 and len(requested) == asked
    assert str(first.value) == str(second.value)
    assert str(first.value).startswith(
        "Python 3.8 (this fix's era) is not on this machine and uv could not download it: "
    )
    assert "404" in str(first.value) and "\n" not in str(first.value)


@pytest.mark.slow
def test_uv_provides_an_era_the_machine_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = pyenv_python("3.8")
    if prefix is None:
        pytest.skip("needs pyenv's Python 3.8 to make the download from")
    hide(monkeypatch, tmp_path / "pyenv", "3.7", "3.8")
    user_bin = Path.home() / ".local" / "bin" / "python3.8"
    linked_before = user_bin.exists()
    tree = make_tree(tmp_path, [], requires_python=">=3.7")
    home = tmp_path / "home"
    with serving(tmp_path / "mirror") as (url, requested):
        listing = mirror(tmp_path / "mirror", url, prefix, "3.8")
        monkeypatch.setenv("UV_PYTHON_DOWNLOADS_JSON_URL", str(listing))
        environment = UvBuilder().build(request_for(tree, home, date="2020-06-15"))
    assert requested == [f"/cpython-{prefix.name}-install_only.tar.gz"]
    assert environment.python_version == prefix.name
    assert environment.description.startswith(f"uv: Python {prefix.name}, deps as of 2020-07-01")
    passed = run(environment.command(["-q", "tests"], tree, []))
    assert passed.returncode == 0, passed.stdout + passed.stderr
    # The interpreter is the one uv unpacked under bugbout's home, its libpython too.
    where = subprocess.run(
        [str(environment.python), "-c", _WHERE], capture_output=True, text=True, check=True
    )
    base, library = where.stdout.split()
    pythons = pythons_directory(home).resolve()
    assert Path(base).resolve().is_relative_to(pythons)
    assert Path(library).resolve().is_relative_to(pythons)
    assert user_bin.exists() == linked_before  # nothing linked onto the user's PATH
    # Found there from now on, without the mirror.
    monkeypatch.delenv("UV_PYTHON_DOWNLOADS_JSON_URL")
    again = UvBuilder(UvOptions(python_downloads="never"))
    assert again.build(request_for(tree, home, date="2020-06-15")).key == environment.key
    # doctor counts it among the eras this machine can run.
    monkeypatch.setenv("BUGBOUT_HOME", str(home))
    settings = BoutSettings(
        project=ProjectSettings(source="src/demo"),
        environment=PluginChoice(name="uv", **{"python-downloads": "never"}),
    )
    eras = machine_eras(settings, make_plugins(entry_points=False))
    assert "3.8" in eras.installed and eras.runnable("3.8") and "3.7" in eras.missing


_WHERE = (
    "import sys; print(sys.base_prefix); "
    "print([l.split()[-1] for l in open('/proc/self/maps') if 'libpython' in l][0])"
)
