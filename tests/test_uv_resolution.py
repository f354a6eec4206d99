"""The uv builder's resolution, with uv's calls answered here: what is left out and why,
timeouts, build tools of the era, environments keyed by what eras resolve to, and an
environment whose pytest does not start."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.plumbing.environments import era_resolution, uv_resolution
from bugbout.core.plumbing.environments.era_resolution import era_tools_date
from bugbout.core.plumbing.environments.uv_program import UvFailure
from bugbout.plugins.environments import uv
from bugbout.plugins.environments.uv import MARKER, UvBuilder, UvOptions
from test_environments import make_tree, request_for

BROKEN_PYTEST = (
    "#!/bin/sh\necho 'ImportError: cannot import name parse from pkg_resources' >&2\nexit 1\n"
)


def _pinned(requirement: str) -> str:
    if "==" in requirement:
        return requirement
    return "pytest==8.0" if requirement == "pytest" else f"{requirement}==1.0"


class FakeUv:
    """Stands in for uv: it resolves each requirement to version 1.0 of its name (pytest to
    8.0, a pytest bugbout's runs take; a pinned one to its pin), except ``bad`` (it does
    not resolve), ``slow`` (it times out) and ``unbuildable`` (today's build tools cannot
    build it)."""

    def __init__(self, bad: str = "", slow: str = "", unbuildable: str = "") -> None:
        self.bad, self.slow, self.unbuildable = bad, slow, unbuildable
        self.compiles: list[list[str]] = []
        self.installs: list[list[str]] = []
        self.options: list[list[str]] = []
        self.compile_options: list[list[str]] = []
        self.timeouts: set[float] = set()
        self.venvs = 0
        self.pytest = "#!/bin/sh\nexit 0\n"

    def install(self, monkeypatch: pytest.MonkeyPatch) -> FakeUv:
        monkeypatch.setattr(uv_resolution, "run_uv", self)
        monkeypatch.setattr(uv, "run_uv", self)
        monkeypatch.setattr(era_resolution, "checked", lambda resolver, resolution, **_: resolution)
        return self

    def __call__(self, args: list[str], *, timeout: float, what: str, cwd: Path) -> str:
        self.timeouts.add(timeout)
        if args[0] == "venv":
            self.venvs += 1
            (Path(args[-1]) / "bin").mkdir(parents=True)
            python = Path(args[-1]) / "bin" / "python"
            python.write_text(self.pytest)
            python.chmod(0o755)
        elif args[:2] == ["pip", "compile"]:
            requirements = Path(args[-1]).read_text().split()
            if requirements != ["setuptools"]:
                self.compiles.append(requirements)
                self.compile_options.append(args[2:-1])
            if self.slow and self.slow in requirements:
                raise UvFailure(f"{what} timed out after {timeout:.0f} s", "timed out after 9 s")
            if self.bad and self.bad in requirements:
                raise UvFailure(f"{what} failed: no {self.bad}", f"no {self.bad}")
            return "".join(f"{_pinned(r)}\n" for r in requirements)
        elif args[:2] == ["pip", "install"]:
            pins = [a for a in args if "==" in a and not a.startswith("--")]
            options = [a for a in args[2:] if a not in pins]
            self.installs.append(pins)
            self.options.append(options)
            today = date.today().isoformat()
            newest_tools = any(o.startswith("setuptools=") and o[11:] > today for o in options)
            if f"{self.unbuildable}==1.0" in pins and newest_tools:
                reason = f"Failed to build `{self.unbuildable}==1.0`: use_2to3 is invalid"
                raise UvFailure(f"{what} failed", reason)
        return ""


@pytest.fixture(autouse=True)
def _exemptions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(uv_resolution, "supports_exclude_newer_package", lambda: True)


def test_only_what_does_not_resolve_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeUv(bad="mock==0.1").install(monkeypatch)
    tree = make_tree(tmp_path, ["six"], extras={"tests": ["mock==0.1", "freezegun"]})
    home = tmp_path / "home"
    env = UvBuilder().build(request_for(tree, home))
    assert fake.compiles == [
        ["mock==0.1", "freezegun", "pytest", "six"],
        ["pytest", "six"],
        ["mock==0.1", "pytest", "six"],
        ["freezegun", "pytest", "six"],
    ]
    assert fake.installs[-1] == ["freezegun==1.0", "pytest==8.0", "six==1.0"]
    assert env.description.endswith(
        "deps as of 2021-07-01, without mock==0.1 (did not resolve: no mock==0.1)"
    )
    assert env.left_out == {"mock==0.1": "did not resolve: no mock==0.1"}
    described = json.loads((env.path / MARKER).read_text())
    assert described["requirements"] == ["freezegun", "pytest", "six"]
    assert described["description"] == env.description
    # Another builder finds the resolution and the environment: uv is not asked again.
    calls = (len(fake.compiles), len(fake.installs))
    again = UvBuilder().build(request_for(tree, home))
    assert (again.key, again.description) == (env.key, env.description)
    assert (len(fake.compiles), len(fake.installs)) == calls


def test_what_the_project_needs_must_resolve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeUv(bad="six").install(monkeypatch)
    tree = make_tree(tmp_path, ["six"], extras={"test": ["mock"]})
    with pytest.raises(EnvironmentFailure, match="no six"):
        UvBuilder().build(request_for(tree, tmp_path / "home"))
    assert fake.compiles == [["mock", "pytest", "six"], ["pytest", "six"]]
    assert fake.installs == []


def test_a_timeout_is_named_so_and_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeUv(slow="freezegun").install(monkeypatch)
    tree = make_tree(tmp_path, ["six"], extras={"tests": ["freezegun"]})
    home = tmp_path / "home"
    options = UvOptions(install_timeout=9)
    short = UvBuilder(options).build(request_for(tree, home))
    assert 9 in fake.timeouts and 600 not in fake.timeouts
    assert short.description.endswith(", without freezegun (timed out after 9 s)")
    assert "did not resolve" not in short.description
    assert not (home / "resolutions").exists() or not list((home / "resolutions").iterdir())
    # The next build resolves again; this time uv is quick enough.
    fake.slow = ""
    full = UvBuilder(options).build(request_for(tree, home))
    assert full.left_out == {}
    assert full.key != short.key
    assert fake.installs[-1] == ["freezegun==1.0", "pytest==8.0", "six==1.0"]


def test_a_timeout_of_what_the_project_needs_names_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    FakeUv(slow="six").install(monkeypatch)
    tree = make_tree(tmp_path, ["six"])
    with pytest.raises(EnvironmentFailure, match=r"timed out after .*environment\.install-timeout"):
        UvBuilder().build(request_for(tree, tmp_path / "home"))


def test_eras_that_resolve_alike_share_one_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeUv().install(monkeypatch)
    home = tmp_path / "home"
    tree = make_tree(tmp_path, ["six"])
    months = ["2021-03-10", "2021-06-15", "2021-09-20"]
    keys = {UvBuilder().build(request_for(tree, home, date=day)).key for day in months}
    assert len(keys) == 1
    assert fake.venvs == 1
    assert len(list((home / "resolutions").glob("*.json"))) == 3  # one per era
    other = make_tree(tmp_path / "other", ["six", "attrs"])
    assert UvBuilder().build(request_for(other, home)).key not in keys
    assert fake.venvs == 2


def test_a_distribution_todays_build_tools_cannot_build_gets_its_eras(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeUv(unbuildable="pycrypto").install(monkeypatch)
    tree = make_tree(tmp_path, ["six", "pycrypto"])
    env = UvBuilder().build(request_for(tree, tmp_path / "home", python="3.12"))
    assert fake.installs == [
        ["pycrypto==1.0", "pytest==8.0", "six==1.0"],
        ["pytest==8.0", "six==1.0"],
        ["pycrypto==1.0"],
    ]
    apart = fake.options[-1]
    assert "setuptools=2021-07-01" in apart  # the era's build tools
    assert apart[apart.index("--exclude-newer") + 1] == "2021-07-01"
    assert "--no-deps" in apart
    assert env.left_out == {}


def test_a_distribution_no_build_tools_can_build_is_left_out_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeUv(unbuildable="pycrypto").install(monkeypatch)
    original = fake.__call__

    def never_builds(args: list[str], **kw: object) -> str:
        if args[:2] == ["pip", "install"] and "pycrypto==1.0" in args:
            raise UvFailure("failed", "Failed to build `pycrypto==1.0`: no compiler")
        return original(args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(uv, "run_uv", never_builds)
    monkeypatch.setattr(uv_resolution, "run_uv", never_builds)
    tree = make_tree(tmp_path, ["six", "pycrypto"])
    env = UvBuilder().build(request_for(tree, tmp_path / "home", python="3.12"))
    assert env.left_out == {
        "pycrypto==1.0": "cannot be built: Failed to build `pycrypto==1.0`: no compiler"
    }
    assert "without pycrypto==1.0 (cannot be built: " in env.description


def test_the_era_tools_are_never_older_than_the_interpreter() -> None:
    assert era_tools_date("2014-03-01", "3.7.17") == "2018-07-01"
    assert era_tools_date("2021-07-01", "3.7.17") == "2018-07-01"  # one per interpreter
    assert era_tools_date("2031-07-01", "3.19.0") == "2031-07-01"
    assert era_tools_date(None, "3.7.17") is None


def test_a_2014_era_gets_the_setuptools_of_its_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeUv().install(monkeypatch)
    tree = make_tree(tmp_path, ["six"], requires_python=">=3")
    UvBuilder().build(request_for(tree, tmp_path / "home", date="2014-02-08", python="3.9"))
    era_tools = fake.options[0]
    assert fake.installs[0] == ["setuptools==1.0"]
    assert era_tools[era_tools.index("--exclude-newer") + 1] == "2020-11-01"  # 3.9's time
    main = fake.options[1]
    assert main[main.index("--exclude-newer") + 1] == "2014-03-01"


def test_an_environment_whose_pytest_does_not_start_names_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeUv().install(monkeypatch)
    fake.pytest = BROKEN_PYTEST
    tree = make_tree(tmp_path, ["six"])
    home = tmp_path / "home"
    message = r"pytest==8\.0 does not start on Python 3\.9\.\d+ .*cannot import name parse"
    with pytest.raises(EnvironmentFailure, match=message):
        UvBuilder().build(request_for(tree, home, python="3.9"))
    with pytest.raises(EnvironmentFailure, match=message):  # known: not built again
        UvBuilder().build(request_for(tree, home, python="3.9"))
    assert fake.venvs == 1


def test_a_pytest_that_does_not_start_names_the_build_tools_the_environment_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """attrs 2022: zope.interface pins its own setuptools, installed over the era's."""
    fake = FakeUv().install(monkeypatch)
    fake.pytest = BROKEN_PYTEST
    tree = make_tree(tmp_path, ["six", "setuptools==84.0"])
    with pytest.raises(EnvironmentFailure) as raised:
        UvBuilder().build(request_for(tree, tmp_path / "home", python="3.9"))
    assert "with the build tools it holds (setuptools==84.0): " in str(raised.value)


def test_the_install_timeout_is_a_setting() -> None:
    import yaml

    import bugbout.conf

    packaged = yaml.safe_load(
        (Path(bugbout.conf.__file__).parent / "environment" / "uv.yaml").read_text(encoding="utf-8")
    )
    assert packaged["install-timeout"] == UvOptions().install_timeout == 600


def test_a_reason_names_what_the_environment_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bugbout.core.plumbing.environments.environment import lacking

    FakeUv(bad="mock==0.1").install(monkeypatch)
    tree = make_tree(tmp_path, ["six"], extras={"tests": ["mock==0.1"]})
    env = UvBuilder().build(request_for(tree, tmp_path / "home"))
    assert lacking(env) == (
        "; an environment failure may explain it: the environment lacks mock==0.1 (did not "
        "resolve: no mock==0.1)"
    )
    full = UvBuilder().build(request_for(make_tree(tmp_path / "full", ["six"]), tmp_path / "h"))
    assert lacking(full) == ""


def test_a_fix_older_than_its_interpreter_gets_the_pytest_of_the_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeUv().install(monkeypatch)
    tree = make_tree(tmp_path, ["six"], requires_python=">=3")
    home = tmp_path / "home"
    env = UvBuilder().build(request_for(tree, home, date="2014-02-08", python="3.9"))
    runner, main = fake.compile_options[0], fake.compile_options[1]
    assert fake.compiles[0] == ["pytest"]
    assert runner[runner.index("--exclude-newer") + 1] == "2020-11-01"
    assert main[main.index("--exclude-newer") + 1] == "2014-03-01"
    assert "pytest=2020-11-01" in main
    assert "pytest=2020-11-01" in fake.options[-1]  # the install lifts the cap too
    assert "; pytest and what it needs as of 2020-11-01 (the fix's predates Python 3.9)" in (
        env.description
    )
    # A fix of the interpreter's time resolves pytest as of its own date.
    fake.compiles.clear()
    UvBuilder().build(request_for(tree, home, date="2021-06-15", python="3.9"))
    assert fake.compiles == [["pytest", "six"]]


def test_the_era_build_tools_are_never_older_than_uv_can_build_with() -> None:
    call = uv_resolution.UvCall("2015-04-01", None, 60, Path())
    era = call.options(era_build_tools=True)
    assert "setuptools=2019-03-01" in era  # uv builds a setup.py with setuptools>=40.8.0
    (newest,) = [o for o in call.options() if o.startswith("setuptools=")]
    assert newest > f"setuptools={date.today().isoformat()}"  # up to tomorrow
