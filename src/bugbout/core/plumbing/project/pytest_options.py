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
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

SELECTING = ("-m", "-k", "--ignore", "--ignore-glob", "--deselect")
"""The options that leave tests out; each takes one value."""
CONFIGURATIONS = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
"""The files pytest takes its configuration from, in the order it looks for them in a
folder: the first that holds pytest's settings is taken (a ``pytest.toml`` or a
``pytest.ini`` always does)."""
COLLECTED = ("python_files", "python_functions", "python_classes")
"""The settings that name what pytest collects as tests."""
READ_LIMIT = 1_000_000
"""The most bytes of a configuration file read."""


def selecting_options(root: Path) -> list[str]:
    """The test-selecting options in the ``addopts`` of the pytest configuration pytest
    would read at ``root``; empty when there is none or it cannot be read."""
    addopts = (_configuration(root.joinpath, [""]) or {}).get("addopts")
    try:
        if isinstance(addopts, str):
            tokens = shlex.split(addopts)
        else:
            tokens = [str(a) for a in addopts] if isinstance(addopts, list) else []
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


def collected_names(
    locate: Callable[[str], Path], targets: Sequence[str]
) -> list[list[str] | None]:
    """The ``python_files``, ``python_functions`` and ``python_classes`` patterns of the
    configuration pytest would read for a run of ``targets``, each ``None`` when it is not
    set; ``locate(path)`` is where a file of the tree lies (an overlay's may be above or
    below it)."""
    configuration = _configuration(locate, _searched(targets)) or {}
    return [_patterns(configuration.get(key)) for key in COLLECTED]


def _searched(targets: Sequence[str]) -> list[str]:
    """The folders pytest looks for its configuration in, in order, for a run of
    ``targets``: their common folder, then each above it, up to the tree's own."""
    folders = []
    for target in targets:
        path = PurePosixPath(target.split("::", 1)[0])
        if path.is_absolute() or ".." in path.parts:
            continue
        folders.append(path.parent if path.suffix == ".py" else path)
    common = PurePosixPath(os.path.commonpath(folders)) if folders else PurePosixPath()
    return [str(folder) for folder in (common, *common.parents) if str(folder) != "."] + [""]


def _patterns(value: object) -> list[str] | None:
    if isinstance(value, str):
        return value.split()
    return [str(item) for item in value] if isinstance(value, list) else None


def _configuration(
    locate: Callable[[str], Path], folders: Sequence[str]
) -> dict[str, object] | None:
    """pytest's settings in the first file of its configuration in ``folders`` (relative,
    searched in order; ``locate`` finds their files); ``None`` when there is none."""
    for folder in folders:
        for name in CONFIGURATIONS:
            text = _read(locate(str(PurePosixPath(folder, name))))
            table = _table(name, text) if text is not None else None
            if table is not None:
                return table
    return None


def _table(name: str, text: str) -> dict[str, object] | None:
    """pytest's settings in a configuration file named ``name``; ``None`` when it holds
    none (and pytest looks further)."""
    if name.endswith(".toml"):
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return None
        if name != "pyproject.toml":
            table = data.get("pytest")
            return table if isinstance(table, dict) else {}
        tool = data.get("tool")
        found = tool.get("pytest") if isinstance(tool, dict) else None
        if not isinstance(found, dict):
            return None
        native = {key: value for key, value in found.items() if key != "ini_options"}
        options = found.get("ini_options")
        return native or (options if isinstance(options, dict) else None)
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    section = "tool:pytest" if name == "setup.cfg" else "pytest"
    if parser.has_section(section):
        return dict(parser.items(section))
    return {} if name in ("pytest.ini", ".pytest.ini") else None


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
