"""The ``gate`` auditor: the full test gate on a patch, every failure classified against
the unfixed code, a verdict and the route a retry re-enters by."""

from __future__ import annotations

from collections.abc import Iterator

from bugbout.auditors import Audit, AuditorPlugin, AuditRequest, GateOptions, hookimpl, make_audit


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
