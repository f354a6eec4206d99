"""Whether a drafted problem statement leaks the fix.

A draft leaks when it shows what the reporter's input did not: a line the fix added or
removed, a name only the fix introduces (one no English word is), a line of the hidden
tests, or a run of :data:`RUN` tokens of either that reads as code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from bugbout.core.mine.reported import fix_only, source_lines
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.store.records import Task

RUN = 8
"""The fewest tokens in a row a draft may not share with the fix or its tests."""
SHORTEST = 6
"""The fewest characters of a line that counts as shown."""
_TOKEN = re.compile(r"\w+|[^\w\s]")
_CODE = re.compile(r"[()\[\]{}=+\-*/<>%.:,'\"]")
_CODE_TOKENS = frozenset("()[]{}=+-*/<>%'\"")
_IDENTIFIER = re.compile(r"_|\d|[a-z][A-Z]")
"""A name no English word is: one with an underscore, a digit or a camel hump."""
_QUOTED = 60
"""The most characters of a leaked line a reason quotes."""


@dataclass(frozen=True)
class Secrets:
    """What an agent must not be told: the fix's lines, the names only it introduces,
    and the hidden tests' source."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    names: frozenset[str]
    tests: tuple[str, ...]

    @classmethod
    def of(cls, git: Git, task: Task, fix: tuple[list[str], set[str]] | None = None) -> Secrets:
        """The secrets of ``task``: its diff (code and tests) and its tests at the fix
        (``fix``: :func:`~bugbout.core.mine.reported.fix_only`'s answer, when known)."""
        added, names = fix or fix_only(git, task)
        paths = [*task.source_files, *task.changed_test_files]
        diff = git.run(
            "diff", "--no-color", "--no-ext-diff", "-U0", task.parent, task.sha, "--", *paths
        )
        removed = [line[1:] for line in diff.splitlines() if line.startswith("-")]
        removed = [line for line in removed if not line.startswith("-- ")]
        tests = []
        for path in dict.fromkeys([*task.test_files, *task.changed_test_files]):
            found = git.blob(task.sha, path)
            if found is not None:
                tests.append(found[1].decode("utf-8", "replace"))
        return cls(
            added=tuple(added),
            removed=tuple(source_lines(removed)),
            names=frozenset(names),
            tests=tuple(source_lines(tests)),
        )

    @cached_property
    def lines(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """What each kind of line is called, with those of its lines that count as
        shown: :data:`SHORTEST` characters or more, with code in them, flattened."""
        return tuple(
            (what, tuple(flat for flat in map(_flat, lines) if _counts(flat)))
            for what, lines in (
                ("a line the fix added", self.added),
                ("a line the fix removed", self.removed),
                ("a line of the hidden tests", self.tests),
            )
        )

    @cached_property
    def fix_runs(self) -> frozenset[tuple[str, ...]]:
        """The runs of :data:`RUN` tokens of the lines the fix added and removed."""
        return frozenset(_runs(_tokens((*self.added, *self.removed))))

    @cached_property
    def test_runs(self) -> frozenset[tuple[str, ...]]:
        """The runs of :data:`RUN` tokens of the hidden tests."""
        return frozenset(_runs(_tokens(self.tests)))

    def shown_in(self, text: str) -> bool:
        """Whether ``text``, written with nothing given, shows any of these."""
        return bool(leak(text, "", self))


def leak(draft: str, reported: str, secrets: Secrets) -> str:
    """Why ``draft`` leaks the fix beyond what ``reported`` (the model's input) showed,
    in one line; empty when it does not."""
    shown, known = _flat(draft), _flat(reported)
    for what, lines in secrets.lines:
        for flat in lines:
            if flat in shown and flat not in known:
                return f"it shows {what}: {flat[:_QUOTED]}"
    words = set(re.findall(r"\w+", draft)) - set(re.findall(r"\w+", reported))
    if named := sorted(name for name in words & secrets.names if _IDENTIFIER.search(name)):
        return f"it names {', '.join(named)}, which only the fix introduces"
    known_runs = set(_runs(_TOKEN.findall(reported)))
    runs = [run for run in _runs(_TOKEN.findall(draft)) if run not in known_runs and _is_code(run)]
    for what, secret in (("the fix", secrets.fix_runs), ("the hidden tests", secrets.test_runs)):
        if shared := next((run for run in runs if run in secret), None):
            return f"it repeats {RUN} tokens of {what}: {' '.join(shared)[:_QUOTED]}"
    return ""


def _counts(flat: str) -> bool:
    """Whether a line, flattened, is long enough and code enough to count as shown."""
    return len(flat) >= SHORTEST and _CODE.search(flat) is not None


def _flat(text: str) -> str:
    return " ".join(text.split())


def _tokens(lines: Iterable[str]) -> list[str]:
    return [token for line in lines for token in _TOKEN.findall(line)]


def _is_code(run: tuple[str, ...]) -> bool:
    """Whether ``run`` reads as code, not prose: two of its tokens are brackets, operators
    or quotes (a comment's words, or an ellipsis, are not)."""
    return sum(1 for token in run if token in _CODE_TOKENS) >= 2


def _runs(tokens: list[str]) -> list[tuple[str, ...]]:
    """Every :data:`RUN` tokens in a row of ``tokens``, in order."""
    return [tuple(tokens[start : start + RUN]) for start in range(len(tokens) - RUN + 1)]
