"""The options of a project's own pytest configuration that choose which tests run.

bugbout runs pytest with ``--override-ini=addopts=``: a project's options may need
plugins the test environment lacks, or change what bugbout reads. Options that leave
tests out are another matter. A project that keeps its stress or slow tests out with
``addopts = "-m 'not stress'"`` would have them run in every test run of a bout, which
can turn minutes into hours. ``bugbout init`` carries them into ``project.pytest-args``.
"""

from __future__ import annotations

import configparser
import shlex
import tomllib
from pathlib import Path

SELECTING = ("-m", "-k", "--ignore", "--ignore-glob", "--deselect")
"""The options that leave tests out; each takes one value."""


def selecting_options(root: Path) -> list[str]:
    """The test-selecting options in the ``addopts`` of the pytest configuration pytest
    would read at ``root``; empty when there is none or it cannot be read."""
    addopts = _addopts(root)
    if addopts is None:
        return []
    try:
        tokens = shlex.split(addopts) if isinstance(addopts, str) else [str(a) for a in addopts]
    except ValueError:
        return []
    kept: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        name, equals, _ = token.partition("=")
        if token in SELECTING and index < len(tokens):
            kept += [token, tokens[index]]
            index += 1
        elif equals and name in SELECTING and name.startswith("--"):
            kept.append(token)
        elif token[:2] in ("-m", "-k") and len(token) > 2 and not token.startswith("--"):
            kept += [token[:2], token[2:]]
    return kept


def _addopts(root: Path) -> str | list[object] | None:
    """``addopts`` from the first configuration file pytest takes at ``root``."""
    for name, section in (
        ("pytest.ini", "pytest"),
        ("pyproject.toml", None),
        ("tox.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
    ):
        path = root / name
        if not path.is_file():
            continue
        if section is None:
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeError, tomllib.TOMLDecodeError):
                continue
            options = data.get("tool", {}).get("pytest", {}).get("ini_options")
            if isinstance(options, dict):
                value = options.get("addopts")
                return value if isinstance(value, str | list) else None
            continue
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, UnicodeError):
            continue
        if parser.has_section(section):
            return parser.get(section, "addopts", fallback=None)
    return None
