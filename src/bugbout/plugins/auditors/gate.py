"""The ``gate`` auditor: the full test gate on a patch, every failure classified against
the unfixed code, a verdict and the route a retry re-enters by."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from bugbout import AuditorPlugin, hookimpl
from bugbout.core.audit.auditing import REPORT_LIMIT, AuditRequest, make_audit
from bugbout.core.contract.types import Options
from bugbout.core.store.records import Audit


class GateOptions(Options):
    """Options of the ``gate`` auditor."""

    max_listed: int = Field(default=REPORT_LIMIT, ge=1)
    """The most tests each section of the kill report lists (it may go into a prompt)."""


class Gate:
    """Classifies the gate's failures: still-failing must-pass tests, regressions, and
    pre-existing failures (not counted); never changes a tree."""

    name = "gate"

    def __init__(self, options: GateOptions | None = None) -> None:
        self.options = options or GateOptions()

    def audit(self, request: AuditRequest) -> Audit:
        audit, _ = make_audit(request, auditor=self.name, limit=self.options.max_listed)
        return audit


@hookimpl
def bugbout_auditors() -> Iterator[AuditorPlugin]:
    yield AuditorPlugin(
        name=Gate.name,
        factory=Gate,
        options=GateOptions,
        description="the full test gate, failures classified against the unfixed code",
    )
