"""A history whose fixes add test modules with hostile file names.

Each fix adds a function to the package and a test module named with characters that
break line-based git parsing (newlines, tabs, quotes, backslashes, bytes that are not
UTF-8, a name that looks like ``cat-file`` output); one fix later extends one of those
modules, and the newest fix has a plain name. ``build`` returns, oldest first, each fix's
test module and the one test it adds, which mining must find exactly.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from bugbout.testing import RepositoryBuilder

NON_UTF8 = "tests/test_\udcff\udcfeweird.py"
"""Bytes 0xff 0xfe in the name: not UTF-8 (``os.fsdecode`` makes them surrogates)."""

NAMES = [
    "tests/test_new\nline.py",
    "tests/test_with space.py",
    "tests/test_tab\there.py",
    "tests/test_\"double\" 'single'.py",
    "tests/test_back\\slash \\x41.py",
    NON_UTF8,
    "tests/test_café.py",
    "tests/sub\ndir/test_deep.py",
    "tests/test_record\x1eunit\x1f.py",  # the separators a format string might use
    # a name laid out like cat-file's answer: "<id> <type> <size>" on its own line
    f"tests/test_\n{'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391'} blob 0\n.py",
]
"""The hostile test module names, in the order their fixes are committed."""

PLAIN = "tests/test_plain.py"


class Fix(NamedTuple):
    """One fix commit and the one test module it adds or extends."""

    sha: str
    name: str
    test: str
    """The id of the one test it adds: ``<name>::test_fix_<n>``."""
    content: bytes
    """The module's content in the fix."""


def module(number: int, *previous: int) -> str:
    """A test module whose tests check ``f<n>`` for ``previous`` and ``number``."""
    return "".join(
        f"def test_fix_{n}():\n    from calc.ops import f{n}\n\n    assert f{n}() == {n}\n\n\n"
        for n in (*previous, number)
    )


def build(path: Path) -> list[Fix]:
    """Build the repository; returns its fixes, oldest first."""
    repo = RepositoryBuilder(path)
    ops = "def base():\n    return 0\n"
    repo.commit(
        "Initial commit",
        {
            "pyproject.toml": '[project]\nname = "calc"\nrequires-python = ">=3.9"\n',
            "src/calc/__init__.py": "",
            "src/calc/ops.py": ops,
            "tests/test_base.py": "def test_base():\n    from calc.ops import base\n\n"
            "    assert base() == 0\n",
        },
    )
    fixes: list[Fix] = []
    steps = [(name, number, ()) for number, name in enumerate(NAMES, start=1)]
    steps.append((NAMES[0], len(NAMES) + 1, (1,)))  # extends the newline module
    steps.append((PLAIN, len(NAMES) + 2, ()))
    for name, number, previous in steps:
        ops += f"\n\ndef f{number}():\n    return {number}\n"
        content = module(number, *previous)
        sha = repo.commit(
            f"Fix f{number} returning nothing (#{number})\n\nBody\x1e{name}\x1f.",
            {"src/calc/ops.py": ops, name: content},
        )
        fixes.append(Fix(sha, name, f"{name}::test_fix_{number}", content.encode()))
    return fixes
