"""What a project's ``test`` script says besides its runner: the folders it names, the
environment variables it sets."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

ASSIGNMENT = re.compile(r"([A-Za-z_]\w*)=(.*)", re.S)
SETTERS = ("cross-env", "cross-env-shell")
"""Programs that set the variables they are given, then run the rest."""


def scripts(tree: Path) -> dict[str, str]:
    """The scripts of ``tree``'s ``package.json`` by name (none without one)."""
    try:
        found = json.loads((tree / "package.json").read_text(encoding="utf-8"))["scripts"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {name: command for name, command in found.items() if isinstance(command, str)}


def test_script(tree: Path) -> str:
    """The ``test`` script of ``tree``'s ``package.json`` (empty without one)."""
    return scripts(tree).get("test", "")


def words(tree: Path) -> list[list[str]]:
    """The words of each step of the test script (its parts between ``&&``)."""
    steps = []
    for step in test_script(tree).split("&&"):
        try:
            steps.append(shlex.split(step))
        except ValueError:
            continue
    return steps


def variables(tree: Path) -> dict[str, str]:
    """The variables the test script sets for the commands of its steps
    (``BABEL_ENV=commonjs jest``, ``cross-env NODE_ENV=test mocha``)."""
    found: dict[str, str] = {}
    for step in words(tree):
        for word in step[1:] if step[:1] and step[0] in SETTERS else step:
            assigned = ASSIGNMENT.fullmatch(word)
            if assigned is None:
                break
            found[assigned[1]] = assigned[2]
    return found
