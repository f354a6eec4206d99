"""`bugbout plugins new KIND NAME`: a plugin package that installs, passes its own tests
and, for a judge, is used by `bugbout run judge=NAME`.

The real tests install the new packages with pip into a virtual environment of their
own (``--system-site-packages``, so it sees bugbout, pytest and hatchling without
installing them) and run everything with that environment's Python: the test
environment itself is never changed.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.types import KINDS
from bugbout.example import build_example
from bugbout.scaffold import TEMPLATES, normalise, scaffold
from bugbout.testing.suites import SUITES

TIMEOUT = 900
ROOT = Path(__file__).resolve().parents[1]


def bugbout(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", *args],
        cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip


@dataclass(frozen=True)
class PluginEnvironment:
    """A virtual environment for installing plugin packages: it sees this interpreter's
    packages and gets its own on top."""

    path: Path
    pip: tuple[str, ...]
    """The installer: the environment's pip, or uv's (where this Python has no ensurepip)."""

    @classmethod
    def create(cls, path: Path) -> PluginEnvironment:
        """``python -m venv --system-site-packages``; when this interpreter is itself a
        virtual environment (nox, tox), a ``.pth`` file adds its site-packages too."""
        venv = [sys.executable, "-m", "venv", "--system-site-packages", str(path)]
        python = str(path / "bin" / "python")
        made = subprocess.run(venv, capture_output=True, text=True, timeout=TIMEOUT, check=False)
        if made.returncode == 0:
            pip: tuple[str, ...] = (python, "-m", "pip", "install", "--disable-pip-version-check")
        else:  # e.g. Debian's Python without python3-venv: bugbout's own uv installs
            from uv import find_uv_bin

            subprocess.run([*venv, "--clear", "--without-pip"], check=True, timeout=TIMEOUT)
            pip = (find_uv_bin(), "pip", "install", "--python", python)
        environment = cls(path, pip)
        if sys.prefix != sys.base_prefix:
            import site

            purelib = environment.output(
                "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"
            )
            lines = "".join(
                f"import site; site.addsitedir({p!r})\n" for p in site.getsitepackages()
            )
            (Path(purelib) / "_bugbout_test_parent.pth").write_text(lines)
        if environment.run("-c", "import hatchling").returncode != 0:
            environment.install("hatchling", isolated=True)  # the one download, from PyPI
        return environment

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def env(self) -> dict[str, str]:
        """This process's environment, with the virtual environment activated."""
        path = f"{self.path / 'bin'}{os.pathsep}{os.environ.get('PATH', os.defpath)}"
        return {**os.environ, "PATH": path, "VIRTUAL_ENV": str(self.path),
                "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "200"}  # fmt: skip

    def run(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """``python ARGS`` with the environment's Python."""
        return subprocess.run(
            [str(self.python), *args],
            cwd=cwd, env=self.env(), capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip

    def output(self, *args: str) -> str:
        result = self.run(*args)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout.strip()

    def install(self, *packages: Path | str, isolated: bool = False) -> None:
        """``pip install --no-deps --no-build-isolation PACKAGES``: built with the hatchling
        the environment sees (this interpreter's, else one installed when it was made)."""
        options = ["--no-deps", "--no-build-isolation"] if not isolated else []
        result = subprocess.run(
            [*self.pip, "--quiet", *options, *map(str, packages)],
            env=self.env(), capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr

    def pytest(self, package: Path) -> subprocess.CompletedProcess[str]:
        """The package's own tests, run by the environment's Python in the package."""
        return self.run("-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=package)


def copy_package(source: Path, target: Path) -> Path:
    """A copy of a package's source (so building and testing it leave no trace)."""
    ignore = shutil.ignore_patterns("__pycache__", ".pytest_cache", "*.egg-info", "build", "dist")
    return Path(shutil.copytree(source, target, ignore=ignore))


def listing_row(listing: str, kind: str, name: str) -> list[str]:
    """The first words of ``bugbout plugins``' row for ``kind``/``name``."""
    for line in listing.splitlines():
        words = line.split()
        if words[:2] == [kind, name]:
            return words[:4]
    raise AssertionError(f"no {kind} {name} in:\n{listing}")


# -- the package it writes --------------------------------------------------------------------


def test_there_is_a_template_and_a_suite_for_every_kind() -> None:
    assert list(TEMPLATES) == list(KINDS)
    for kind, template in TEMPLATES.items():
        assert SUITES[kind].__name__ == template.suite


@pytest.mark.parametrize(
    ("given", "normal"),
    [("cautious", "cautious"), ("My_Judge", "my-judge"), (" Two Words ", "two-words"),
     ("bugbout-cautious", "cautious"), ("v2-judge", "v2-judge")],
)  # fmt: skip
def test_names_are_normalised(given: str, normal: str) -> None:
    assert normalise(given) == normal


@pytest.mark.parametrize("name", ["", "--", "9lives", "__", "é"])
def test_a_name_that_cannot_name_a_package_is_an_error(name: str) -> None:
    with pytest.raises(ConfigError, match="cannot name a plugin"):
        normalise(name)


def test_the_package_layout(tmp_path: Path) -> None:
    result = bugbout("plugins", "new", "judge", "My_Cautious", "--dir", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    package = tmp_path / "bugbout-my-cautious"
    assert f"created {package}" in " ".join(result.stderr.split())
    files = sorted(str(p.relative_to(package)) for p in package.rglob("*") if p.is_file())
    assert files == [
        "README.md",
        "pyproject.toml",
        "src/bugbout_my_cautious/__init__.py",
        "src/bugbout_my_cautious/plugin.py",
        "tests/conftest.py",
        "tests/test_plugin.py",
    ]
    project = tomllib.loads((package / "pyproject.toml").read_text())
    assert project["build-system"]["build-backend"] == "hatchling.build"
    assert project["project"]["name"] == "bugbout-my-cautious"
    assert project["project"]["dependencies"][0].startswith("bugbout")
    assert project["project"]["entry-points"]["bugbout"] == {
        "my-cautious": "bugbout_my_cautious.plugin"
    }
    assert (
        'pytest_plugins = ["bugbout.testing.fixtures"]'
        in (package / "tests" / "conftest.py").read_text()
    )
    test = (package / "tests" / "test_plugin.py").read_text()
    assert "from bugbout.testing.suites import JudgeSuite" in test
    assert "class TestMyCautious(JudgeSuite):" in test
    assert 'plugin = "my-cautious"' in test
    plugin = (package / "src" / "bugbout_my_cautious" / "plugin.py").read_text()
    assert "def bugbout_judges()" in plugin
    assert '    name = "my-cautious"' in plugin
    assert "name=MyCautiousPolicy.name," in plugin
    assert "bugbout run judge=my-cautious" in (package / "README.md").read_text()


def test_the_default_directory_is_the_current_one(tmp_path: Path) -> None:
    result = bugbout("plugins", "new", "reporter", "tiny", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "bugbout-tiny" / "src" / "bugbout_tiny" / "plugin.py").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["widget", "x"], "error: unknown plugin kind 'widget'; choose one of miner, "),
        (
            ["examiner", "x"],
            "error: the plugin kind 'examiner' is now called 'assignment'; "
            "run `bugbout plugins new assignment x`",
        ),
        (["judge", "majority"], "error: bugbout already has a judge plugin named 'majority'"),
        (["judge", "9lives"], "error: '9lives' cannot name a plugin"),
        (["agent", "coding"], "would define class CodingAgent, which the plugin module imports"),
        (["judge"], "the following arguments are required: name"),
    ],
)
def test_mistakes_are_one_line_errors(tmp_path: Path, args: list[str], message: str) -> None:
    result = bugbout("plugins", "new", *args, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_existing_target_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "bugbout-cautious").mkdir()
    (tmp_path / "bugbout-cautious" / "mine.txt").write_text("keep me\n")
    result = bugbout("plugins", "new", "judge", "cautious", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'bugbout-cautious'} already exists; remove it or choose another "
        "--dir or NAME"
    ]
    assert [p.name for p in (tmp_path / "bugbout-cautious").iterdir()] == ["mine.txt"]


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_code_it_writes_is_valid_and_typed(tmp_path: Path, kind: str) -> None:
    package = scaffold(kind, f"my-{kind}", tmp_path)
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                assert node.returns is not None, f"{path}: {node.name}() has no return type"
    if shutil.which("ruff"):
        for command in (["ruff", "check", "."], ["ruff", "format", "--check", "."]):
            result = subprocess.run(
                command, cwd=package, capture_output=True, text=True, check=False
            )
            assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_plugin_it_writes_imports_only_the_public_api(tmp_path: Path, kind: str) -> None:
    """The plugin imports bugbout's public modules only (its tests, the test kit too):
    never ``bugbout.core``, rendering, the sandbox primitives or a built-in plugin."""
    from test_public_api import PUBLIC, bugbout_imports

    package = scaffold(kind, f"my-{kind}", tmp_path)
    public = {"bugbout", *PUBLIC.values()}
    found = {
        path.name: {module for _, module in bugbout_imports(path)} for path in package.rglob("*.py")
    }
    assert found["plugin.py"] >= {PUBLIC[kind]}
    assert found["plugin.py"] <= public
    assert found["test_plugin.py"] <= {
        *public,
        "bugbout.testing.suites",
        "bugbout.testing.suites.judges",
    }


@pytest.mark.slow
def test_the_wheel_ships_every_template(tmp_path: Path) -> None:
    """The templates are package data: a wheel built from the source holds each of them
    (their ruff configuration excepted), so an installed bugbout can scaffold."""
    templates = ROOT / "src" / "bugbout" / "scaffold" / "templates"
    expected = {
        f"bugbout/scaffold/templates/{path.relative_to(templates)}"
        for path in templates.rglob("*")
        if path.is_file()
        and path.name != "ruff.toml"
        and not any(
            part.startswith((".", "__pycache__")) for part in path.relative_to(templates).parts
        )
    }
    for kind in KINDS:
        for name in ("plugin.py", "test_plugin.py", "usage.md"):
            assert f"bugbout/scaffold/templates/{kind.replace('-', '_')}/{name}" in expected
    build = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path)]
    result = subprocess.run(
        [*build, str(ROOT)], capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if "/scaffold/templates/" in name}
    assert shipped == expected


# -- installed, tested, used --------------------------------------------------------------------


@pytest.fixture(scope="module")
def plugin_environment(tmp_path_factory: pytest.TempPathFactory) -> PluginEnvironment:
    return PluginEnvironment.create(tmp_path_factory.mktemp("scaffold") / "venv")


@pytest.mark.slow
def test_a_new_judge_installs_passes_its_tests_and_judges_a_bout(
    plugin_environment: PluginEnvironment, tmp_path: Path
) -> None:
    """The issue's first "done when": `bugbout plugins new judge cautious` → its tests
    pass, `bugbout plugins` lists it after `pip install`, `bugbout run judge=cautious`
    uses it."""
    result = bugbout("plugins", "new", "judge", "cautious", "--dir", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    package = tmp_path / "bugbout-cautious"
    plugin_environment.install(package)

    tests = plugin_environment.pytest(package)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert " passed" in tests.stdout

    listing = plugin_environment.output("-m", "bugbout", "plugins")
    assert listing_row(listing, "judge", "cautious") == ["judge", "cautious",
                                                         "bugbout-cautious", "0.1.0"]  # fmt: skip

    repo = build_example(tmp_path / "tally")
    bout = plugin_environment.run("-m", "bugbout", "run", "judge=cautious", "miner.limit=1",
                                  cwd=repo)  # fmt: skip
    assert bout.returncode == 0, bout.stderr
    verdicts = json.loads((repo / ".bugbout" / "verdicts.json").read_text())
    assert verdicts
    for by_policy in verdicts.values():
        verdict = by_policy["cautious"]
        assert verdict["policy"] == "cautious"
        assert verdict["pick"] == "correct", verdict["reason"]
        assert verdict["approved"] == ["correct"]
    report = json.loads((repo / ".bugbout" / "report.json").read_text())
    assert "cautious" in report["policies"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", [kind for kind in KINDS if kind != "judge"])
def test_every_kind_installs_and_passes_its_own_tests(
    plugin_environment: PluginEnvironment, tmp_path: Path, kind: str
) -> None:
    name = f"new-{kind}"
    package = scaffold(kind, name, tmp_path)
    plugin_environment.install(package)
    tests = plugin_environment.pytest(package)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert " passed" in tests.stdout
    listing = plugin_environment.output("-m", "bugbout", "plugins")
    assert listing_row(listing, kind, name)[2] == f"bugbout-{name}"
