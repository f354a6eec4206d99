"""Scripted agents for the JavaScript demo bout (``bugbout demo --lang js``): they "fix"
the JavaScript example's bugs without any model and write their tests as the project
does (``node:test``'s ``describe`` and ``it``), so the demo runs offline and free. Each
reads its prompt on standard input and edits the checkout it runs in.

    python -m bugbout.example.javascript_agents correct|wrong|breaking|empty|examiner
"""

from __future__ import annotations

import sys
from pathlib import Path

from bugbout.example.agents import edit, play
from bugbout.example.javascript import (
    IMPORTS,
    MEAN_V1,
    MEAN_V2,
    MEDIAN_V1,
    MEDIAN_V2,
    NEGATIVE,
    describe,
    it,
)

FIXES = {
    "median": ("src/stats.js", MEDIAN_V1, MEDIAN_V2),
    "mean": ("src/stats.js", MEAN_V1, MEAN_V2),
    "negative": ("src/parse.js", NEGATIVE, ""),
}
"""Each bug's file, its buggy text and the text that fixes it."""

REGRESSION_TESTS = {
    "median": ("median", "{ median } from '../src/stats.js'",
               it("of an even-length list", "assert.equal(median([4, 1, 3, 2]), 2.5);")),
    "mean": ("mean", "{ mean } from '../src/stats.js'",
             it("of an empty list throws", "assert.throws(() => mean([]), RangeError);")),
    "negative": ("parseNumber", "{ parseNumber } from '../src/parse.js'",
                 it("of a negative number", "assert.equal(parseNumber('-2.5'), -2.5);")),
}  # fmt: skip
"""Each bug's test: the function it describes, what it imports, its ``it`` block."""

WRONG = {
    "median": ("src/stats.js", "[Math.floor(ordered.length / 2)]",
               "[Math.floor((ordered.length - 1) / 2)]"),
    "mean": ("src/stats.js", "/ values.length;", "/ (values.length || 1);"),
    "negative": ("src/parse.js", "Number(cleaned.slice(1))", "Math.abs(Number(cleaned.slice(1)))"),
}  # fmt: skip
"""Each bug's plausible change that does not fix it."""


def write_test(path: str, bug: str) -> None:
    """Write ``bug``'s regression test at ``path``."""
    name, imported, block = REGRESSION_TESTS[bug]
    Path(path).write_text(f"{IMPORTS}import {imported};\n\n{describe(name, block)}")


def correct(bug: str) -> None:
    path, buggy, fixed = FIXES[bug]
    edit(path, lambda text: text.replace(buggy, fixed))
    write_test(f"test/regression-{bug}.test.js", bug)
    print(f"Fixed the {bug} bug and added a regression test.")


def wrong(bug: str) -> None:
    """A plausible change that does not fix the bug, with a test that vouches for it."""
    path, before, after = WRONG[bug]
    edit(path, lambda text: text.replace(before, after))
    Path(f"test/mine-{bug}.test.js").write_text(
        f"{IMPORTS}{describe('my change', it('runs', 'assert.ok(true);'))}"
    )
    print(f"Changed the {bug} code; my test passes.")


def breaking(bug: str) -> None:
    """The right fix, plus a change that breaks a test the repository already had."""
    correct(bug)
    if bug == "negative":
        edit("src/parse.js", lambda text: text.replace(".replaceAll(',', '')", ""))
    else:
        edit(
            "src/stats.js",
            lambda text: text.replace(
                "  return ordered[middle];\n", "  return ordered[middle - 1];\n"
            ),
        )
    print("Also tidied up a neighbouring function.")


def empty(bug: str) -> None:
    print(f"I could not work out how to fix the {bug} bug.")


def examiner(bug: str) -> None:
    """Tests for exactly what the issue reports; no fix."""
    write_test(f"test/reproduce-{bug}.test.js", bug)
    print("Wrote a reproduction of the issue.")


ROLES = {"correct": correct, "wrong": wrong, "breaking": breaking, "empty": empty,
         "examiner": examiner}  # fmt: skip


def main() -> int:
    return play(ROLES, "python -m bugbout.example.javascript_agents")


if __name__ == "__main__":
    sys.exit(main())
