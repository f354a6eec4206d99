"""Scripted agents for the demo bout: they "fix" the example repository's bugs without
any model, so the demo runs offline and free. Each reads its prompt on standard input
and edits the checkout it runs in (its working directory).

    python -m bugbout.example.agents correct|wrong|breaking|empty|examiner
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from bugbout.example import STATS_V2, STATS_V3

FIXES: dict[str, tuple[str, Callable[[str], str]]] = {
    "median": (
        "src/tally/stats.py",
        lambda text: STATS_V2 if "if not values" not in text else text,
    ),
    "mean": ("src/tally/stats.py", lambda text: STATS_V3),
    "negative": (
        "src/tally/parse.py",
        lambda text: text.replace(
            '    if text.startswith("-"):\n        return float(text[1:])\n', ""
        ),
    ),
}

REGRESSION_TESTS = {
    "median": "from tally.stats import median\n\n\ndef test_median_of_an_even_length_list():\n"
    "    assert median([4, 1, 3, 2]) == 2.5\n",
    "mean": "import pytest\n\nfrom tally.stats import mean\n\n\ndef test_mean_of_nothing():\n"
    "    with pytest.raises(ValueError):\n        mean([])\n",
    "negative": "from tally.parse import parse_number\n\n\ndef test_negative_number():\n"
    "    assert parse_number('-2.5') == -2.5\n",
}


def which_bug(prompt: str) -> str:
    """The example bug the prompt's issue describes."""
    lowered = prompt.lower()
    if "median" in lowered:
        return "median"
    if "mean(" in lowered or "empty" in lowered:
        return "mean"
    return "negative"


def edit(path: str, change: Callable[[str], str]) -> None:
    target = Path(path)
    target.write_text(change(target.read_text()))


def correct(bug: str) -> None:
    path, change = FIXES[bug]
    edit(path, change)
    Path(f"tests/test_regression_{bug}.py").write_text(REGRESSION_TESTS[bug])
    print(f"Fixed the {bug} bug and added a regression test.")


def wrong(bug: str) -> None:
    """A plausible change that does not fix the bug, with a test that vouches for it."""
    if bug == "median":
        edit(
            "src/tally/stats.py",
            lambda t: t.replace("[len(ordered) // 2]", "[(len(ordered) - 1) // 2]"),
        )
    elif bug == "mean":
        edit(
            "src/tally/stats.py",
            lambda t: t.replace(
                "    return sum(values) / len(values)",
                "    return sum(values) / (len(values) or 1)",
            ),
        )
    else:
        edit("src/tally/parse.py", lambda t: t.replace("float(text[1:])", "abs(float(text[1:]))"))
    Path(f"tests/test_mine_{bug}.py").write_text("def test_it_runs():\n    assert True\n")
    print(f"Changed the {bug} code; my test passes.")


def breaking(bug: str) -> None:
    """The right fix, plus a change that breaks a test the repository already had."""
    correct(bug)
    if bug == "negative":
        edit("src/tally/parse.py", lambda t: t.replace('.replace(",", "")', ""))
    else:
        edit(
            "src/tally/stats.py",
            lambda t: t.replace("    return ordered[middle]\n", "    return ordered[middle - 1]\n"),
        )
    print("Also tidied up a neighbouring function.")


def empty(bug: str) -> None:
    print(f"I could not work out how to fix the {bug} bug.")


def examiner(bug: str) -> None:
    """Tests for exactly what the issue reports; no fix."""
    Path(f"tests/test_reproduce_{bug}.py").write_text(REGRESSION_TESTS[bug])
    print("Wrote a reproduction of the issue.")


ROLES = {"correct": correct, "wrong": wrong, "breaking": breaking, "empty": empty,
         "examiner": examiner}  # fmt: skip


def play(roles: Mapping[str, Callable[[str], None]], usage: str) -> int:
    """Play the role of ``roles`` the command line names (``usage``: how it is run) on the
    bug the prompt on standard input describes."""
    if len(sys.argv) != 2 or sys.argv[1] not in roles:
        print(f"usage: {usage} {'|'.join(roles)}", file=sys.stderr)
        return 2
    roles[sys.argv[1]](which_bug(sys.stdin.read()))
    return 0


def main() -> int:
    return play(ROLES, "python -m bugbout.example.agents")


if __name__ == "__main__":
    sys.exit(main())
