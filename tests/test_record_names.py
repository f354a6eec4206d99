"""Test ids and file names in every record: plain JSON text when they are text, escaped
(and marked) only when they hold a byte that is not UTF-8, and records written before
that (format 1: every name escaped) read exactly."""

from __future__ import annotations

import ast
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

import bugbout
import name_history
from bugbout.core.plumbing.selection.affected import BaseRun, CoverageMap
from bugbout.core.report.report import Report
from bugbout.core.store.filenames import MARK, stored, unstored
from bugbout.core.store.race_records import Attempt, Audit, Examination, FileChange, Patch, Score
from bugbout.core.store.records import Oracle, OracleSet, Task, TaskIssue, TaskSet, TestRun
from bugbout.core.store.store import Store
from bugbout.core.store.verdict_records import (
    AuditSet,
    Cell,
    Job,
    Matrix,
    PatchResolution,
    ResolutionSet,
    TaskResolutions,
    Verdict,
    VerdictSet,
)

REGEX = "tests/test_a.py::test_re[\\d+]"
"""pytest's id for ``parametrize("pattern", [r"\\d+"])``: one backslash."""
NEWLINE = "tests/test_a.py::test_x[a\\nb]"
"""For the value ``"a\\nb"``: pytest writes the newline as backslash and ``n``."""
LETTER = "tests/test_a.py::test_u[\\u1555]"
BACKSLASH_FILE = "tests/test_back\\slash.py"
ODD = "tests/test_\udcff.py::test_x[a\\nb]"
"""In a module whose name holds the byte 0xff: not text."""
ODD_STORED = MARK + "tests/test_\\xff.py::test_x[a\\\\nb]"
IDS = [REGEX, NEWLINE, LETTER, ODD]


def _run() -> TestRun:
    return TestRun(
        label="before-1",
        status="ok",
        outcomes=dict.fromkeys(IDS, "failed"),
        failures=dict.fromkeys(IDS, "AssertionError"),
        crashes={REGEX: "crashed (signal 11)"},
        collection_errors={BACKSLASH_FILE: "ImportError"},
    )


def _audit() -> Audit:
    return Audit(
        task_id="t",
        contestant="c",
        auditor="a",
        verdict="partly-fixed",
        route="none",
        still_failing=IDS,
        regressions=IDS,
        pre_existing=IDS,
    )


def _records() -> dict[str, BaseModel]:
    task = Task(
        id="t",
        sha="s",
        parent="p",
        date="d",
        title="t",
        issue=TaskIssue(number=1),
        source_files=[BACKSLASH_FILE],
        test_files=[BACKSLASH_FILE],
        added_tests=IDS,
        modified_tests=IDS,
    )
    resolution = PatchResolution(
        task_id="t",
        contestant="c",
        score="resolved",
        fail_to_pass=dict.fromkeys(IDS, "passed"),
        pass_to_pass_failing=IDS,
        run=_run(),
    )
    oracle = Oracle(
        task_id="t",
        status="ok",
        fail_to_pass=IDS,
        pass_to_pass=IDS,
        unstable=IDS,
        fail_on_base=IDS,
        runs=[_run()],
    )
    return {
        "tasks.json": TaskSet(tasks=[task]),
        "job.json": Job(judge="j", auditor="a", started="s", tasks=TaskSet(tasks=[task])),
        "oracles.json": OracleSet(root={"t": oracle}),
        "attempt.json": Attempt(
            task_id="t",
            contestant="c",
            key="k",
            agent="x",
            status="finished",
            patch=Patch(files=[FileChange(path=BACKSLASH_FILE, kind="added", area="test")]),
            examination=Examination(
                assignment="reproduce", reproductions=IDS, rejected_tests=IDS, validation=_run()
            ),
            review=_audit(),
        ),
        "matrix.json": Matrix(
            task_id="t",
            patches=["c"],
            authors={"c": IDS},
            outcomes={"c": dict.fromkeys(IDS, "passed")},
            runs={"c": _run()},
        ),
        "verdicts.json": VerdictSet(
            root={
                "t": {
                    "p": Verdict(
                        task_id="t",
                        policy="p",
                        reason="r",
                        cells=[Cell(patch="c", test=i, outcome="passed") for i in IDS],
                    )
                }
            }
        ),
        "resolutions.json": ResolutionSet(root={"t": TaskResolutions(patches={"c": resolution})}),
        "score.json": resolution,
        "audits.json": AuditSet(root={"t": {"c": _audit()}}),
        "base.json": BaseRun(
            task_id="t",
            run=_run(),
            coverage=CoverageMap(
                files=[BACKSLASH_FILE],
                functions=[(0, 1)],
                traces=[[0]],
                tests=dict.fromkeys(IDS, 0),
            ),
        ),
    }


def _strings(value: object) -> Iterator[str]:
    """Every string in parsed JSON, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@pytest.mark.parametrize("name", list(_records()))
def test_every_record_holds_test_ids_as_json_text(name: str, tmp_path: Path) -> None:
    """Read with a plain JSON parser, a record holds pytest's own ids; only the id in a
    module whose name is not UTF-8 is escaped, and marked."""
    record = _records()[name]
    store = Store(tmp_path)
    store.write(name, record)
    parsed = json.loads(store.path(name).read_text(encoding="utf-8"))
    found = set(_strings(parsed))
    assert {REGEX, NEWLINE, LETTER, ODD_STORED} <= found
    assert not {s for s in found if "\\\\" in s and not s.startswith(MARK)}  # none doubled
    assert store.read(name, type(record)) == record


FORMAT_1 = Path(__file__).parent / "data" / "format1"
"""Records as bugbout wrote them before format 2: every name escaped, no ``format``."""
ODD_ID = "tests/test_\udcff.py::test_x[a\\nb]"


def test_records_written_before_are_read_exactly_and_rewritten_as_text(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.ensure()
    for name in ("oracles.json", "attempt.json", "job.json"):
        shutil.copy(FORMAT_1 / name, store.path(name))
    oracle = store.read("oracles.json", OracleSet).root["t"]  # type: ignore[union-attr]
    assert (oracle.fail_to_pass, oracle.pass_to_pass) == ([REGEX], [ODD_ID])
    assert oracle.runs[0].outcomes == {REGEX: "failed", ODD_ID: "passed"}
    assert oracle.runs[0].crashes == {REGEX: "crashed (signal 11)"}  # never escaped
    attempt = store.read("attempt.json", Attempt)
    assert attempt is not None and attempt.review is not None and attempt.examination
    examination = attempt.examination
    assert examination.validation is not None
    assert attempt.patch.files[0].path == BACKSLASH_FILE
    assert examination.reproductions == attempt.review.still_failing == [REGEX]
    assert examination.validation.crashes == {REGEX: "crashed (signal 11)"}
    job = store.read("job.json", Job)
    assert job is not None
    assert job.tasks.tasks[0].test_files == ["tests/test_\udcff.py"]
    assert job.tasks.tasks[0].added_tests == [REGEX]

    store.write("oracles.json", OracleSet(root={"t": oracle}))
    rewritten = json.loads(store.path("oracles.json").read_text(encoding="utf-8"))["t"]
    assert (rewritten["format"], rewritten["fail_to_pass"]) == (2, [REGEX])
    assert rewritten["pass_to_pass"] == [ODD_STORED]
    assert store.read("oracles.json", OracleSet).root["t"] == oracle  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "name",
    [
        *IDS,
        *name_history.NAMES,
        "plain.py",
        "\\",
        "\\xff",
        MARK,
        MARK + "a\\b",
        os.fsdecode(b"\x80\\\xc3"),
        "\udcc3\udca9",
    ],
)
def test_a_stored_name_is_itself_when_text_and_exact_always(name: str) -> None:
    text = stored(name)
    text.encode("utf-8")
    assert unstored(text) == name
    is_text = not any("\udc80" <= char <= "\udcff" for char in name)
    assert (text == name) == (is_text and not name.startswith(MARK))


EXAMINATIONS = Path(__file__).parent / "data" / "examinations"
"""Attempts as bugbout wrote them with an examiner's fields at the attempt's top level (the
demo's reproducer and a contestant; ``weak.json``, a reproducer with a test that passes on
the unfixed code), and the revision each had then."""
REVISIONS = {
    "reproducer.json": "8074af4851859d65",
    "correct.json": "a0444147502a6c3c",
    "weak.json": "0f2401fa43a6add9",
}
FLAT = ("assignment", "validation", "reproductions", "rejected_tests")


@pytest.mark.parametrize("name", list(REVISIONS))
def test_attempts_written_before_examinations_keep_their_values_and_revision(
    name: str, tmp_path: Path
) -> None:
    """An attempt written with its examiner fields at its top level reads with them in its
    ``examination`` (a contestant's: none), its revision unchanged, so the records built on
    it are reused; written again, it holds them there only."""
    written = json.loads((EXAMINATIONS / name).read_text(encoding="utf-8"))
    store = Store(tmp_path)
    store.ensure()
    shutil.copy(EXAMINATIONS / name, store.path(name))
    attempt = store.read(name, Attempt)
    assert attempt is not None and attempt.revision == REVISIONS[name]
    rest = {key: value for key, value in written.items() if key not in FLAT}
    assert json.loads(attempt.model_dump_json(exclude={"examination"})) == rest
    if written["role"] == "contestant":
        assert attempt.examination is None
    else:
        assert attempt.examination is not None
        assert attempt.examination == Examination.model_validate({f: written[f] for f in FLAT})
    store.write(name, attempt)
    again = json.loads(store.path(name).read_text(encoding="utf-8"))
    assert not set(FLAT) & set(again)
    assert store.read(name, Attempt) == attempt


def test_a_stored_attempt_has_no_examiner_field_outside_its_examination() -> None:
    assert not set(FLAT) & set(Attempt.model_fields)
    assert set(FLAT) == set(Examination.model_fields)


def test_no_two_classes_in_the_package_share_a_name() -> None:
    """A class's name says what it is, once: two classes of one name in bugbout are two
    things under one word (the scaffold's templates, placeholders to fill, aside)."""
    package = Path(bugbout.__file__).parent
    templates = package / "scaffold" / "templates"
    where: dict[str, list[str]] = {}
    for module in sorted(package.rglob("*.py")):
        if templates in module.parents:
            continue
        for node in ast.walk(ast.parse(module.read_bytes())):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(str(module.relative_to(package)))
    assert {name: found for name, found in where.items() if len(found) > 1} == {}


VERDICTS = Path(__file__).parent / "data" / "verdicts"
"""Records written when an audit's verdict had words of its own: an audit of each verdict
(``audits.json``) and the demo's report (``report.json``, ``bugbout.report/6``)."""
SAID_BEFORE = {
    "resolved": Score.RESOLVED,  # RESOLVED
    "regressions": Score.FIXED_BUT_BROKE,  # NOT_RESOLVED — regressions
    "partial": Score.PARTLY_FIXED,  # PARTIAL
    "ineffective": Score.WRONG_FIX,  # NOT_RESOLVED — fix ineffective
    "empty": Score.NO_FIX,  # NOT_RESOLVED — empty patch
    "tampered": Score.TAMPERED,  # TAMPERED
}


def test_audits_written_in_words_of_their_own_read_as_scores(tmp_path: Path) -> None:
    """An audit and a score say one thing in one word: an audit stored with the verdicts
    audits had reads as the score that says the same, every other value kept."""
    written = json.loads((VERDICTS / "audits.json").read_text(encoding="utf-8"))["t"]
    store = Store(tmp_path)
    store.ensure()
    shutil.copy(VERDICTS / "audits.json", store.path("audits.json"))
    found = store.read("audits.json", AuditSet)
    assert found is not None
    audits = found.root["t"]
    assert {name: audit.verdict for name, audit in audits.items()} == SAID_BEFORE
    for name, audit in audits.items():
        rest = {key: value for key, value in written[name].items() if key != "verdict"}
        assert json.loads(audit.model_dump_json(exclude={"verdict"})) == rest
    store.write("audits.json", found)
    again = json.loads(store.path("audits.json").read_text(encoding="utf-8"))["t"]
    assert {name: audit["verdict"] for name, audit in again.items()} == {
        name: score.value for name, score in SAID_BEFORE.items()
    }


def test_a_report_written_before_reads_its_audits_as_scores() -> None:
    """``bugbout compare`` reads reports of earlier bouts: their audits' verdicts read as
    scores, in the pages and in the auditors' counts."""
    report = Report.model_validate_json((VERDICTS / "report.json").read_bytes())
    pages = {
        (patch.name, patch.audit.verdict)
        for page in report.pages
        for patch in page.patches
        if patch.audit is not None
    }
    assert pages == {
        ("correct", Score.RESOLVED),
        ("breaking", Score.FIXED_BUT_BROKE),
        ("wrong", Score.WRONG_FIX),
        ("empty", Score.NO_FIX),
    }
    counts = {row.contestant: row.verdicts for row in report.merge_gate.audits}
    assert counts == {
        "breaking": {Score.FIXED_BUT_BROKE: 3},
        "correct": {Score.RESOLVED: 3},
        "empty": {Score.NO_FIX: 3},
        "wrong": {Score.WRONG_FIX: 3},
    }
