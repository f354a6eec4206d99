"""What a commit's title says of its change: whether it reads like a fix, and whether it
declares that the change keeps what the code does (a speedup, documentation, tests of
what the code already did), so no test can fail before it and pass after it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

INFLECTIONS = ("s", "es", "ed", "d", "ing", "ly")
"""Endings a fix word may take and still match: errors, crashes, incorrectly."""


DEFAULT_FIX_WORDS = (
    "fix", "fixes", "fixed", "fixing", "bug", "bugfix", "crash", "regression", "error",
    "fail", "fails", "failed", "failure", "failing", "broken", "incorrect", "wrong",
)  # fmt: skip
DEFAULT_SAME_BEHAVIOUR_TYPES = ("refactor", "perf", "test", "style", "docs", "chore", "ci", "build")
"""Conventional Commits types whose change keeps what the code does: no test fails before
it and passes after it."""
DEFAULT_SAME_BEHAVIOUR_WORDS = (
    "typo", "reformat", "speed up", "optimize", "optimise", "optimization", "optimisation",
    "performance", "improve performance", "remove unused", "remove dead", "remove unnecessary",
    "remove redundant", "document", "documentation", "docs", "bump", "update version",
    "version bump", "more test", "complete test", "better test", "improve test", "fix test",
    "typing", "type hint", "type annotation", "fix typing", "fix type hint",
    "fix type annotation", "fix mypy", "fix pyright", "fast path", "add a fast path",
    "get coverage", "increase coverage", "improve coverage", "full coverage",
)  # fmt: skip
"""Words that begin a title, or each of its clauses, when the change keeps what the code
does (the words of a phrase may be joined: ``speed up`` is ``speedup`` too); a phrase
ending in one of the :data:`_ASIDE` says the change is about the tests themselves, or
about what type checkers read (``Fix typing in class_registry``). Left out, as each lost
as many tasks with ground truth as it removed misses, or more (docs/mining.md):
``refactor``, ``rename``, ``add test`` (as a first clause), ``expand test``."""

_COMMIT_TYPE = r"\s*([A-Za-z]+)(?:\([^)]*\))?:"
"""A title's Conventional Commits type and scope (``perf(url):``); none with a ``!``."""
_CLAUSES = re.compile(r"\s*(?:[,;&+]|\.\s|\band\b|\balso\b)\s*", re.IGNORECASE)
"""Where a title's clauses part: ``Remove dead code and expand tests`` is two changes."""
_SCOPE = r"(?:[\w./#-]+(?:\s[\w./#-]+)?(?:\([^)]*\))?!?:\s*)?+"
"""A scope or type of one or two words before the clause (``stdlib: ...``, ``refactor!:
...``, ``Issue 871: ...``): the words after it say what the change is."""
_QUALIFIERS = (
    "a", "an", "the", "some", "more", "minor", "small", "tiny", "little", "few", "further",
    "general", "better", "complete", "additional", "extra", "code", "internal", "various",
)  # fmt: skip
"""Words that may come before the phrase: ``Minor typos``, ``More complete tests``."""
_TOOL_NOUNS = (
    "runner", "client", "utility", "utilities", "util", "utils", "helper", "harness", "mode",
    "framework", "tool", "support", "server", "app", "application",
)  # fmt: skip
"""Words after ``test`` that make it name something the project ships (``Fix test runner
...``, ``Add testing utilities``), not its tests."""
_ASIDE = ("test", "typing", "hint", "annotation", "mypy", "pyright")
"""Last words of a phrase about what the code's run does not read: its tests, its type
hints and their checkers. A fix that is about them alone fixes nothing a test can see."""
_ALONGSIDE = re.compile(
    rf"(?:(?:add|expand|extend|improve|increase|update)(?:s|es|ed|d|ing)?\s+"
    rf"(?:(?:{'|'.join(_QUALIFIERS)}|new|unit|regression)\s+)*)?"
    rf"test(?:s|ed|ing)?\b(?!\s+(?:{'|'.join(_TOOL_NOUNS)})s?\b)",
    re.IGNORECASE,
)
"""Tests added alongside a change that keeps behaviour, in a clause after its first
(``Update version number and add tests``, ``Remove dead code and expand test coverage``);
as the first clause they are no declaration (``Added tests for styling`` fixed a bug)."""


def fix_title_pattern(words: Iterable[str]) -> re.Pattern[str]:
    """A case-insensitive, word-boundary match on any of ``words``, or a word with one of
    the :data:`INFLECTIONS`."""
    alternatives = "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))
    endings = "|".join(INFLECTIONS)
    return re.compile(rf"\b(?:{alternatives})(?:{endings})?\b", re.IGNORECASE)


def commit_type(title: str) -> str:
    """The Conventional Commits type of ``title`` (``perf`` of ``perf(url): ...``), lower
    case; empty when it has none or marks a breaking change (``refactor!: ...``)."""
    found = re.match(_COMMIT_TYPE, title)
    return found[1].lower() if found else ""


@dataclass(frozen=True)
class TitleReading:
    """How titles are read: the fix words, and what declares the same behaviour (the
    Conventional Commits types, the words a clause begins with)."""

    fix: re.Pattern[str]
    same_behaviour_types: frozenset[str]
    same_behaviour: re.Pattern[str] | None
    """A clause that begins with a same-behaviour phrase; group ``aside`` when it ends in
    one of the :data:`_ASIDE`. ``None``: no words."""

    @classmethod
    def of(
        cls,
        fix_words: Iterable[str],
        same_behaviour_types: Iterable[str] = DEFAULT_SAME_BEHAVIOUR_TYPES,
        same_behaviour_words: Iterable[str] = DEFAULT_SAME_BEHAVIOUR_WORDS,
    ) -> TitleReading:
        """The reading of these settings (``miner.fix-words`` and the two below it)."""
        words = tuple(word for word in same_behaviour_words if word.split())
        return cls(
            fix=fix_title_pattern(fix_words),
            same_behaviour_types=frozenset(same_behaviour_types),
            same_behaviour=_clause_pattern(words) if words else None,
        )

    def is_fix(self, title: str) -> bool:
        """Whether ``title`` contains a fix word."""
        return bool(self.fix.search(title))

    def keeps_behaviour(self, title: str) -> bool:
        """Whether ``title`` declares a change that keeps what the code does: a title
        with no fix word by its Conventional Commits type, or when its first clause
        begins with a same-behaviour phrase and each other clause too or adds tests; a
        title with fix words only when each is in a clause about the tests or the type
        hints (``Fix test commands``, ``Fix typing in class_registry``)."""
        fix = self.is_fix(title)
        if not fix and commit_type(title) in self.same_behaviour_types:
            return True
        if self.same_behaviour is None:
            return False
        clauses = [part for part in _CLAUSES.split(title.strip()) if part]
        aside: list[bool] = []
        for index, clause in enumerate(clauses):
            match = self.same_behaviour.match(clause)
            if match is None and index and _ALONGSIDE.match(clause):
                aside.append(True)
            elif match is None:
                return False
            else:
                aside.append(match.groupdict().get("aside") is not None)
        return bool(clauses) and (
            not fix
            or all(
                apart for clause, apart in zip(clauses, aside, strict=True) if self.is_fix(clause)
            )
        )


def _clause_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """A clause that begins, after a scope and qualifiers, with one of ``words`` (each
    word of a phrase with one of the :data:`INFLECTIONS`); a phrase ending in one of the
    :data:`_ASIDE`, followed by neither one of the :data:`_TOOL_NOUNS` nor a ``.``
    (``typing.get_type_hints`` is code), is captured as ``aside``."""
    endings = "|".join(INFLECTIONS)

    def phrase(parts: list[str]) -> str:
        return r"[\s-]*".join(rf"{re.escape(part)}(?:{endings})?" for part in parts)

    split = sorted((w.lower().split() for w in words), key=lambda p: -len(" ".join(p)))
    aside = [p for p in split if p[-1] in _ASIDE]
    others = [p for p in split if p[-1] not in _ASIDE]
    qualifiers = "|".join(_QUALIFIERS)
    tools = "|".join(_TOOL_NOUNS)
    alternatives = []
    if aside:
        about = "|".join(phrase(p) for p in aside)
        alternatives.append(rf"(?P<aside>(?:{about})\b(?!\s+(?:{tools})s?\b|\.))")
    if others:
        alternatives.append(rf"(?:{'|'.join(phrase(p) for p in others)})\b")
    return re.compile(
        rf"{_SCOPE}(?:(?:{qualifiers})\s+)*(?:{'|'.join(alternatives)})", re.IGNORECASE
    )
