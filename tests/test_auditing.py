"""Audits: the verdict table, failures classified against the unfixed code, kill reports,
no-progress escalation, visible-only audits; and the gate run for real on a small
repository (real git, checkouts, bubblewrap and pytest), which no tree it was given
survives changed."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import yaml

import bugbout.conf
import components
from bugbout.core.audit.audit_gate import run_gate
from bugbout.core.audit.auditing import (
    AuditRequest,
    classify,
    escalate,
    kill_report,
    reproductions,
    verdict_for,
)
from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings, PluginChoice, ProjectSettings
from bugbout.core.plumbing import bench as benches
from bugbout.core.plumbing import confine as confinement
from bugbout.core.plumbing.checkout import Checkouts
from bugbout.core.plumbing.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.git import Git
from bugbout.core.plumbing.patch import diff_trees
from bugbout.core.store.records import (
    Attempt,
    AttemptStatus,
    AuditVerdict,
    ChangeArea,
    ChangeKind,
    FileChange,
    Oracle,
    Outcome,
    Patch,
    Route,
    RunStatus,
    Task,
    TaskIssue,
    TestRun,
)
from bugbout.plugins.auditors import gate as gate_module
from bugbout.plugins.auditors.gate import Gate, GateOptions
from bugbout.testing import RepositoryBuilder

F2P = ["tests/test_core.py::test_even", "tests/test_core.py::test_pair"]
P2P = "tests/test_core.py::test_odd"
OTHER = "tests/test_util.py::test_spread"
LEGACY = "tests/test_legacy.py::test_empty"

TASK = Task(
    id="abc123", sha="b" * 40, parent="a" * 40, date="2024-01-01T00:00:00+00:00",
    title="Fix middle of even-length lists (#1)", issue=TaskIssue(number=1),
    source_files=["src/mid/core.py"], test_files=["tests/test_core.py"],
)  # fmt: skip
ORACLE = Oracle(
    task_id="abc123", status="ok", fail_to_pass=F2P, pass_to_pass=[P2P], fail_on_base=[LEGACY]
)
SOURCE = "diff --git a/src/mid/core.py b/src/mid/core.py\n"
PATCH = Patch(
    source=SOURCE,
    files=[FileChange(path="src/mid/core.py", kind=ChangeKind.MODIFIED, area=ChangeArea.SOURCE)],
)


def attempt(patch: Patch = PATCH, **fields: object) -> Attempt:
    values: dict[str, object] = {
        "task_id": TASK.id, "contestant": "alice", "key": "k", "agent": "command",
        "status": AttemptStatus.FINISHED, "patch": patch,
    }  # fmt: skip
    return Attempt.model_validate(values | fields)


def run(label: str, outcomes: dict[str, str], **fields: object) -> TestRun:
    return TestRun.model_validate(
        {"label": label, "status": RunStatus.OK, "outcomes": outcomes} | fields
    )


BASE = {F2P[0]: "failed", F2P[1]: "failed", P2P: "passed", OTHER: "passed", LEGACY: "failed"}
"""The unfixed code: the fix's tests fail, one repository test fails already."""


def request(
    gate: dict[str, str],
    base: dict[str, str] = BASE,
    *,
    patch: Patch = PATCH,
    **gate_fields: object,
) -> AuditRequest:
    return AuditRequest.hidden(
        TASK,
        ORACLE,
        attempt(patch),
        gate=run("gate", gate, **gate_fields),
        baseline=run("baseline", base),
    )


# -- the verdict table, row by row -------------------------------------------------------------


@pytest.mark.parametrize(
    ("gate", "patch", "verdict", "route"),
    [
        pytest.param(BASE, Patch(), AuditVerdict.EMPTY, Route.CRAFT, id="empty patch"),
        pytest.param(
            BASE | {F2P[0]: "passed", F2P[1]: "passed"},
            PATCH, AuditVerdict.RESOLVED, Route.NONE, id="all pass, no regression",
        ),
        pytest.param(
            BASE | {F2P[0]: "passed", F2P[1]: "passed", P2P: "failed"},
            PATCH, AuditVerdict.REGRESSIONS, Route.CRAFT, id="all pass, a regression",
        ),
        pytest.param(
            BASE | {F2P[0]: "passed"},
            PATCH, AuditVerdict.PARTIAL, Route.RECON, id="some pass",
        ),
        pytest.param(
            BASE | {F2P[0]: "passed", P2P: "error"},
            PATCH, AuditVerdict.PARTIAL, Route.RECON, id="some pass, a regression",
        ),
        pytest.param(BASE, PATCH, AuditVerdict.INEFFECTIVE, Route.RECON, id="none pass"),
        pytest.param(
            BASE | {OTHER: "failed"},
            PATCH, AuditVerdict.INEFFECTIVE, Route.RECON, id="none pass, a regression",
        ),
    ],
)  # fmt: skip
def test_the_verdict_table(
    gate: dict[str, str], patch: Patch, verdict: AuditVerdict, route: Route
) -> None:
    result = classify(request(gate, patch=patch))
    assert (result.verdict, result.route) == (verdict, route)


def test_verdict_for_counts() -> None:
    assert verdict_for(empty=True, must_pass=2, passing=2, regressions=0) == (
        AuditVerdict.EMPTY,
        Route.CRAFT,
    )
    assert verdict_for(empty=False, must_pass=2, passing=2, regressions=0)[0] == "RESOLVED"
    assert verdict_for(empty=False, must_pass=2, passing=2, regressions=3) == (
        AuditVerdict.REGRESSIONS,
        Route.CRAFT,
    )
    assert verdict_for(empty=False, must_pass=2, passing=1, regressions=0)[1] == Route.RECON
    assert verdict_for(empty=False, must_pass=2, passing=0, regressions=0) == (
        AuditVerdict.INEFFECTIVE,
        Route.RECON,
    )
    # nothing to pass: regressions alone decide
    assert verdict_for(empty=False, must_pass=0, passing=0, regressions=0)[0] == "RESOLVED"
    assert verdict_for(empty=False, must_pass=0, passing=0, regressions=1)[1] == Route.CRAFT


def test_a_patch_that_changes_only_tests_or_other_files_is_empty() -> None:
    tests_only = Patch(
        tests="diff --git a/tests/test_x.py b/tests/test_x.py\n",
        other="diff --git a/setup.cfg b/setup.cfg\n",
        files=[
            FileChange(path="tests/test_x.py", kind=ChangeKind.ADDED, area=ChangeArea.TEST),
            FileChange(path="setup.cfg", kind=ChangeKind.MODIFIED, area=ChangeArea.OTHER),
        ],
    )
    fixed = BASE | {F2P[0]: "passed", F2P[1]: "passed"}
    result = classify(request(fixed, patch=tests_only))
    assert (result.verdict, result.route, result.empty) == (AuditVerdict.EMPTY, Route.CRAFT, True)
    assert (result.still_failing, result.regressions, result.pre_existing) == ([], [], [])


# -- every failing test classified -------------------------------------------------------------


def test_pre_existing_failures_are_listed_and_not_counted() -> None:
    gate = BASE | {F2P[0]: "passed", F2P[1]: "passed", LEGACY: "error"}
    result = classify(request(gate))
    assert result.verdict == AuditVerdict.RESOLVED
    assert result.pre_existing == [LEGACY]
    assert result.regressions == []
    assert result.passing == F2P
    assert result.failures == {LEGACY: "error"}


def test_regressions_are_failures_that_were_not_red_on_the_unfixed_code() -> None:
    skipped = "tests/test_util.py::test_skipped_before"
    xfailed = "tests/test_util.py::test_xfailed_before"
    base = BASE | {skipped: "skipped", xfailed: "xfailed"}
    gate = base | {F2P[0]: "passed", F2P[1]: "passed", P2P: "failed", skipped: "error"}
    gate[xfailed] = "xpassed"  # not a failure
    result = classify(request(gate, base))
    assert result.regressions == [P2P, skipped]
    assert result.pre_existing == [LEGACY]
    assert result.failures[P2P] == "failed"
    assert result.failures[skipped] == "error"
    assert (result.verdict, result.route) == (AuditVerdict.REGRESSIONS, Route.CRAFT)


def test_a_module_the_patch_broke_at_collection_is_a_regression_with_its_error() -> None:
    gate = {F2P[0]: "passed", F2P[1]: "passed", P2P: "passed", LEGACY: "failed"}  # OTHER gone
    errors = {"tests/test_util.py": "ImportError: cannot import name 'spread'"}
    result = classify(request(gate, collection_errors=errors))
    assert result.regressions == [OTHER]
    assert result.failures[OTHER] == (
        "error: cannot be collected: ImportError: cannot import name 'spread'"
    )
    assert result.verdict == AuditVerdict.REGRESSIONS


def test_tests_that_passed_and_did_not_run_with_the_patch_are_regressions() -> None:
    gate = {F2P[0]: "passed", F2P[1]: "passed"}  # the run was killed before the rest
    result = classify(request(gate, status=RunStatus.TIMEOUT))
    assert result.regressions == [P2P, OTHER]
    assert result.pre_existing == []  # LEGACY did not run and was red already: no evidence
    assert result.failures[P2P] == "did not run (the gate run ended: timeout)"


def test_failing_on_the_unfixed_code_through_a_collection_error_is_pre_existing() -> None:
    base = {F2P[0]: "failed", F2P[1]: "failed", P2P: "passed"}
    base_errors = {"tests/test_legacy.py": "SyntaxError: invalid syntax"}
    gate = {F2P[0]: "passed", F2P[1]: "passed", P2P: "passed", LEGACY: "failed"}
    req = AuditRequest.hidden(
        TASK,
        ORACLE,
        attempt(),
        gate=run("gate", gate),
        baseline=run("baseline", base, collection_errors=base_errors),
    )
    result = classify(req)
    assert (result.pre_existing, result.regressions) == ([LEGACY], [])
    assert result.verdict == AuditVerdict.RESOLVED


def test_modules_failing_to_collect_without_known_tests_are_classified_too() -> None:
    gate = BASE | {F2P[0]: "passed", F2P[1]: "passed"}
    errors = {"tests/test_new_break.py": "NameError: x", "tests/test_old_break.py": "E"}
    req = AuditRequest.hidden(
        TASK,
        ORACLE,
        attempt(),
        gate=run("gate", gate, collection_errors=errors),
        baseline=run("baseline", BASE, collection_errors={"tests/test_old_break.py": "E"}),
    )
    result = classify(req)
    assert result.regressions == ["tests/test_new_break.py"]
    assert result.pre_existing == [LEGACY, "tests/test_old_break.py"]
    assert result.failures["tests/test_new_break.py"] == "cannot be collected: NameError: x"


def test_a_must_pass_test_passes_only_when_it_passed() -> None:
    gate = BASE | {F2P[0]: "skipped"}  # F2P[1] still failed
    gate.pop(F2P[1])
    result = classify(request(gate))
    assert result.still_failing == F2P
    assert result.failures == {F2P[0]: "skipped", F2P[1]: "did not run", LEGACY: "failed"}
    assert result.verdict == AuditVerdict.INEFFECTIVE


# -- the kill report ---------------------------------------------------------------------------


def test_kill_report_for_a_regression_routes_to_craft_with_the_evidence() -> None:
    gate = {F2P[0]: "passed", F2P[1]: "passed", P2P: "failed", LEGACY: "failed"}
    req = request(gate, collection_errors={"tests/test_util.py": "ImportError: spread"})
    result = classify(req)
    report = kill_report(req, result)
    assert report.startswith("# Audit of alice on abc123\n")
    assert f"- `{F2P[0]}`: PASS" in report
    assert f"- `{P2P}`: failed" in report
    assert f"- `{OTHER}`: error: cannot be collected: ImportError: spread" in report
    pre_existing = "## Pre-existing failures (failing on the unfixed code too; not counted)"
    assert f"{pre_existing}\n- `{LEGACY}`\n" in report
    assert "## Kill report" in report
    assert "2 test(s) that passed on the unfixed code now fail" in report
    assert "The patch changed: `src/mid/core.py`." in report
    assert report.splitlines()[-2:] == [
        "VERDICT: NOT_RESOLVED — regressions",
        "RE-ENTER: craft",
    ]


def test_kill_report_for_an_ineffective_fix_routes_to_recon_with_what_still_fails() -> None:
    gate = BASE | {F2P[0]: "passed"}
    gate.pop(F2P[1])
    req = request(gate, collection_errors={"tests/test_core.py::test_pair": "TypeError: pair"})
    report = kill_report(req, classify(req))
    assert "## Must pass (fail-to-pass: 1 of 2 pass)" in report
    assert f"- `{F2P[1]}`: FAIL (error: cannot be collected: TypeError: pair)" in report
    assert "1 of 2 test(s) the fix must pass still fail" in report
    assert "## Regressions (passed on the unfixed code, fail with the patch)\n- none" in report
    assert report.endswith("VERDICT: PARTIAL\nRE-ENTER: recon\n")


def test_kill_report_when_resolved_and_when_empty() -> None:
    req = request(BASE | {F2P[0]: "passed", F2P[1]: "passed"})
    resolved = kill_report(req, classify(req))
    assert "## Kill report" not in resolved
    assert resolved.endswith("\nVERDICT: RESOLVED\nRE-ENTER: none\n")
    other = Patch(
        other="diff --git a/README b/README\n",
        files=[FileChange(path="README", kind=ChangeKind.MODIFIED, area=ChangeArea.OTHER)],
    )
    empty_req = request(BASE, patch=other)
    empty = kill_report(empty_req, classify(empty_req))
    assert "changes no source file" in empty
    assert "It changes 1 other file(s)" in empty
    assert "## Must pass" not in empty
    assert empty.endswith("VERDICT: NOT_RESOLVED — empty patch\nRE-ENTER: craft\n")


def test_kill_report_lists_at_most_the_limit() -> None:
    many = {f"tests/test_many.py::test_{i:02}": "passed" for i in range(10)}
    base = BASE | many
    gate = base | {F2P[0]: "passed", F2P[1]: "passed"} | dict.fromkeys(many, "failed")
    req = request(gate, base)
    report = kill_report(req, classify(req), limit=3)
    assert "- `tests/test_many.py::test_02`: failed\n- ... and 7 more" in report
    assert "test_many.py::test_03" not in report


def test_the_gate_plugin_records_the_audit(plugins: Plugins) -> None:
    if "gate" not in plugins.of_kind("auditor"):
        plugins.register(gate_module, name=gate_module.__name__, distribution="bugbout")
    auditor = plugins.create("auditor", "gate", {"max-listed": 1})
    assert isinstance(auditor, Gate)
    assert auditor.options.max_listed == 1
    with pytest.raises(ConfigError, match="max-listd"):
        plugins.create("auditor", "gate", {"max-listd": 1})
    req = request(BASE | {F2P[0]: "passed", F2P[1]: "passed", P2P: "failed", OTHER: "failed"})
    audit = auditor.audit(req)
    assert (audit.task_id, audit.contestant, audit.auditor) == ("abc123", "alice", "gate")
    assert (audit.verdict, audit.route) == (AuditVerdict.REGRESSIONS, Route.CRAFT)
    assert (audit.still_failing, audit.regressions, audit.pre_existing) == (
        [],
        [P2P, OTHER],
        [LEGACY],
    )
    assert "- ... and 1 more" in audit.report
    assert audit.visible_only is False


def test_the_packaged_gate_config_names_valid_options(plugins: Plugins) -> None:
    path = Path(bugbout.conf.__file__).parent / "auditor" / "gate.yaml"
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert config.pop("name") == "gate"
    assert GateOptions.model_validate(config) == GateOptions()


# -- rounds ------------------------------------------------------------------------------------


def test_escalation_sends_a_second_craft_in_a_row_to_recon() -> None:
    assert escalate(Route.CRAFT, []) == Route.CRAFT
    assert escalate(Route.CRAFT, [Route.CRAFT]) == Route.RECON
    assert escalate(Route.CRAFT, [Route.RECON]) == Route.CRAFT
    assert escalate(Route.RECON, [Route.CRAFT]) == Route.RECON
    assert escalate(Route.NONE, [Route.CRAFT]) == Route.NONE
    # after the escalated re-diagnosis a new regression gets its narrowing round again,
    # whether earlier rounds are given as the audits emitted them or as escalated
    assert escalate(Route.CRAFT, [Route.CRAFT, Route.CRAFT]) == Route.CRAFT
    assert escalate(Route.CRAFT, [Route.CRAFT, Route.RECON]) == Route.CRAFT
    assert escalate(Route.CRAFT, [Route.CRAFT, Route.CRAFT, Route.CRAFT]) == Route.RECON


# -- visible-only audits -----------------------------------------------------------------------

REPRO = "tests/test_examined.py::test_even_examined"


def examiner(**fields: object) -> Attempt:
    values: dict[str, object] = {
        "contestant": "bob", "role": "examiner", "assignment": "reproduce",
        "reproductions": [REPRO], "rejected_tests": ["tests/test_examined.py::test_weak"],
    }  # fmt: skip
    return attempt(Patch(), **(values | fields))


def test_a_visible_audit_must_pass_the_examiners_reproductions() -> None:
    spec = examiner(contestant="carol", assignment="specify", reproductions=[REPRO, "t::x"])
    assert reproductions(TASK, [examiner(), spec]) == ["t::x", REPRO]
    base = {REPRO: "failed", P2P: "passed", LEGACY: "failed"}
    gate = {REPRO: "passed", P2P: "passed", LEGACY: "failed"}
    req = AuditRequest.visible(
        TASK, attempt(), [examiner()], gate=run("gate", gate), baseline=run("baseline", base)
    )
    assert (req.must_pass, req.visible_only, req.oracle) == ([REPRO], True, None)
    audit = Gate().audit(req)
    assert (audit.verdict, audit.route, audit.visible_only) == (
        AuditVerdict.RESOLVED,
        Route.NONE,
        True,
    )
    assert "visible evidence only" in audit.report
    assert "## Must pass (the examiners' reproductions: 1 of 1 pass)" in audit.report
    assert not any(test in audit.report for test in F2P)
    still = AuditRequest.visible(
        TASK, attempt(), [examiner()], gate=run("gate", base), baseline=run("baseline", base)
    )
    assert Gate().audit(still).verdict == AuditVerdict.INEFFECTIVE


def test_a_visible_audit_without_reproductions_rests_on_regressions() -> None:
    base = {P2P: "passed"}
    req = AuditRequest.visible(
        TASK, attempt(), [], gate=run("gate", {P2P: "failed"}), baseline=run("baseline", base)
    )
    audit = Gate().audit(req)
    assert (audit.verdict, audit.route) == (AuditVerdict.REGRESSIONS, Route.CRAFT)
    assert "none given: the verdict rests on regressions alone" in audit.report


def test_visible_audits_never_carry_hidden_tests() -> None:
    with pytest.raises(ValueError, match="must not carry the oracle"):
        AuditRequest(
            task=TASK, oracle=ORACLE, attempt=attempt(), must_pass=[REPRO],
            gate=run("gate", {}), baseline=run("baseline", {}), visible_only=True,
        )  # fmt: skip
    with pytest.raises(ValueError, match="not an examiner"):
        reproductions(TASK, [attempt()])
    with pytest.raises(ValueError, match="attempt is for task other"):
        AuditRequest(
            task=TASK, attempt=attempt(task_id="other"), must_pass=[],
            gate=run("gate", {}), baseline=run("baseline", {}),
        )  # fmt: skip


# -- the gate for real -------------------------------------------------------------------------

BUGGY = "def middle(values):\n    ordered = sorted(values)\n    return ordered[len(ordered) // 2]\n"
FIXED = (
    "def middle(values):\n    ordered = sorted(values)\n    half = len(ordered) // 2\n"
    "    if len(ordered) % 2 == 0:\n        return (ordered[half - 1] + ordered[half]) / 2\n"
    "    return ordered[half]\n"
)
TOO_BROAD = (  # fixes even lengths, breaks odd ones
    "def middle(values):\n    ordered = sorted(values)\n    half = len(ordered) // 2\n"
    "    return (ordered[half - 1] + ordered[half]) / 2\n"
)
TESTS = "from mid.core import middle\n\n\ndef test_odd():\n    assert middle([3, 1, 2]) == 2\n"
FIX_TESTS = TESTS + "\n\ndef test_even():\n    assert middle([4, 1, 3, 2]) == 2.5\n"
LEGACY_TESTS = "from mid.core import middle\n\n\ndef test_empty():\n    assert middle([]) is None\n"
EXAMINED = "from mid.core import middle\n\n\ndef test_pair():\n    assert middle([1, 2]) == 1.5\n"


class Bench:
    """A one-bug repository, its task and oracle, and what the gate needs to run on it."""

    def __init__(self, root: Path, plugins: Plugins) -> None:
        repo = RepositoryBuilder(root / "repo")
        initial = repo.commit(
            "Initial",
            {
                "pyproject.toml": '[project]\nname = "mid"\nrequires-python = ">=3.9"\n',
                "src/mid/__init__.py": "",
                "src/mid/core.py": BUGGY,
                "tests/test_core.py": TESTS,
                "tests/test_legacy.py": LEGACY_TESTS,
            },
        )
        fix = repo.commit(
            "Fix middle of even-length lists (#1)",
            {"src/mid/core.py": FIXED, "tests/test_core.py": FIX_TESTS},
        )
        self.repo = repo.path
        self.task = Task(
            id=Task.id_for(fix), sha=fix, parent=initial, date="2023-11-14T23:13:20+00:00",
            title="Fix middle of even-length lists (#1)", issue=TaskIssue(number=1),
            source_files=["src/mid/core.py"], test_files=["tests/test_core.py"],
            changed_test_files=["tests/test_core.py"],
            added_tests=["tests/test_core.py::test_even"],
        )  # fmt: skip
        self.oracle = Oracle(
            task_id=self.task.id,
            status="ok",
            fail_to_pass=["tests/test_core.py::test_even"],
            pass_to_pass=["tests/test_core.py::test_odd"],
            fail_on_base=["tests/test_legacy.py::test_empty"],
        )
        self.settings = BoutSettings(
            project=ProjectSettings(source="src/mid", tests="tests"),
            environment=PluginChoice(name="interpreter"),
            sandbox=PluginChoice(name="bubblewrap"),
            root=self.repo,
        )
        self.home = root / "home"
        self.git = Git(self.repo)
        self.checkouts = Checkouts(self.git, self.home / "checkouts")
        self.base = self.checkouts.base(self.task.parent)
        self.environment: Environment = plugins.create("environment", "interpreter").build(
            EnvironmentRequest(
                project=self.settings.project, tree=self.checkouts.base(fix), home=self.home
            )
        )
        sandbox = plugins.create("sandbox", "bubblewrap")
        assert sandbox.problem() is None
        self.confine = confinement.test_confinement(self.settings, sandbox, self.home)
        self.workdirs = root / "attempts"

    def attempt(self, name: str, files: dict[str, str], **fields: object) -> Attempt:
        """What an agent leaves: its own working copy, edited, and the patch from it."""
        work = self.checkouts.working_copy(self.task.parent, self.workdirs / name)
        for path, text in files.items():
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_text(text)
        patch = diff_trees(self.base, work, source="src/mid", tests="tests")
        values: dict[str, object] = {
            "task_id": self.task.id, "contestant": name, "key": name, "agent": "command",
            "status": AttemptStatus.FINISHED, "patch": patch, "logdir": str(work),
        }  # fmt: skip
        return Attempt.model_validate(values | fields)

    def gate(
        self,
        attempt: Attempt,
        *,
        hidden: bool = True,
        examiners: Sequence[Attempt] = (),
        baseline: TestRun | None = None,
    ) -> tuple[TestRun, TestRun]:
        return run_gate(
            self.task,
            attempt,
            benches.Bench(
                self.checkouts,
                self.environment,
                self.settings.project,
                120,
                self.confine,
                ("tests",),
            ),
            tests=[self.settings.project.tests],
            hidden=hidden,
            examiners=examiners,
            baseline=baseline,
        )


@pytest.fixture
def bench(tmp_path: Path, plugins: Plugins) -> Iterator[Bench]:
    if not components.FOUND["bubblewrap"]():
        components.missing("bubblewrap", "the gate runs confined by bubblewrap")
    made = Bench(tmp_path, plugins)
    with made.git:
        yield made


def snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every entry under ``root``: its mode, modification time and content digest."""
    found: dict[str, tuple[int, int, str]] = {}
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(directory) / name
            info = path.lstat()
            content = (
                hashlib.sha256(path.read_bytes()).hexdigest()
                if path.is_file() and not path.is_symlink()
                else ""
            )
            found[str(path.relative_to(root))] = (info.st_mode, info.st_mtime_ns, content)
    return found


@pytest.mark.slow
def test_the_gate_on_real_trees_resolves_a_fix_and_catches_a_regression(bench: Bench) -> None:
    good = bench.attempt(
        "good",
        {
            "src/mid/core.py": FIXED,
            # the contestant's own test, failing: never applied, so never counted
            "tests/test_mine.py": "def test_mine():\n    assert False\n",
        },
    )
    broad = bench.attempt("broad", {"src/mid/core.py": TOO_BROAD})
    examined = bench.attempt(
        "examiner",
        {"tests/test_examined.py": EXAMINED},
        role="examiner",
        assignment="reproduce",
        reproductions=["tests/test_examined.py::test_pair"],
    )
    assert good.patch.tests and broad.patch.source
    given = [bench.repo, bench.base, *(bench.workdirs / name for name in ("good", "broad"))]
    given.append(bench.workdirs / "examiner")
    before = {path: snapshot(path) for path in given}

    gate, baseline = bench.gate(good)
    assert baseline.outcomes == {
        "tests/test_core.py::test_odd": Outcome.PASSED,
        "tests/test_core.py::test_even": Outcome.FAILED,
        "tests/test_legacy.py::test_empty": Outcome.FAILED,
    }
    assert gate.outcomes == baseline.outcomes | {"tests/test_core.py::test_even": Outcome.PASSED}
    auditor = Gate()
    resolved = auditor.audit(
        AuditRequest.hidden(bench.task, bench.oracle, good, gate=gate, baseline=baseline)
    )
    assert (resolved.verdict, resolved.route) == (AuditVerdict.RESOLVED, Route.NONE)
    assert resolved.pre_existing == ["tests/test_legacy.py::test_empty"]
    assert resolved.regressions == resolved.still_failing == []

    broad_gate, same = bench.gate(broad, baseline=baseline)  # the baseline is reused
    assert same is baseline
    broke = auditor.audit(
        AuditRequest.hidden(bench.task, bench.oracle, broad, gate=broad_gate, baseline=baseline)
    )
    assert (broke.verdict, broke.route) == (AuditVerdict.REGRESSIONS, Route.CRAFT)
    assert broke.regressions == ["tests/test_core.py::test_odd"]
    assert "- `tests/test_core.py::test_odd`: failed" in broke.report
    assert "The patch changed: `src/mid/core.py`." in broke.report

    # visible evidence only: the examiner's reproduction and the repository's own suite
    visible_gate, visible_base = bench.gate(good, hidden=False, examiners=[examined])
    assert set(visible_base.outcomes) == {
        "tests/test_core.py::test_odd",
        "tests/test_legacy.py::test_empty",
        "tests/test_examined.py::test_pair",
    }  # no hidden test ran
    assert visible_base.outcomes["tests/test_examined.py::test_pair"] == Outcome.FAILED
    visible = auditor.audit(
        AuditRequest.visible(bench.task, good, [examined], gate=visible_gate, baseline=visible_base)
    )
    assert (visible.verdict, visible.visible_only) == (AuditVerdict.RESOLVED, True)
    broad_visible, _ = bench.gate(broad, hidden=False, examiners=[examined], baseline=visible_base)
    narrowed = auditor.audit(
        AuditRequest.visible(
            bench.task, broad, [examined], gate=broad_visible, baseline=visible_base
        )
    )
    assert (narrowed.verdict, narrowed.route) == (AuditVerdict.REGRESSIONS, Route.CRAFT)
    assert "test_even" not in narrowed.report

    assert {path: snapshot(path) for path in given} == before
    assert list((bench.checkouts.cache_dir / "audits").iterdir()) == []


def test_an_empty_patch_costs_one_run_and_is_sent_back_to_craft(bench: Bench) -> None:
    empty = bench.attempt("empty", {})
    assert empty.patch.empty
    gate, baseline = bench.gate(empty)
    assert gate.outcomes == baseline.outcomes
    assert (gate.label, baseline.label) == ("gate", "baseline")
    audit = Gate().audit(
        AuditRequest.hidden(bench.task, bench.oracle, empty, gate=gate, baseline=baseline)
    )
    assert (audit.verdict, audit.route) == (AuditVerdict.EMPTY, Route.CRAFT)
