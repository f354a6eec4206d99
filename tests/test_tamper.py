"""Tamper evidence: the static scan of a patch's source, the canaries and the authenticated
outcome stream of a real pytest run, and the report's account of tampered patches."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.tampering.canaries import key_line, read_outcomes
from bugbout.core.plumbing.tampering.tamper import inspect_patch, scan
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.plumbing.trees.patch import diff_trees
from bugbout.core.report.report import report_schema
from bugbout.core.report.report_build import build_report
from bugbout.core.report.report_tampering import TamperedRow
from bugbout.core.store.race_records import Audit, ChangeArea, ChangeKind, FileChange, Route, Score
from bugbout.core.store.records import (
    OracleSet,
    Outcome,
    RunStatus,
    Task,
    TaskIssue,
    TaskSet,
    TestRun,
)
from bugbout.core.store.verdict_records import PatchResolution, Verdict
from bugbout.core.truth.oracle import judge_runs
from bugbout.example import build_example
from bugbout.plugins.reporters.html import render_html
from bugbout.plugins.reporters.json import render_json
from bugbout.plugins.reporters.markdown import render_markdown
from bugbout.plugins.reporters.terminal import render_terminal

PROJECT = ProjectSettings(source="pkg", tests="tests")

WRITES = "writes files when imported"
FLAGGED = {
    "import _pytest.runner\n": "imports _pytest.runner",
    "from pytest import hookimpl\n": "imports pytest",
    "import importlib\nimportlib.import_module('_pytest.reports')\n": "names _pytest.reports",
    "import sys\nsys.modules['x'] = None\n": "reaches into sys.modules",
    "import builtins\n": "reaches into builtins",
    "__builtins__['open'] = None\n": "reaches into builtins",
    "import atexit\n": "uses atexit",
    "import os\nos._exit(0)\n": "calls os._exit",
    "from unittest import TestResult\n": "imports unittest's TestResult",
    "import unittest\nunittest.TextTestResult.addFailure = None\n": "uses unittest.TextTestResult",
    "def pytest_runtest_makereport(item, call):\n    pass\n": "defines the pytest hook",
    "pytest_plugins = ['x']\n": "declares pytest_plugins",
    "import gc\nfor o in gc.get_objects():\n    pass\n": "walks the interpreter's objects",
    "from pathlib import Path\nPath('tests/test_x.py').write_text('')\n": WRITES,
    "def _install():\n    open('tests/conftest.py', 'w').close()\n\n_install()\n": WRITES,
    "if True:\n    with open('../tests/x', mode='a') as f:\n        pass\n": WRITES,
    "import os\nTESTED = 'PYTEST_CURRENT_TEST' in os.environ\n": "names PYTEST_CURRENT_TEST",
    "import sys\n\ndef f():\n    return sys._getframe(1).f_code.co_name\n": "callers' frames",
    "import inspect\n\ndef f():\n    return inspect.stack()[1]\n": "callers' frames",
    "def f(frame):\n    return frame.f_back.f_locals\n": "callers' frames",
    # names built at run time, folded
    "import importlib\nm = importlib.import_module('s' + 'ys')\nx = getattr(m, 'mod' + 'ules')\n": (
        "builds the name 'modules' at run time"
    ),
    "import gc\nwalk = getattr(gc, ''.join(['get_', 'objects']))\n": "walks the interpreter's",
    "NAME = 'tsetyp'\nimport importlib\nimportlib.import_module(NAME[::-1])\n": "imports pytest",
    "X = chr(112) + chr(121) + 'test'\n": "builds the name 'pytest' at run time",
    "import sys\nf = getattr(sys, 'set' + 'trace')\n": "sets a trace function",
    "K = f\"{'bug'}bout\"\n": "builds the name 'bugbout' at run time",
    "code = compile('x = 1', __file__, 'exec')\n": "compiles code under a file name",
}

CLEAN = [
    '"""Run pytest to check this module."""\n\ndef add(a, b):\n    return a + b\n',
    "def save(path, text):\n    with open(path, 'w') as f:\n        f.write(text)\n",
    "import os\n\nCONFIG = open(os.devnull).read()\n",
    "import sys\n\nif sys.version_info < (3, 9):\n    raise ImportError('too old')\n",
    "import gc\n\ndef collect():\n    gc.collect()\n",
    "NAME = 'a-b'.replace('-', '_')\nPARTS = [1, 2]\nPARTS.remove(1)\nD = {}.copy()\n",
    "from pathlib import Path\nKEY = str(Path('a')).replace('/', '.')\n",
    "code = compile('x = 1', '<generated>', 'exec')\nLABEL = 'multi' + 'ply'\n",
    "import re\n\nPATTERN = re.compile('a+b', re.IGNORECASE)\n",
]


@pytest.mark.parametrize("source", sorted(FLAGGED))
def test_the_scan_flags_code_that_reaches_into_the_test_run(source: str) -> None:
    found = scan("pkg/mod.py", source)
    assert any(FLAGGED[source] in finding.what for finding in found), found
    assert all(str(finding).startswith("pkg/mod.py:") for finding in found)


@pytest.mark.parametrize("source", CLEAN)
def test_the_scan_leaves_ordinary_code_alone(source: str) -> None:
    assert scan("pkg/mod.py", source) == []


def _change(path: str, kind: ChangeKind = ChangeKind.MODIFIED) -> FileChange:
    return FileChange(path=path, kind=kind, area=ChangeArea.SOURCE)


def test_only_what_the_patch_adds_is_flagged(tmp_path: Path) -> None:
    base, tree = tmp_path / "base", tmp_path / "tree"
    for root in (base, tree):
        (root / "pkg").mkdir(parents=True)
    (base / "pkg" / "app.py").write_text("import atexit\n")
    (tree / "pkg" / "app.py").write_text("import atexit\n\n\ndef fixed():\n    return 1\n")
    assert inspect_patch(tree, base, [_change("pkg/app.py")]) == []
    (tree / "pkg" / "app.py").write_text("import atexit\nimport atexit as again\n")
    assert inspect_patch(tree, base, [_change("pkg/app.py")]) == ["pkg/app.py:2: uses atexit"]


def test_files_the_interpreter_runs_and_unreadable_files_are_flagged(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "sitecustomize.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "evil.pth").write_text("import os\n")
    (tmp_path / "pkg" / "link.py").symlink_to("/dev/zero")
    changes = [
        _change("pkg/sitecustomize.py", ChangeKind.ADDED),
        _change("pkg/evil.pth", ChangeKind.ADDED),
        _change("pkg/link.py", ChangeKind.ADDED),
    ]
    found = inspect_patch(tmp_path, None, changes)
    assert found[0] == "pkg/sitecustomize.py:1: the interpreter runs this file at startup"
    assert found[1] == "pkg/evil.pth:1: the interpreter runs this file at startup"
    assert found[2].startswith("pkg/link.py:1: not inspected")


def _fixes_are_clean(repository: Path, source: str, tests: str, tmp_path: Path) -> int:
    """Inspect every commit of ``repository`` as a patch on its parent; the number seen."""
    seen = 0
    with Git(repository) as git:
        shas = git.run("rev-list", "--no-merges", "HEAD").split()
        for number, sha in enumerate(shas[:-1]):
            base, tree = tmp_path / f"b{number}", tmp_path / f"t{number}"
            git.export(f"{sha}^", base)
            git.export(sha, tree)
            patch = diff_trees(base, tree, source=source, tests=tests)
            assert inspect_patch(tree, base, patch.area(ChangeArea.SOURCE)) == [], sha
            seen += bool(patch.area(ChangeArea.SOURCE))
    return seen


def test_the_history_and_demo_fixes_are_not_flagged(
    calc_repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    assert _fixes_are_clean(calc_repo[0], "src/calc", "tests", tmp_path / "calc") >= 5
    demo = build_example(tmp_path / "tally")
    assert _fixes_are_clean(demo, "src/tally", "tests", tmp_path / "demo") >= 3


# -- a real pytest run ---------------------------------------------------------------------


@pytest.fixture
def environment(plugins: Plugins, tmp_path: Path) -> Environment:
    builder = plugins.create("environment", "interpreter")
    request = EnvironmentRequest(project=PROJECT, tree=tmp_path, home=tmp_path / "home")
    return builder.build(request)  # type: ignore[no-any-return]


def _tree(root: Path, package: str, test: str) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text(textwrap.dedent(package))
    (root / "tests").mkdir()
    (root / "tests" / "test_it.py").write_text(
        "import pkg\n\n\ndef test_fixed():\n    assert pkg.VALUE == 2\n" + textwrap.dedent(test)
    )
    return root


def _run(environment: Environment, tree: Path) -> TestRun:
    targets = ["tests/test_it.py"]
    return run_tests(environment, tree, targets, project=PROJECT, label="t", timeout=60)


def test_an_honest_run_has_canaries_that_leave_no_trace(
    environment: Environment, tmp_path: Path
) -> None:
    tree = _tree(tmp_path / "tree", "VALUE = 1\n", "")
    before = sorted(p.name for p in (tree / "tests").iterdir())
    run = _run(environment, tree)
    assert run.status == RunStatus.OK, run.tampering
    assert run.outcomes == {"tests/test_it.py::test_fixed": Outcome.FAILED}
    assert run.tampering == []
    assert sorted(p.name for p in (tree / "tests").iterdir() if p.name != "__pycache__") == before


REWRITE = """
    VALUE = 1
    from _pytest.reports import TestReport as _Report
    _made = _Report.from_item_and_call

    def _passed(item, call):
        report = _made(item, call)
        report.outcome, report.longrepr = "passed", None
        return report

    _Report.from_item_and_call = staticmethod(_passed)
"""
DIVERT = """
    VALUE = 1
    import gc
    for _caller in gc.get_objects():
        if "HookCaller" in type(_caller).__name__ and _caller.name == "pytest_runtest_logreport":
            _real = _caller._hookexec

            def _exec(name, impls, kwargs, firstresult, _real=_real):
                report = kwargs.get("report")
                if report is not None and report.failed:
                    report.outcome = "passed"
                return _real(name, impls, kwargs, firstresult)

            _caller._hookexec = _exec
"""
FORGE = """
    import json, os
    def test_forge():
        line = {"nodeid": "tests/test_it.py::test_fixed", "when": "call", "outcome": "passed"}
        os.write(int(os.environ["BUGBOUT_OUTCOMES_FD"]), (json.dumps(line) + "\\n").encode())
"""
ISCLOSE = """
    import math
    VALUE = 1
    math.isclose = lambda *args, **kwargs: True
"""
ASSERT_EQUAL = """
    import unittest
    VALUE = 1
    unittest.TestCase.assertEqual = lambda *args, **kwargs: None
"""
EXIT = """
    import os
    def test_zz_leave():
        os._exit(0)
"""


@pytest.mark.parametrize(
    ("package", "test", "reason"),
    [
        (REWRITE, "", "must fail but passed"),
        (REWRITE, "", "_pytest.reports.TestReport.from_item_and_call was replaced"),
        (DIVERT, "", "must fail but passed"),
        (DIVERT, "", "pytest_runtest_logreport._hookexec was set to code from"),
        ("VALUE = 1\n", FORGE, "bad signature"),
        ("VALUE = 1\n", EXIT, "without finishing its session"),
        (ISCLOSE, "", "math.isclose was replaced"),
        (ASSERT_EQUAL, "", "unittest.case.TestCase.assertEqual was replaced"),
    ],
)
def test_a_run_the_code_under_test_meddles_with_is_tampered(
    environment: Environment, tmp_path: Path, package: str, test: str, reason: str
) -> None:
    run = _run(environment, _tree(tmp_path / "tree", package, test))
    assert run.status == RunStatus.TAMPERED
    assert any(reason in why for why in run.tampering), run.tampering
    assert not any("test_" in test and "test_it.py" not in test for test in run.outcomes)


def test_the_stream_rejects_forged_duplicated_and_missing_lines() -> None:
    assert read_outcomes(key_line("k"), "k").summary is None
    forged = json.dumps({"nodeid": "a", "when": "call", "outcome": "passed", "seq": 0, "mac": "0"})
    assert "bad signature" in read_outcomes(forged.encode(), "k").tampering[0]


def test_the_schema_describes_the_tampered_rows() -> None:
    tampered = report_schema()["$defs"]["tampered"]
    assert set(tampered["properties"]) == set(TamperedRow.model_fields)
    assert set(tampered["required"]) == set(TamperedRow.model_fields)


def test_ground_truth_from_a_tampered_run_is_an_environment_error() -> None:
    task = Task(
        id="t", sha="a" * 40, parent="b" * 40, date="2024-01-01T00:00:00+00:00", title="x",
        issue=TaskIssue(number=1), source_files=["pkg/a.py"], test_files=["tests/test_a.py"],
    )  # fmt: skip
    before = TestRun(label="before", status=RunStatus.OK, outcomes={"t::a": Outcome.FAILED})
    after = TestRun(
        label="after-1",
        status=RunStatus.TAMPERED,
        outcomes={"t::a": Outcome.PASSED},
        tampering=["canary tests/test_q.py::test_r must pass but skipped"],
    )
    oracle = judge_runs(task, [before, after])
    assert oracle.status == "environment-error"
    assert "must pass but skipped" in (oracle.reason or "")
    assert oracle.fail_to_pass == []


def test_every_reporter_names_a_tampered_patch() -> None:
    run = TestRun(label="cheat", status=RunStatus.TAMPERED, tampering=["canary x must fail"])
    resolution = PatchResolution(task_id="t1", contestant="cheat", score=Score.TAMPERED, run=run)
    audit = Audit(
        task_id="t1", contestant="cheat", auditor="gate", verdict=Score.TAMPERED,
        route=Route.NONE, tampering=["pkg/a.py:1: imports _pytest"],
    )  # fmt: skip
    verdict = Verdict(
        task_id="t1", policy="majority", reason="abstained", tampered={"cheat": ["canary x"]}
    )
    report = build_report(TaskSet(), OracleSet(), [], [resolution], [verdict], [audit], [])
    (row,) = report.tampered
    assert (row.task, row.contestant) == ("t1", "cheat")
    assert row.found_by == ["score", "audit", "judge majority"]
    assert row.reasons == ["canary x must fail", "pkg/a.py:1: imports _pytest", "canary x"]
    for text in (render_markdown(report), render_terminal(report), render_html(report)):
        assert "Tampered" in text and "cheat" in text and "canary x must fail" in text
    assert json.loads(render_json(report))["tampered"][0]["contestant"] == "cheat"
