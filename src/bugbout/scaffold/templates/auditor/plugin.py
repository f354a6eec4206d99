"""The ``__NAME__`` auditor: bugbout's test gate, with a shorter kill report.

An auditor classifies one patch (resolved, fixed-but-broke, partly-fixed, wrong-fix, no-fix)
from test runs bugbout has already made: the gate with the patch and the same gate on
the unfixed code. It runs nothing and never changes a tree. This one delegates the
classification to :func:`bugbout.auditors.make_audit`, listing fewer tests.
"""

from __future__ import annotations

from collections.abc import Iterator

from bugbout.auditors import Audit, AuditorPlugin, AuditRequest, Options, hookimpl, make_audit
from pydantic import Field


class __TITLE__Options(Options):
    """Options of the ``__NAME__`` auditor."""

    listed: int = Field(default=10, ge=1)
    """The most tests each section of the kill report lists."""


class __TITLE__Auditor:
    """The gate's verdict and route, with at most ``listed`` tests per section."""

    name = "__NAME__"

    def __init__(self, options: __TITLE__Options | None = None) -> None:
        self.options = options or __TITLE__Options()

    def audit(self, request: AuditRequest) -> Audit:
        audit, _ = make_audit(request, auditor=self.name, limit=self.options.listed)
        return audit


@hookimpl
def bugbout_auditors() -> Iterator[AuditorPlugin]:
    yield AuditorPlugin(
        name=__TITLE__Auditor.name,
        factory=__TITLE__Auditor,
        options=__TITLE__Options,
        description="the test gate, with a short kill report",
    )
