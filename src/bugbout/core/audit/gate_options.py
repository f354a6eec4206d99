"""The options of the ``gate`` auditor, which the ``recall`` auditor extends."""

from __future__ import annotations

from pydantic import Field

from bugbout.core.audit.auditing import REPORT_LIMIT
from bugbout.core.contract.types import Options


class GateOptions(Options):
    """Options of the ``gate`` auditor."""

    max_listed: int = Field(default=REPORT_LIMIT, ge=1)
    """The most tests each section of the kill report lists (it may go into a prompt)."""
