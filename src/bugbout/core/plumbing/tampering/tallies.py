"""pytest's own tally of a run, against the outcome stream's.

The outcome stream is written from inside pytest's process, where the code under test
runs too: a patch that wraps what writes it can turn a failure into a pass. pytest counts
the same reports on another path (its terminal reporter's statistics) and prints the
count as its last line (``1 failed, 4 passed in 0.21s``). A run whose stream reports
fewer failures or errors than pytest counted had its stream rewritten. The check only
ever adds suspicion: a run without that line (a quieter pytest, output cut short) is
judged on its other evidence.
"""

from __future__ import annotations

import re

_TALLY = re.compile(
    r"^=*\s*(?P<items>\d+ [\w ]+?(?:, \d+ [\w ]+?)*) in [\d.]+ ?s(?:econds)?\b.*?=*\s*$"
)
"""pytest's last line: counts by category, then the time (``seconds`` before pytest 5)."""
_ITEM = re.compile(r"^(\d+) ([\w ]+)$")


def pytest_tally(output: str) -> dict[str, int] | None:
    """The counts by category (``failed``, ``passed``, ``error``...) of the last tally
    line in pytest's ``output``; ``None`` when there is none."""
    for line in reversed(output.splitlines()):
        found = _TALLY.match(line.strip())
        if found is None:
            continue
        counts: dict[str, int] = {}
        for item in found["items"].split(", "):
            parts = _ITEM.match(item.strip())
            if parts is not None:
                word = parts[2].strip()
                word = "error" if word == "errors" else word
                counts[word] = counts.get(word, 0) + int(parts[1])
        return counts
    return None


def tally_mismatch(output: str, reports: list[dict[str, str]]) -> str | None:
    """Why the stream's ``reports`` cannot be what pytest ran, by its own ``output``:
    fewer failures, or fewer errors, than pytest counted; ``None`` when they agree or
    pytest printed no tally."""
    tally = pytest_tally(output)
    if tally is None:
        return None
    phases = [(report.get("when"), report.get("outcome")) for report in reports]
    failed = phases.count(("call", "failed"))
    errors = sum(
        phases.count(phase) for phase in (("setup", "failed"), ("teardown", "failed"))
    ) + phases.count(("collect", "error"))
    for word, recorded in (("failed", failed), ("error", errors)):
        if tally.get(word, 0) > recorded:
            return (
                f"pytest counted {tally[word]} {word} but bugbout's outcome stream reported "
                f"{recorded}: the code under test rewrote the stream"
            )
    return None
