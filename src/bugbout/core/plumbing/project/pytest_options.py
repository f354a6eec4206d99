"""The options of a project's own pytest configuration that choose which tests run, and
the names it collects as tests.

bugbout runs pytest with ``--override-ini=addopts=``: a project's options may need
plugins the test environment lacks, or change what bugbout reads. Options that leave
tests out are another matter. A project that keeps its stress or slow tests out with
``addopts = "-m 'not stress'"`` would have them run in every test run of a bout, which
can turn minutes into hours. ``bugbout init`` carries them into ``project.pytest-args``.

``python_files``, ``python_functions`` and ``python_classes`` say which names pytest
collects as tests: the canaries of each run are named so that pytest collects them
(:mod:`bugbout.core.plumbing.tampering.naming`).
"""

from __future__ import annotations

import configparser
import os
import shlex
import stat
import tomllib
from collections.abc import Callable
from pathlib import Path

SELECTING = ("-m", "-k", "--ignore", "--ignore-glob", "--deselect")
"""The options that leave tests out; each takes one value."""
CONFIGURATIONS = (
    ("pytest.ini", "pytest"),
    ("pyproject.toml", None),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
)
"""The files pytest takes its configuration from, in the order it looks for them, and
their section (``None``: ``[tool.pytest.ini_options]``)."""
COLLECTED = ("python_files", "python_functions", "python_classes")
"""The settings that name what pytest collects as tests."""
READ_LIMIT = 1_000_000
"""The most bytes of a configuration file read."""


def selecting_options(root: Path) -> list[str]:
    """The test-selecting options in the ``addopts`` of the pytest configuration pytest
    would read at ``root``; empty when there is none or it cannot be read."""
    addopts = _setting(root.joinpath, "addopts")
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


def collected_names(locate: Callable[[str], Path]) -> list[list[str] | None]:
    """The ``python_files``, ``python_functions`` and ``python_classes`` patterns of the
    configuration pytest would read, each ``None`` when it is not set; ``locate(name)`` is
    where a file of the tree's top folder lies (an overlay's may be above or below it)."""
    return [_patterns(_setting(locate, key)) for key in COLLECTED]


def _patterns(value: str | list[object] | None) -> list[str] | None:
    if value is None:
        return None
    return value.split() if isinstance(value, str) else [str(item) for item in value]


def _setting(locate: Callable[[str], Path], key: str) -> str | list[object] | None:
    """``key`` from the first configuration file pytest takes in the folder ``locate``
    finds its files in."""
    for name, section in CONFIGURATIONS:
        text = _read(locate(name))
        if text is None:
            continue
        if section is None:
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError:
                continue
            options = data.get("tool", {}).get("pytest", {}).get("ini_options")
            if isinstance(options, dict):
                value = options.get(key)
                return value if isinstance(value, str | list) else None
            continue
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
        except configparser.Error:
            continue
        if parser.has_section(section):
            return parser.get(section, key, fallback=None)
    return None


def _read(path: Path) -> str | None:
    """A regular file's text, opened without following a link (the tree may be an
    agent's), at most ``READ_LIMIT`` bytes of it; ``None`` when it is not one."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return None
            return handle.read(READ_LIMIT).decode("utf-8")
        except (OSError, UnicodeError):
            return None
