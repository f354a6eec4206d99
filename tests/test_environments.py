"""The built-in environment builders ``uv`` and ``interpreter``, with real uv and Pythons."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pluggy
import pytest

from bugbout.core.contract import hookspecs
from bugbout.core.contract.errors import ConfigError, EnvironmentFailure
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Command, EnvironmentRequest
from bugbout.core.plumbing.environments.era_resolution import exclude_newer_date
from bugbout.core.plumbing.environments.interpreters import available_interpreters
from bugbout.core.plumbing.environments.uv_program import uv_error
from bugbout.plugins.environments import interpreter, uv
from bugbout.plugins.environments.interpreter import InterpreterBuilder, InterpreterOptions
from bugbout.plugins.environments.uv import MARKER, UvBuilder, UvOptions

FIX_DATE = "2021-06-15T10:00:00+02:00"
needs_39 = pytest.mark.skipif(
    "3.9" not in available_interpreters(), reason="needs a Python 3.9 (pyenv install 3.9)"
)


def plugins() -> Plugins:
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    registry = Plugins(pm)
    registry.register(uv, name=uv.__name__)
    registry.register(interpreter, name=interpreter.__name__)
    return registry


def make_tree(
    root: Path,
    dependencies: list[str],
    requires_python: str = ">=3.9",
    extras: dict[str, list[str]] | None = None,
) -> Path:
    """A src-layout project ``demo`` with one test that imports it and its dependencies."""
    tree = root / "tree"
    (tree / "src" / "demo").mkdir(parents=True)
    (tree / "tests").mkdir()
    (tree / "pyproject.toml").write_text(
        "[project]\n"
        'name = "demo"\n'
        'version = "1.0"\n'
        f"requires-python = {json.dumps(requires_python)}\n"
        f"dependencies = {json.dumps(dependencies)}\n"
        + "".join(
            f"[project.optional-dependencies]\n{name} = {json.dumps(requirements)}\n"
            for name, requirements in (extras or {}).items()
        )
    )
    (tree / "src" / "demo" / "__init__.py").write_text("VALUE = 42\n")
    (tree / "tests" / "test_demo.py").write_text(
        "import demo\n\ndef test_value():\n    assert demo.VALUE == 42\n"
    )
    return tree


def request_for(
    tree: Path, home: Path, date: str | None = FIX_DATE, **project: str
) -> EnvironmentRequest:
    return EnvironmentRequest(
        project=ProjectSettings(source="src/demo", **project), tree=tree, date=date, home=home
    )


def run(command: Command, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command.argv, *extra],
        cwd=command.cwd,
        env={**os.environ, **command.env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# -- registration and options ---------------------------------------------------------------


def test_plugins_register_and_validate_options() -> None:
    registry = plugins()
    assert set(registry.of_kind("environment")) == {"uv", "interpreter"}
    builder = registry.create("environment", "uv", {})
    assert isinstance(builder, UvBuilder)
    assert builder.options == UvOptions(exclude_newer=True, index_url=None, test_extras=True)
    builder = registry.create(
        "environment",
        "uv",
        {"exclude-newer": False, "index-url": "https://x/", "test-extras": False},
    )
    assert builder.options.exclude_newer is False
    assert builder.options.index_url == "https://x/"
    assert builder.options.test_extras is False
    chosen = registry.create("environment", "interpreter", {"path": sys.executable})
    assert isinstance(chosen, InterpreterBuilder)
    assert chosen.options.path == sys.executable
    with pytest.raises(ConfigError, match="exclude-newer"):
        registry.create("environment", "uv", {"exclude-newr": True})


def test_packaged_uv_options_match_uv_options() -> None:
    import yaml

    import bugbout.conf

    packaged = yaml.safe_load(
        (Path(bugbout.conf.__file__).parent / "environment" / "uv.yaml").read_text(encoding="utf-8")
    )
    assert packaged.pop("name") == "uv"
    fields = {f.alias or n: f.default for n, f in UvOptions.model_fields.items()}
    assert set(packaged) <= set(fields)
    assert all(fields[key] == value for key, value in packaged.items())
    assert "test-extras" in packaged


@pytest.mark.parametrize(
    ("date", "era"),
    [
        ("2021-06-15T10:00:00+02:00", "2021-07-01"),
        ("2021-06-01", "2021-07-01"),
        ("2021-12-31T23:59:59-05:00", "2022-01-01"),
    ],
)
def test_exclude_newer_date(date: str, era: str) -> None:
    assert exclude_newer_date(date) == era


def test_uv_error() -> None:
    stderr = (
        "Using Python 3.9.18 environment at: env\n"
        "error: No solution found when resolving dependencies\n"
        "  cause: Because nope was not found in the package registry, we can conclude that "
        "your requirements are unsatisfiable.\n"
    )
    assert uv_error(stderr) == (
        "No solution found when resolving dependencies: Because nope was not found in the "
        "package registry, we can conclude that your requirements are unsatisfiable."
    )
    assert uv_error("\u00d7 Failed\n  \u2570\u2500\u25b6 boom\n") == "Failed: boom"
    assert uv_error("something odd\n   ^^^\n") == "something odd"
    assert uv_error("") == "no error output"


def test_no_python_satisfies_the_project(tmp_path: Path) -> None:
    tree = make_tree(tmp_path, ["six"], requires_python=">=4")
    with pytest.raises(EnvironmentFailure, match="'>=4'"):
        UvBuilder().build(request_for(tree, tmp_path / "home"))
    assert not (tmp_path / "home" / "envs").exists()


def test_pinned_python_missing(tmp_path: Path) -> None:
    tree = make_tree(tmp_path, [])
    with pytest.raises(EnvironmentFailure, match=r"pyenv install 3\.1"):
        UvBuilder().build(request_for(tree, tmp_path / "home", python="3.1"))


# -- real uv builds -------------------------------------------------------------------------


@pytest.mark.slow
@needs_39
def test_uv_build_resolves_as_of_the_fix_and_caches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = make_tree(tmp_path, ["six"])
    home = tmp_path / "home"
    request = request_for(tree, home)

    env = UvBuilder().build(request)

    assert env.description.startswith("uv: Python 3.9.")
    assert env.description.endswith("deps as of 2021-07-01")
    assert env.path == home / "envs" / env.key
    marker = env.path / MARKER
    described = json.loads(marker.read_text())
    assert described["exclude-newer"] == "2021-07-01"
    assert described["requirements"] == ["pytest", "six"]
    assert "--no-deps" not in described["pinned"]
    versions = dict(line.split("==", 1) for line in described["installed"])
    assert int(versions["pytest"].split(".")[0]) < 7  # pytest 7.0 came out in 2022
    assert versions["six"] == "1.16.0"  # the release of 2021-05-05
    assert "demo" not in versions  # the project itself is never installed

    command = env.command(["--version"], tree, [])
    assert command.argv[1:] == ["-m", "pytest", "--version"]
    assert command.cwd == tree
    (project,) = (env.path / "dists").glob("demo-1.0-*")  # its dist-info, by its content
    assert command.env["PYTHONPATH"] == os.pathsep.join(
        [str(tree / "src"), str(tree), str(project)]
    )
    assert command.env["VIRTUAL_ENV"] == str(env.path)
    assert command.env["PATH"].startswith(str(env.path / "bin") + os.pathsep)
    result = run(command)
    assert result.returncode == 0, result.stderr
    assert "pytest 6." in result.stdout + result.stderr

    assert run(env.command(["-q", "tests"], tree, [])).returncode == 0
    bare = subprocess.run(
        [str(env.python), "-c", "import demo"], cwd=tmp_path, capture_output=True, check=False
    )
    assert bare.returncode != 0  # importable only from the tree on PYTHONPATH

    # A new builder finds it in the cache: no uv call, nothing rewritten.
    before = (marker.stat().st_mtime_ns, env.path.stat().st_mtime_ns)

    def no_uv() -> str:
        raise AssertionError("a cache hit called uv")

    monkeypatch.setattr(
        "bugbout.core.plumbing.environments.uv_program.uv_binary", no_uv
    )  # what runs uv
    again = UvBuilder().build(request_for(tree, home, date="2021-06-02T08:00:00Z"))
    assert again.key == env.key  # fixes of one month share an environment
    assert (marker.stat().st_mtime_ns, env.path.stat().st_mtime_ns) == before
    assert sorted(p.name for p in (home / "envs").iterdir()) == [env.key, f"{env.key}.lock"]


@pytest.mark.slow
@needs_39
def test_uv_key_follows_what_determines_the_environment(tmp_path: Path) -> None:
    tree = make_tree(tmp_path, ["six"])
    home = tmp_path / "home"
    env = UvBuilder().build(request_for(tree, home))
    later = UvBuilder().build(request_for(tree, home, date="2021-07-15"))
    pinned = UvBuilder().build(request_for(tree, home, python="3.10"))
    assert len({env.key, later.key, pinned.key}) == 3
    assert later.description.endswith("deps as of 2021-08-01")
    assert pinned.description.startswith("uv: Python 3.10.")


@pytest.mark.slow
@needs_39
def test_concurrent_builds_of_one_key(tmp_path: Path) -> None:
    tree = make_tree(tmp_path, ["six"])
    home = tmp_path / "home"
    with ThreadPoolExecutor(3) as pool:
        envs = list(pool.map(lambda _: UvBuilder().build(request_for(tree, home)), range(3)))
    assert len({e.key for e in envs}) == 1
    assert sorted(p.name for p in (home / "envs").iterdir()) == [envs[0].key, f"{envs[0].key}.lock"]
    assert run(envs[0].command(["--version"], tree, [])).returncode == 0


@pytest.mark.slow
@needs_39
def test_uv_failure_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    tree = make_tree(tmp_path, ["bugbout-no-such-package-anywhere==1.0"])
    home = tmp_path / "home"
    with pytest.raises(EnvironmentFailure) as error:
        UvBuilder().build(request_for(tree, home))
    message = str(error.value)
    assert "\n" not in message
    assert "bugbout-no-such-package-anywhere" in message
    assert "uv pip compile" in message
    assert not (home / "envs").exists()
    assert [p.name for p in (home / "resolutions").iterdir()] == []


@pytest.mark.slow
@needs_39
def test_uv_build_installs_declared_test_dependencies(tmp_path: Path) -> None:
    tree = make_tree(tmp_path, [], extras={"test": ["six"]})
    env = UvBuilder().build(request_for(tree, tmp_path / "home"))
    assert env.description.endswith("deps as of 2021-07-01")
    described = json.loads((env.path / MARKER).read_text())
    assert described["requirements"] == ["six", "pytest"]
    assert described["left-out"] == {}
    assert "six==1.16.0" in described["installed"]
    imported = subprocess.run(
        [str(env.python), "-c", "import six"], capture_output=True, text=True, check=False
    )
    assert imported.returncode == 0, imported.stderr


@pytest.mark.slow
@needs_39
def test_uv_build_without_unresolvable_test_dependencies(tmp_path: Path) -> None:
    bad = "this-package-does-not-exist-bugbout==1"
    tree = make_tree(tmp_path, ["six"], extras={"test": [bad]})
    home = tmp_path / "home"
    env = UvBuilder().build(request_for(tree, home))
    assert f", without {bad} (did not resolve: " in env.description
    assert "\n" not in env.description
    assert "uv pip install" not in env.description
    described = json.loads((env.path / MARKER).read_text())
    assert list(described["left-out"]) == [bad]
    assert bad not in described["requirements"]
    assert described["description"] == env.description
    assert "six==1.16.0" in described["installed"]
    assert run(env.command(["-q", "tests"], tree, [])).returncode == 0
    # Cached under the key of the request; a cache hit describes it the same way.
    again = UvBuilder().build(request_for(tree, home))
    assert (again.key, again.description) == (env.key, env.description)
    assert sorted(p.name for p in (home / "envs").iterdir()) == [env.key, f"{env.key}.lock"]


# -- the interpreter builder ----------------------------------------------------------------


def test_interpreter_builder_with_the_running_python(tmp_path: Path) -> None:
    tree = make_tree(tmp_path, [])
    builder = InterpreterBuilder(InterpreterOptions())
    env = builder.build(request_for(tree, tmp_path / "home"))
    assert env.python_version == ".".join(map(str, sys.version_info[:3]))
    assert str(env.python) in env.description
    assert builder.build(request_for(tree, tmp_path / "home")).key == env.key
    extra = tmp_path / "plugin"
    command = env.command(["-q", "tests"], tree, [extra])
    assert command.argv[:3] == [str(env.python), "-m", "pytest"]
    assert command.env["PYTHONPATH"] == os.pathsep.join([str(extra), str(tree / "src"), str(tree)])
    result = run(command, "-p", "no:cacheprovider")
    assert result.returncode == 0, result.stdout + result.stderr


def test_interpreter_from_project_settings(tmp_path: Path) -> None:
    tree = make_tree(tmp_path, [])
    request = request_for(tree, tmp_path, interpreter=sys.executable)
    assert InterpreterBuilder().build(request).python == Path(sys.executable)


def test_interpreter_missing(tmp_path: Path) -> None:
    builder = InterpreterBuilder(InterpreterOptions(path=str(tmp_path / "python9")))
    with pytest.raises(EnvironmentFailure, match="does not exist"):
        builder.build(request_for(make_tree(tmp_path, []), tmp_path))


def test_interpreter_without_pytest(tmp_path: Path) -> None:
    without = [
        path
        for path in available_interpreters().values()
        if subprocess.run(
            [path, "-c", "import pytest"], capture_output=True, check=False
        ).returncode
    ]
    if not without:
        pytest.skip("every interpreter here has pytest")
    builder = InterpreterBuilder(InterpreterOptions(path=str(without[0])))
    request = request_for(make_tree(tmp_path, []), tmp_path)
    with pytest.raises(
        EnvironmentFailure, match="has no pytest; install it there or use environment=uv"
    ):
        builder.build(request)


# -- what an era's environment carries ------------------------------------------------------


def _local_index(root: Path, wheels: list[Path]) -> str:
    """A PEP 503 index of ``wheels`` in a directory: a ``file://`` URL, never PyPI."""
    for wheel in wheels:
        project = root / wheel.name.split("-")[0].lower()
        project.mkdir(parents=True)
        (project / wheel.name).write_bytes(wheel.read_bytes())
        (project / "index.html").write_text(f'<a href="{wheel.name}">{wheel.name}</a>\n')
    return root.as_uri()


@pytest.mark.slow
@needs_39
def test_pkg_resources_imports_in_an_era_environment(tmp_path: Path) -> None:
    bundled = Path(available_interpreters()["3.9"]).resolve().parent.parent / "lib" / "python3.9"
    wheels = sorted((bundled / "ensurepip" / "_bundled").glob("setuptools-*.whl"))
    if not wheels:
        pytest.skip("this Python 3.9 bundles no setuptools wheel")
    # The local index has no upload dates, so the date cap is off: it is the era's
    # Python (3.9) that makes the environment carry setuptools.
    options = UvOptions(exclude_newer=False, index_url=_local_index(tmp_path / "index", wheels))
    tree = make_tree(tmp_path, [])
    request = EnvironmentRequest(
        project=ProjectSettings(source="src/demo", python="3.9", test_dependencies=()),
        tree=tree,
        home=tmp_path / "home",
    )
    env = UvBuilder(options).build(request)
    imported = subprocess.run(
        [str(env.python), "-c", "import pkg_resources"], capture_output=True, text=True, check=False
    )
    assert imported.returncode == 0, imported.stderr


@pytest.mark.slow
@needs_39
def test_eras_that_resolve_alike_share_a_real_environment(tmp_path: Path) -> None:
    tree = make_tree(tmp_path, [])
    home = tmp_path / "home"

    def era(day: str) -> EnvironmentRequest:
        project = ProjectSettings(source="src/demo", python="3.9", test_dependencies=("six",))
        return EnvironmentRequest(project=project, tree=tree, date=day, home=home)

    # six 1.16.0 came out in May 2021 and stayed the newest until December 2024.
    envs = [UvBuilder().build(era(day)) for day in ("2021-06-15", "2022-03-01", "2023-09-30")]
    assert len({env.key for env in envs}) == 1
    assert [env.description.rsplit(" ", 1)[-1] for env in envs] == [
        "2021-07-01",
        "2022-04-01",
        "2023-10-01",
    ]
    assert [p.name for p in (home / "envs").iterdir() if p.suffix != ".lock"] == [envs[0].key]
    assert "six==1.16.0" in json.loads((envs[0].path / MARKER).read_text())["installed"]


@pytest.mark.slow
@needs_39
def test_a_2014_fix_runs_its_tests_with_a_pytest_of_its_interpreter(tmp_path: Path) -> None:
    tree = make_tree(tmp_path, [], requires_python=">=2.6")
    env = UvBuilder().build(request_for(tree, tmp_path / "home", "2014-02-08", python="3.9"))
    versions = dict(
        line.split("==", 1) for line in json.loads((env.path / MARKER).read_text())["installed"]
    )
    assert versions["pytest"].startswith("6.")  # 2.5, of the fix's time, fails on 3.9
    assert "deps as of 2014-03-01; pytest and what it needs as of 2020-11-01" in env.description
    result = run(env.command(["-q", "tests"], tree, []))
    assert result.returncode == 0, result.stdout + result.stderr
