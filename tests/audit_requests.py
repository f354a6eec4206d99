"""A hand-made task, its ground truth and a patch, and the audit requests built from test runs
on them."""

from __future__ import annotations

from bugbout.core.audit.auditing import AuditRequest
from bugbout.core.store.race_records import (
    Attempt,
    AttemptStatus,
    ChangeArea,
    ChangeKind,
    FileChange,
    Patch,
)
from bugbout.core.store.records import Oracle, RunStatus, Task, TaskIssue, TestRun

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
