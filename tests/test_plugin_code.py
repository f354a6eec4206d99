"""The outcome plugin compiled once per interpreter, in the runs' sandbox, and kept in
``BUGBOUT_HOME`` (:mod:`bugbout.core.plumbing.testruns.plugin_code`): sandboxed runs
compile none of its modules but the one pytest loads, the kept code is bugbout's alone,
code that is not bugbout's, not whole, or not for this interpreter is never run, and
runs that are not sandboxed neither keep nor read it."""

from __future__ import annotations

import hashlib
import marshal
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from importlib.util import MAGIC_NUMBER
from pathlib import Path

import pytest

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import ProjectSettings, TestLimitsSettings
from bugbout.core.plumbing.confinement import confine
from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.plumbing.environments.environment import (
    Command,
    Environment,
    EnvironmentRequest,
)
from bugbout.core.plumbing.testruns import plugin_code, testrun
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import Outcome, RunStatus, TestRun
from bugbout.sandbox.confinement import Confinement, Sandbox

PROJECT = ProjectSettings(source="pkg", tests="tests")
TESTS = """\
def test_passes():
    assert 1 + 1 == 2


def test_fails():
    assert 1 + 1 == 3
"""
EXPECTED = {
    "tests/test_x.py::test_passes": Outcome.PASSED,
    "tests/test_x.py::test_fails": Outcome.FAILED,
}
AUDITED = """\
import runpy, sys

def hook(event, args):
    if event == "compile" and isinstance(args[1], str) and args[1].startswith({folder!r}):
        with open({log!r}, "a") as log:
            log.write(args[1].rsplit("/", 1)[-1] + "\\n")

sys.addaudithook(hook)
runpy.run_module("pytest", run_name="__main__", alter_sys=True)
"""
"""``python -m pytest``, noting each file of the plugin's folder that is compiled."""


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the plugin's folder with no bytecode beside it (as for an interpreter
    whose bytecode the package does not ship), used by every run; a fresh ``BUGBOUT_HOME``."""
    folder = tmp_path / "plugin"
    shutil.copytree(
        testrun.outcomes_plugin_dir(), folder, ignore=shutil.ignore_patterns("__pycache__")
    )
    monkeypatch.setattr(testrun, "outcomes_plugin_dir", lambda: folder)
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    plugin_code._kept.cache_clear()
    return folder


class _Showing:
    """The bubblewrap sandbox showing the test's own folders too (the plugin's copy,
    readable; ``writable``), and running pytest as ``rewrite`` says."""

    name = "bubblewrap"

    def __init__(
        self,
        readable: tuple[Path, ...],
        writable: tuple[Path, ...] = (),
        rewrite: Callable[[list[str]], list[str]] = list,
    ) -> None:
        self.inner: Sandbox = make_plugins(entry_points=False).create("sandbox", "bubblewrap")
        self.readable, self.writable, self.rewrite = readable, writable, rewrite

    def problem(self) -> str | None:
        return self.inner.problem()

    def wrap(self, argv: list[str], confinement: Confinement) -> list[str]:
        if argv[1:3] == ["-m", "pytest"]:
            argv = self.rewrite(argv)
        shown = confinement.model_copy(update={
            "readable": (*confinement.readable, *self.readable),
            "writable": (*confinement.writable, *self.writable),
        })  # fmt: skip
        return self.inner.wrap(argv, shown)


def _confined(home: Path, sandbox: Sandbox) -> Confine:
    """How bugbout confines test runs in ``sandbox``, ``home`` hidden."""
    for folder in ("repo", "store"):
        (home.parent / folder).mkdir(exist_ok=True)
    masked = confine.masked_paths(home.parent / "repo", home.parent / "store", home)
    return confine.test_confinement(TestLimitsSettings(), sandbox, home, masked)


@pytest.fixture
def sandboxed(plugin: Path, tmp_path: Path) -> Confine:
    """Test runs in bubblewrap that see the plugin's copy."""
    return _confined(tmp_path / "home", _Showing((plugin,)))


def _environment(tree: Path, home: Path) -> Environment:
    return (
        make_plugins(entry_points=False)
        .create("environment", "interpreter")
        .build(EnvironmentRequest(project=PROJECT, tree=tree, home=home))
    )


def _tree(root: Path, conftest: str = "") -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "tests").mkdir()
    (root / "tests" / "test_x.py").write_text(TESTS)
    if conftest:
        (root / "tests" / "conftest.py").write_text(conftest)
    return root


def _run(tree: Path, home: Path, **options: object) -> TestRun:
    run = run_tests(
        _environment(tree, home), tree, ["tests"], project=PROJECT, label="r", timeout=120,
        **options,  # type: ignore[arg-type]
    )  # fmt: skip
    assert run.status == RunStatus.OK, run.tampering or run.detail
    assert run.outcomes == EXPECTED, run.failures
    return run


def _kept(home: Path) -> list[Path]:
    return sorted((home / plugin_code.FOLDER).glob("[!.]*"))


@pytest.mark.parametrize("traced", [False, True], ids=["outcomes", "coverage"])
def test_a_run_compiles_no_module_of_the_plugin_but_those_pytest_loads(
    plugin: Path, tmp_path: Path, traced: bool
) -> None:
    tree = _tree(tmp_path / "tree")
    log = tmp_path / "compiled.log"
    script = tmp_path / "audited.py"
    script.write_text(AUDITED.format(folder=str(plugin), log=str(log)))
    log.touch()
    showing = _Showing((plugin, script), (log,), lambda argv: [argv[0], str(script), *argv[3:]])
    audited = _confined(tmp_path / "home", showing)

    for _ in range(2):
        _run(tree, tmp_path / "home", confine=audited, coverage=[] if traced else None)

    compiled = log.read_text().split()
    loaded = ["bugbout_outcomes.py", *(["bugbout_coverage.py"] if traced else [])]
    assert compiled == loaded * 2, compiled
    assert len(_kept(tmp_path / "home")) == 1


def test_the_kept_code_is_bugbouts_alone_and_each_runs_copy_is_sealed(
    sandboxed: Confine, tmp_path: Path
) -> None:
    tree = _tree(tmp_path / "tree")
    _run(tree, tmp_path / "home", confine=sandboxed)
    [kept] = _kept(tmp_path / "home")
    mode = kept.stat().st_mode
    assert not mode & (stat.S_IWGRP | stat.S_IWOTH) and kept.stat().st_uid == os.geteuid()

    with plugin_code.sealed(kept.read_bytes()) as descriptor:
        assert descriptor is not None
        with pytest.raises(PermissionError):
            os.pwrite(descriptor, b"poison", 0)
        with pytest.raises(PermissionError), open(f"/proc/self/fd/{descriptor}", "r+b") as again:
            again.write(b"poison")
        with pytest.raises(PermissionError):
            os.ftruncate(descriptor, 0)
        assert os.pread(descriptor, 64, 0) == kept.read_bytes()[:64]


POISON = "raise RuntimeError('the poisoned kept code ran')\n"


def _poisoned(first_line: bytes, magic: bytes = MAGIC_NUMBER) -> bytes:
    codes = {"bugbout_hooks": compile(POISON, "poison.py", "exec")}
    return first_line + b"\n" + magic.hex().encode() + b"\n" + marshal.dumps(codes)


def _signed(payload: bytes) -> bytes:
    """``payload`` as a kept file holds it: its SHA-256 follows it."""
    return payload + hashlib.sha256(payload).digest()


@pytest.mark.parametrize("why", ["writable by others", "another hash"])
def test_a_kept_file_that_is_not_bugbouts_is_made_again_never_run(
    sandboxed: Confine, tmp_path: Path, why: str
) -> None:
    tree = _tree(tmp_path / "tree")
    _run(tree, tmp_path / "home", confine=sandboxed)
    [kept] = _kept(tmp_path / "home")
    first = kept.read_bytes().split(b"\n", 1)[0]
    if why == "another hash":
        kept.write_bytes(_signed(_poisoned(plugin_code.FORMAT + b" " + b"0" * 64)))
    else:
        kept.write_bytes(_signed(_poisoned(first)))
        kept.chmod(0o666)
    plugin_code._kept.cache_clear()  # as a new bugbout process finds it

    _run(tree, tmp_path / "home", confine=sandboxed)

    assert b"poisoned" not in kept.read_bytes()
    assert not kept.stat().st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def test_code_another_interpreter_compiled_is_not_run(
    plugin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _tree(tmp_path / "tree")
    other = bytes([MAGIC_NUMBER[0] ^ 1, *MAGIC_NUMBER[1:]])
    monkeypatch.setattr(testrun, "plugin_code", lambda *given: _poisoned(
        plugin_code.FORMAT + b" " + b"0" * 64, other
    ))  # fmt: skip

    _run(tree, tmp_path / "home")


def test_an_interpreter_that_cannot_compile_it_runs_as_before(plugin: Path, tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    found = plugin_code.plugin_code(
        Command(argv=[str(fake), "-m", "pytest"], cwd=tmp_path), plugin, tmp_path / "home", _as_is
    )
    contained = plugin_code.plugin_code(
        Command(argv=[sys.executable, "-m", "pytest"], cwd=tmp_path, contained=True),
        plugin,
        tmp_path / "home",
        _as_is,
    )

    assert found is None and contained is None
    assert _kept(tmp_path / "home") == []


def _as_is(argv: list[str], where: Path, writable: tuple[Path, ...]) -> list[str]:
    return argv


def test_a_descriptor_that_holds_no_code_of_bugbouts_is_left_open(tmp_path: Path) -> None:
    """A sandbox that numbers descriptors anew may give ``BUGBOUT_CODE_FD``'s number to
    another file, the outcome file itself: the plugin reads it, and neither uses nor
    closes it."""
    outcomes = tmp_path / "outcomes"
    outcomes.write_bytes(b"bugbout-key " + b"ab" * 32 + b"\n")
    check = (
        "import os, sys; import bugbout_outcomes; os.fstat(int(sys.argv[1]));"
        " print(type(sys.modules['bugbout_hooks'].__loader__).__name__)"
    )
    with open(outcomes, "r+b") as handle:
        fd = str(handle.fileno())
        done = subprocess.run(
            [sys.executable, "-c", check, fd],
            env={**os.environ, "PYTHONPATH": str(testrun.outcomes_plugin_dir()),
                 "BUGBOUT_OUTCOMES_FD": fd, plugin_code.VARIABLE: fd},
            pass_fds=(handle.fileno(),), capture_output=True, text=True, check=False,
        )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "SourceFileLoader"


OUT_OF_REACH = """\
import os

KEPT = {kept!r}


def test_the_kept_code_is_out_of_reach():
    try:
        with open(KEPT, "wb") as handle:
            handle.write(b"poison")
    except OSError:
        pass
    assert not os.path.exists(KEPT)
"""


def test_a_sandboxed_run_can_neither_see_nor_write_the_kept_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bugbout.core.contract.settings import TestLimitsSettings
    from bugbout.core.plumbing.confinement import confine

    home = tmp_path / "home"  # the plugin is bugbout's own: a copy in /tmp is hidden
    monkeypatch.setenv("BUGBOUT_HOME", str(home))
    plugin_code._kept.cache_clear()
    for folder in ("repo", "store"):
        (tmp_path / folder).mkdir()
    confined = confine.test_confinement(
        TestLimitsSettings(),
        make_plugins(entry_points=False).create("sandbox", "bubblewrap"),
        home,
        confine.masked_paths(tmp_path / "repo", tmp_path / "store", home),
    )
    tree = _tree(tmp_path / "tree")
    _run(tree, home, confine=confined)
    [kept] = _kept(home)
    made = kept.read_bytes()
    (tree / "tests" / "test_reach.py").write_text(OUT_OF_REACH.format(kept=str(kept)))

    run = run_tests(
        _environment(tree, home), tree, ["tests"], project=PROJECT, label="r", timeout=120,
        confine=confined,
    )  # fmt: skip

    assert run.status == RunStatus.OK, run.tampering or run.detail
    assert run.outcomes == {
        **EXPECTED,
        "tests/test_reach.py::test_the_kept_code_is_out_of_reach": Outcome.PASSED,
    }, run.failures
    assert kept.read_bytes() == made


def test_a_kept_file_cut_short_is_made_again_and_the_runs_report(
    sandboxed: Confine, tmp_path: Path
) -> None:
    """A crash after a rename the disk had not written can leave the kept file cut short."""
    tree = _tree(tmp_path / "tree")
    _run(tree, tmp_path / "home", confine=sandboxed)
    [kept] = _kept(tmp_path / "home")
    whole = kept.read_bytes()
    kept.write_bytes(whole[: len(whole) // 2])
    plugin_code._kept.cache_clear()  # as a new bugbout process finds it

    _run(tree, tmp_path / "home", confine=sandboxed)

    assert kept.read_bytes() == whole


def test_the_plugin_compiles_from_source_what_does_not_unmarshal(tmp_path: Path) -> None:
    whole = _poisoned(plugin_code.FORMAT + b" " + b"0" * 64)
    check = (
        "import sys; import bugbout_outcomes;"
        " print(type(sys.modules['bugbout_hooks'].__loader__).__name__)"
    )
    outcomes = tmp_path / "outcomes"
    outcomes.write_bytes(b"bugbout-key " + b"ab" * 32 + b"\n")
    with (
        plugin_code.sealed(whole[: len(whole) - 20]) as descriptor,
        open(outcomes, "r+b") as handle,
    ):
        assert descriptor is not None
        done = subprocess.run(
            [sys.executable, "-c", check],
            env={**os.environ, "PYTHONPATH": str(testrun.outcomes_plugin_dir()),
                 "BUGBOUT_OUTCOMES_FD": str(handle.fileno()),
                 plugin_code.VARIABLE: str(descriptor)},
            pass_fds=(descriptor, handle.fileno()), capture_output=True, text=True, check=False,
        )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "SourceFileLoader"


PLANT = """\
import os

KEPT, POISON = {kept!r}, {poison!r}


def test_plants_code_in_the_kept_folder():
    os.makedirs(os.path.dirname(KEPT), exist_ok=True)
    with open(POISON, "rb") as source, open(KEPT, "wb") as kept:
        kept.write(source.read())
    os.chmod(KEPT, 0o644)
"""


def test_runs_that_are_not_sandboxed_neither_keep_nor_read_kept_code(
    plugin: Path, sandboxed: Confine, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    unsandboxed = _confined(home, make_plugins(entry_points=False).create("sandbox", "none"))
    tree = _tree(tmp_path / "tree")
    _run(tree, home, confine=unsandboxed)
    assert _kept(home) == []
    _run(tree, home, confine=sandboxed)  # to learn the kept file's name
    [kept] = _kept(home)
    poison = tmp_path / "poison"
    poison.write_bytes(_signed(_poisoned(kept.read_bytes().split(b"\n", 1)[0])))
    planting = _tree(tmp_path / "planting")
    (planting / "tests" / "test_x.py").unlink()
    (planting / "tests" / "test_plant.py").write_text(
        PLANT.format(kept=str(kept), poison=str(poison))
    )
    planted = run_tests(
        _environment(planting, home), planting, ["tests"], project=PROJECT, label="r",
        timeout=120, confine=unsandboxed,
    )  # fmt: skip
    assert planted.outcomes == {
        "tests/test_plant.py::test_plants_code_in_the_kept_folder": Outcome.PASSED
    }, planted.detail
    assert kept.read_bytes() == poison.read_bytes()
    plugin_code._kept.cache_clear()  # as a new bugbout process finds it

    _run(tree, home, confine=unsandboxed)


ESCAPING = """\
#!/bin/sh
echo escaped > {outside}
exec {python} "$@"
"""
"""An interpreter that writes outside its scratch folder, then compiles."""


def test_the_compile_runs_in_the_sandbox(tmp_path: Path) -> None:
    home = tmp_path / "home"
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    outside = tmp_path / "escaped"
    python.write_text(ESCAPING.format(outside=outside, python=sys.executable))
    python.chmod(0o755)
    sandbox = make_plugins(entry_points=False).create("sandbox", "bubblewrap")

    code = plugin_code.plugin_code(
        Command(argv=[str(python), "-m", "pytest"], cwd=tmp_path),
        testrun.outcomes_plugin_dir(),
        home,
        _confined(home, sandbox),
    )

    assert code is not None and code.startswith(plugin_code.FORMAT)
    assert not outside.exists()
    assert len(_kept(home)) == 1
