"""How a title is read (``bugbout.miners.TitleReading``): which titles declare that their
change keeps what the code does, in plain words or by their Conventional Commits type."""

from __future__ import annotations

import pytest

from bugbout.miners import DEFAULT_FIX_WORDS, TitleReading

READING = TitleReading.of(DEFAULT_FIX_WORDS)


@pytest.mark.parametrize(
    "title",
    [
        "Remove unused functions",
        "Remove unnecessary usage of OrderedSet from Nested field",
        "More complete tests for required field",
        "Better tests for b71aabb4f440",
        "Improve performance of attr.astuple (#1469)",
        "Minor typos",
        "Speedup of the parser",
        "stdlib: optimise the common case",
        "Document the pager, bump version",
        "Fix test commands",
        "Improve tests for the error on empty input",
        "Update version number and add tests",
        "Document and test FormattedString field",
        "Remove dead code and expand test coverage",
        "perf: multiply",
        "Fix typing in class_registry (#1574)",
        "Fix type hints of the prompt",
        "Typing improvements",
        "Fix mypy errors",
        "Issue 871: Add a fast path for sliding_window",
        "Get coverage to 100%",
    ],
)
def test_a_title_that_declares_the_same_behaviour(title: str) -> None:
    assert READING.keeps_behaviour(title)


@pytest.mark.parametrize(
    "title",
    [
        "Fix crash when removing unused handler",
        "Fix typo in the error message",
        "Fix test runner not saving caller env correctly",
        "Remove unused code that made the parser crash",
        "Add testing utilities",
        "Remove unused arguments and add a strict mode",
        "Warn about unused arguments",
        "Added tests for styling",
        "Expand test coverage",
        "Test the new strict mode",
        "Update tests for the new defaults",
        "Document the pager and add a test runner",
        "refactor!: take keywords",
        "perf: fix the slow path for zero",
        "Fix TypeError when loading a nested field",
        "Fix typing.get_type_hints crash on forward references",
        "Fix crash when typing into the prompt and add type hints",
        "Bugfix Issue 540 type annotations",
        "Issue 12: Fix crash on empty input",
        "Issue 870: counts parameter for sample",
    ],
)
def test_a_title_that_does_not(title: str) -> None:
    assert not READING.keeps_behaviour(title)


def test_the_words_are_a_setting() -> None:
    """Empty, only the Conventional Commits types are read; other words replace them."""
    for nothing in ([], ["", " "]):
        plain = TitleReading.of(DEFAULT_FIX_WORDS, same_behaviour_words=nothing)
        assert not plain.keeps_behaviour("Remove unused functions")
        assert not plain.keeps_behaviour("Add a strict mode")
        assert plain.keeps_behaviour("refactor: one expression")
    own = TitleReading.of(DEFAULT_FIX_WORDS, same_behaviour_words=["refactor", "add test"])
    assert own.keeps_behaviour("Minor refactors")
    assert own.keeps_behaviour("Added tests for styling")
    assert not own.keeps_behaviour("Remove unused functions")
