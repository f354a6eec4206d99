"""The stable API for auditor plugins: their record, ``hookimpl``, ``Options``, and the
request, the audit it returns and its verdict (a ``Score``), the gate's classification
and the similarity to the maintainers' fix.

An auditor plugin imports these names from here; ``bugbout.core`` is private and may
change in any release. Each name is imported the first time it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bugbout.core.contract.exports import lazy_exports

__all__ = [
    "Audit",
    "AuditRequest",
    "Auditor",
    "AuditorPlugin",
    "GateOptions",
    "NoOptions",
    "Options",
    "Score",
    "Similarity",
    "changed_lines",
    "classify",
    "create_plugin",
    "five_gram_overlap",
    "hookimpl",
    "identical_line_ratio",
    "is_empty",
    "kill_report",
    "make_audit",
    "verdict_for",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Audit": "bugbout.core.store.race_records",
        "AuditRequest": "bugbout.core.audit.auditing",
        "Auditor": "bugbout.core.audit.auditing",
        "AuditorPlugin": "bugbout.core.contract.types",
        "GateOptions": "bugbout.core.audit.gate_options",
        "NoOptions": "bugbout.core.contract.types",
        "Options": "bugbout.core.contract.types",
        "Score": "bugbout.core.store.race_records",
        "Similarity": "bugbout.core.store.race_records",
        "changed_lines": "bugbout.core.audit.recall",
        "classify": "bugbout.core.audit.auditing",
        "create_plugin": "bugbout.core.contract.manager",
        "five_gram_overlap": "bugbout.core.audit.recall",
        "hookimpl": "bugbout.core.contract.hookspecs",
        "identical_line_ratio": "bugbout.core.audit.recall",
        "is_empty": "bugbout.core.audit.auditing",
        "kill_report": "bugbout.core.audit.auditing",
        "make_audit": "bugbout.core.audit.auditing",
        "verdict_for": "bugbout.core.audit.auditing",
    },
)

if TYPE_CHECKING:
    from bugbout.core.audit.auditing import (
        Auditor,
        AuditRequest,
        classify,
        is_empty,
        kill_report,
        make_audit,
        verdict_for,
    )
    from bugbout.core.audit.gate_options import GateOptions
    from bugbout.core.audit.recall import changed_lines, five_gram_overlap, identical_line_ratio
    from bugbout.core.contract.hookspecs import hookimpl
    from bugbout.core.contract.manager import create_plugin
    from bugbout.core.contract.types import AuditorPlugin, NoOptions, Options
    from bugbout.core.store.race_records import Audit, Score, Similarity
