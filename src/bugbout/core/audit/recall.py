"""How close a patch is to the maintainers' own fix: the measures behind the report's
"How contaminated" section.

Both compare the *source* changes only (the tests a fix or an agent wrote are left
out), as diffs in ``git apply`` format, and both read only the changed lines:

- a diff's *changed lines* are the lines of its hunks that start with ``+`` or ``-``
  (the ``+++``/``---`` file headers are not in a hunk), each kept with its sign and with
  every run of whitespace in it collapsed to one space and the ends stripped; blank ones
  are dropped. Context lines are left out, so two diffs made with different context
  (git's and bugbout's) compare equal when they change the same lines.
- :func:`identical_line_ratio`: the Dice coefficient of the two multisets of changed
  lines, ``2 * |A ∩ B| / (|A| + |B|)``.
- :func:`five_gram_overlap`: each diff's changed lines, in order, become one stream of
  tokens: the line's sign, then its words (``\\w+``) and its other non-blank characters
  one by one (so spacing never matters); the result is the Dice coefficient of the two
  multisets of 5-grams (runs of five consecutive tokens). A stream shorter than five
  tokens is one n-gram, itself.

Both are 1 for two identical changes and 0 when nothing is shared; two empty changes
score 0 (nothing was written, so nothing was recalled).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import TypeVar

from bugbout.core.plumbing.trees.git import Git, diff_lines
from bugbout.core.store.records import Task

N = 5
"""The length of the token n-grams compared."""
_TOKEN = re.compile(r"\w+|[^\w\s]")
_Item = TypeVar("_Item", bound=Hashable)


def changed_lines(diff: str) -> list[str]:
    """The changed lines of ``diff``, in order: sign and whitespace-normalised text."""
    lines: list[str] = []
    for line in diff_lines(diff):
        text = " ".join(line[1:].split())
        if text:
            lines.append(f"{line[0]} {text}")
    return lines


def tokens(lines: Sequence[str]) -> list[str]:
    """The token stream of changed lines: each line's sign, then its tokens."""
    stream: list[str] = []
    for line in lines:
        stream.append(line[0])
        stream.extend(_TOKEN.findall(line[2:]))
    return stream


def ngrams(stream: Sequence[str], n: int = N) -> Counter[tuple[str, ...]]:
    """The multiset of ``n``-grams of ``stream`` (a shorter, non-empty stream is one)."""
    if not stream:
        return Counter()
    if len(stream) < n:
        return Counter([tuple(stream)])
    return Counter(tuple(stream[i : i + n]) for i in range(len(stream) - n + 1))


def dice(a: Counter[_Item], b: Counter[_Item]) -> float:
    """``2 * |a ∩ b| / (|a| + |b|)`` over multisets; 0 when both are empty."""
    total = a.total() + b.total()
    return 2 * (a & b).total() / total if total else 0.0


def identical_line_ratio(fix: str, patch: str) -> float:
    """The share of changed lines the two diffs have in common (Dice, 0 to 1)."""
    return dice(Counter(changed_lines(fix)), Counter(changed_lines(patch)))


def five_gram_overlap(fix: str, patch: str, n: int = N) -> float:
    """The overlap of the two diffs' token ``n``-grams (Dice, 0 to 1)."""
    a = ngrams(tokens(changed_lines(fix)), n)
    b = ngrams(tokens(changed_lines(patch)), n)
    return dice(a, b)


def fix_source_diff(git: Git, task: Task) -> str:
    """The maintainers' fix of ``task``, its source files only, as a diff."""
    if not task.source_files:
        return ""
    return git.run(
        "diff", "--no-color", "--no-renames", "--no-ext-diff", task.parent, task.sha, "--",
        *task.source_files,
    )  # fmt: skip
