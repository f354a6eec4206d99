"""The test dependencies a project keeps outside its packaging metadata: requirement files
(``test-requirements.txt``, ``requirements-dev.txt`` and their kin) and tox's
``[testenv]`` ``deps`` and ``extras``. Read, never executed."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

TEST_REQUIREMENT_FILES = (
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements_test.txt",
    "requirements_tests.txt",
    "test-requirements.txt",
    "test_requirements.txt",
    "tests-requirements.txt",
    "tests/requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "requirements/testing.txt",
    "requirements/requirements-test.txt",
    "requirements/requirements-tests.txt",
)
"""Requirement files of test dependencies; the first that exists counts."""
DEV_REQUIREMENT_FILES = (
    "requirements-dev.txt",
    "requirements_dev.txt",
    "dev-requirements.txt",
    "dev_requirements.txt",
    "requirements/dev.txt",
    "requirements/development.txt",
    "requirements/requirements-dev.txt",
)
"""Requirement files of development tools; the first that exists counts when it names a
test tool."""
_FACTORS = re.compile(r"^(?P<factors>[\w.!,{}-]+)\s*:\s*(?P<value>[^:].*)$")
_PYTHON_FACTOR = re.compile(r"^!?(?:(?:py|pypy|python)\d*|\d+(?:\.\d+)?)$")
TOOL_FACTORS = frozenset(
    (
        "bandit", "bench", "benchmark", "benchmarks", "black", "build", "doc", "docs",
        "flake8", "format", "isort", "linkcheck", "lint", "manifest", "mypy", "pep8", "perf",
        "pylint", "readme", "release", "safety", "spelling", "style", "typing",
    )
)  # fmt: skip
"""tox factors of environments that run tools, not the tests: their deps are left out."""


def read_requirements(path: Path) -> list[str]:
    """Requirement lines of a requirements file, without options, includes or comments."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = []
    for line in text.replace("\\\n", " ").splitlines():
        line = re.split(r"\s--?[a-z]", _uncommented(line), maxsplit=1)[0].strip()  # options
        if not line or line.startswith(("-", ".", "/", "file:")):
            continue
        found.append(line)
    return found


def test_requirements(tree: Path) -> list[str]:
    """The requirements of the first test requirements file in ``tree``."""
    return _first(tree, TEST_REQUIREMENT_FILES)


def dev_requirements(tree: Path) -> list[str]:
    """The requirements of the first development requirements file in ``tree``."""
    return _first(tree, DEV_REQUIREMENT_FILES)


def tox_requirements(tree: Path) -> tuple[list[str], list[str]]:
    """The ``deps`` (with the files they include) and ``extras`` of ``tox.ini``'s test
    environments: ``[testenv]``, and each ``[testenv:NAME]`` whose commands run pytest
    (``[testenv:py3{8,11}-tests-{be,rich}]``: optional test dependencies the project tests
    in environments of their own).

    A line conditional on a factor counts unless a factor names a Python (``py27:``,
    ``3.13:``), or every factor names a tool's environment (``docs: sphinx``, ``perf:
    perf``: :data:`TOOL_FACTORS`): the others (``crypto: cryptography``) select optional
    test dependencies. Lines that need tox's substitutions (``{env:X}``) are left out."""
    parser = configparser.RawConfigParser()
    try:
        parser.read(tree / "tox.ini", encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return [], []
    sections = [
        section
        for section in parser.sections()
        if section == "testenv"
        or (section.startswith("testenv:") and _runs_pytest(parser, section))
    ]
    deps: list[str] = []
    extras: list[str] = []
    for section in sections:
        for line in _lines(parser, section, "deps"):
            line = line.replace("{toxinidir}/", "").replace("{toxinidir}", ".")
            include = re.match(r"^(?:-r\s*|--requirement[=\s]+)(?P<file>\S+)$", line)
            if include:
                deps += read_requirements(tree / include["file"])
            elif "{" not in line:
                deps.append(line)
        extras += [line for line in _lines(parser, section, "extras") if "{" not in line]
    return list(dict.fromkeys(deps)), list(dict.fromkeys(extras))


def _runs_pytest(parser: configparser.RawConfigParser, section: str) -> bool:
    """Whether a ``[testenv:NAME]`` section's commands run pytest (``py.test`` of old)."""
    commands = parser.get(section, "commands", fallback="")
    return re.search(r"\b(?:pytest|py\.test)\b", commands) is not None


def _lines(parser: configparser.RawConfigParser, section: str, option: str) -> list[str]:
    if not parser.has_option(section, option):
        return []
    found = []
    for line in parser.get(section, option).splitlines():
        line = _uncommented(line)
        if re.search(r"\{[^}]*:", line):  # a substitution such as {env:X}
            continue
        conditional = _FACTORS.match(line)
        if conditional:
            factors = [f.strip() for f in re.split(r"[,-]", conditional["factors"].strip("{}"))]
            if any(map(_PYTHON_FACTOR.match, factors)) or set(factors) <= TOOL_FACTORS:
                continue
            line = conditional["value"].strip()
        if line:
            found.append(line)
    return found


def _uncommented(line: str) -> str:
    return re.split(r"(^|\s)#", line, maxsplit=1)[0].strip()


def _first(tree: Path, names: tuple[str, ...]) -> list[str]:
    for name in names:
        if (tree / name).is_file():
            return read_requirements(tree / name)
    return []
