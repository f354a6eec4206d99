"""What a project declares in a tree: its Python, runtime and test dependencies.

Declarations are read, never executed: ``setup.py`` is parsed with :mod:`ast`
(:mod:`bugbout.core.plumbing.project.setup_py`), and only literal values count. Which interpreter
runs them is :mod:`bugbout.core.plumbing.environments.interpreters`'s.
"""

from __future__ import annotations

import configparser
import copy
import functools
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from bugbout.core.plumbing.project import requirement_files
from bugbout.core.plumbing.project.requirement_files import read_requirements
from bugbout.core.plumbing.project.setup_py import setup_py_extras, setup_py_value

# -- dependencies ---------------------------------------------------------------------------


def declared_dependencies(tree: Path) -> list[str]:
    """The runtime dependencies the project declares in ``tree``, as PEP 508 strings.

    The first of ``pyproject.toml`` (PEP 621, then Poetry), ``setup.cfg`` and ``setup.py``
    that declares them wins; ``requirements.txt`` counts only when none does. Markers are
    kept verbatim.
    """
    pyproject = read_toml(tree / "pyproject.toml")
    for found in (
        _pep621_dependencies(tree, pyproject),
        _poetry_dependencies(pyproject),
        _setup_cfg_dependencies(tree),
        setup_py_value(tree / "setup.py", "install_requires"),
    ):
        if isinstance(found, list):
            return _unique(found)
    return _unique(read_requirements(tree / "requirements.txt"))


def declared_python(tree: Path) -> str | None:
    """The Python versions the project declares it supports in ``tree``, e.g. ``>=3.7``."""
    pyproject = read_toml(tree / "pyproject.toml")
    project = toml_table(pyproject, "project")
    if isinstance(project.get("requires-python"), str):
        return str(project["requires-python"]).strip() or None
    poetry_python = toml_table(pyproject, "tool", "poetry", "dependencies").get("python")
    if isinstance(poetry_python, str):
        return poetry_specifier(poetry_python) or None
    cfg = read_setup_cfg(tree / "setup.cfg")
    if cfg is not None and cfg.has_option("options", "python_requires"):
        return cfg.get("options", "python_requires").strip() or None
    value = setup_py_value(tree / "setup.py", "python_requires")
    return (value.strip() or None) if isinstance(value, str) else None


def declared_classifiers(tree: Path) -> list[str]:
    """The Python versions the project's trove classifiers name in ``tree`` (``"2.7"``,
    ``"3.4"``, ``"3"``), from ``pyproject.toml``, ``setup.cfg`` or a literal in
    ``setup.py``, the first that has classifiers."""
    pyproject = read_toml(tree / "pyproject.toml")
    found: object = toml_table(pyproject, "project").get("classifiers")
    if not isinstance(found, list):
        cfg = read_setup_cfg(tree / "setup.cfg")
        if cfg is not None and cfg.has_option("metadata", "classifiers"):
            found = cfg.get("metadata", "classifiers").splitlines()
    if not isinstance(found, list):
        found = setup_py_value(tree / "setup.py", "classifiers")
    versions = (
        re.fullmatch(r"\s*Programming Language :: Python :: (\d+(?:\.\d+)?)\s*", str(each))
        for each in (found if isinstance(found, list) else [])
    )
    return _unique(match.group(1) for match in versions if match)


def _pep621_dependencies(tree: Path, pyproject: Mapping[str, Any]) -> list[str] | None:
    project = toml_table(pyproject, "project")
    dependencies = project.get("dependencies")
    if isinstance(dependencies, list):
        return [str(d).strip() for d in dependencies if isinstance(d, str) and d.strip()]
    if "dependencies" in (project.get("dynamic") or ()):
        dynamic = toml_table(pyproject, "tool", "setuptools", "dynamic").get("dependencies")
        files = dynamic.get("file") if isinstance(dynamic, dict) else None
        if isinstance(files, str):
            files = [files]
        if isinstance(files, list):
            return [req for name in files for req in read_requirements(tree / str(name))]
    return None


def _poetry_dependencies(pyproject: Mapping[str, Any]) -> list[str] | None:
    poetry = toml_table(pyproject, "tool", "poetry")
    if not isinstance(poetry.get("dependencies"), dict):
        return None
    return _poetry_group(poetry)  # its main dependencies are laid out as a group's


def _poetry_requirement(name: str, value: Any) -> str | None:
    """One Poetry dependency as a PEP 508 string; ``None`` for optional or local ones."""
    if isinstance(value, str):
        return name + poetry_specifier(value)
    if not isinstance(value, dict) or value.get("optional") or "path" in value:
        return None
    extras = value.get("extras") or []
    base = name + (f"[{','.join(map(str, extras))}]" if extras else "")
    if "git" in value:
        ref = value.get("rev") or value.get("tag") or value.get("branch")
        requirement = f"{base} @ git+{value['git']}" + (f"@{ref}" if ref else "")
    elif "url" in value:
        requirement = f"{base} @ {value['url']}"
    else:
        requirement = base + poetry_specifier(str(value.get("version", "*")))
    markers = [str(value["markers"])] if value.get("markers") else []
    if isinstance(value.get("python"), str):
        python = poetry_specifier(value["python"])
        markers += [
            f'python_version {m.group(1)} "{m.group(2)}"'
            for m in re.finditer(r"(===|==|!=|~=|<=|>=|<|>)\s*([^,\s]+)", python)
        ]
    if markers:
        requirement += " ; " + " and ".join(f"({m})" for m in markers)
    return requirement


def poetry_specifier(constraint: str) -> str:
    """A Poetry version constraint (``^1.2``, ``~1.2``, ``*``) as a PEP 440 specifier.

    Alternatives (``||``) cannot be written in PEP 440 and become no constraint.
    """
    constraint = constraint.strip()
    if not constraint or constraint == "*" or "||" in constraint or "|" in constraint:
        return ""
    parts = []
    for part in re.split(r"\s*,\s*|\s+(?=[<>=!~^])", constraint):
        part = part.strip()
        if not part or part == "*":
            continue
        if part.startswith("^"):
            parts.append(_caret(part[1:].strip()))
        elif part.startswith("~") and not part.startswith("~="):
            parts.append(_tilde(part[1:].strip()))
        elif part[0].isdigit():
            parts.append(f"=={part}")
        else:
            parts.append(part)
    return ",".join(p for p in parts if p)


def release_numbers(version: str) -> list[int]:
    """The leading numbers of a version: ``3.10.2rc1`` is ``[3, 10, 2]``."""
    numbers = []
    for piece in version.split("."):
        match = re.match(r"\d+", piece)
        if not match:
            break
        numbers.append(int(match.group()))
    return numbers


def _caret(version: str) -> str:
    release = release_numbers(version)
    if not release:
        return ""
    index = next((i for i, n in enumerate(release) if n != 0), len(release) - 1)
    upper = [*release[:index], release[index] + 1]
    return f">={version},<{'.'.join(map(str, upper))}"


def _tilde(version: str) -> str:
    release = release_numbers(version)
    if not release:
        return ""
    upper = [release[0] + 1] if len(release) == 1 else [release[0], release[1] + 1]
    return f">={version},<{'.'.join(map(str, upper))}"


def _setup_cfg_dependencies(tree: Path) -> list[str] | None:
    cfg = read_setup_cfg(tree / "setup.cfg")
    if cfg is None or not cfg.has_option("options", "install_requires"):
        return None
    value = cfg.get("options", "install_requires").strip()
    if value.startswith("file:"):
        names = [n.strip() for n in value[len("file:") :].split(",")]
        return [req for name in names if name for req in read_requirements(tree / name)]
    found = []
    for line in value.splitlines():
        line = re.split(r"(^|\s)#", line, maxsplit=1)[0].strip()
        if line:
            found.append(line)
    return found


def read_setup_cfg(path: Path) -> configparser.RawConfigParser | None:
    if not path.is_file():
        return None
    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None
    return parser


def read_toml(path: Path) -> dict[str, Any]:
    """``path``'s TOML, ``{}`` when it cannot be read or parsed: the same bytes are parsed
    once (a task's environment is looked up from one ``pyproject.toml`` many times), a
    copy of its own each time."""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    return copy.deepcopy(_parsed_toml(data))


@functools.lru_cache(maxsize=16)
def _parsed_toml(data: bytes) -> dict[str, Any]:
    """``data`` parsed as TOML; ``{}`` when it is not."""
    try:
        return tomllib.loads(data.decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def toml_table(data: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    for key in keys:
        value = data.get(key)
        if not isinstance(value, dict):
            return {}
        data = value
    return dict(data)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(item.strip() for item in items if item.strip()))


# -- test dependencies ----------------------------------------------------------------------

TEST_GROUPS = ("test", "tests", "testing")
"""Names (PEP 503-normalised) of the extras and dependency groups that hold test dependencies."""
DEV_GROUPS = ("dev", "develop", "development", "devel", "ci")
"""Names of extras and groups that hold test dependencies when they name a test tool."""
TEST_TOOLS = ("pytest", "nose", "nose2", "mock", "hypothesis", "tox", "coverage")
"""Distributions (and ``pytest-*`` plugins) whose presence makes a dev group a test group."""

_REQUIREMENT = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*"
    r"(?:\[(?P<extras>[^\]]*)\])?\s*(?P<rest>.*)$",
    re.DOTALL,
)
_ARCHIVES = (".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")


def declared_test_dependencies(tree: Path, executed: Mapping[str, Any] | None = None) -> list[str]:
    """The test dependencies the project declares in ``tree``, as PEP 508 strings.

    The union, in this order, of: the ``test``, ``tests`` and ``testing`` extras, and the
    ``dev``-like ones (:data:`DEV_GROUPS`) that name a test tool (:data:`TEST_TOOLS`)
    (``[project.optional-dependencies]``, ``setup.cfg``'s ``[options.extras_require]``,
    ``setup.py``'s literal ``extras_require``); the dependency groups of those names (PEP
    735, with ``include-group`` resolved); Poetry's groups of those names; ``setup.py``'s
    literal ``tests_require``; the first test requirements file that exists, and the first
    development one when it names a test tool; ``tox.ini``'s ``[testenv]`` deps and extras
    (:mod:`bugbout.core.plumbing.project.requirement_files`). Markers are kept verbatim. A
    requirement of the project itself (``mypkg[yaml]``) stands for the extras it names,
    which are read in its place; local paths, editable installs and URLs are left out.
    ``executed`` holds the keywords of ``setup()`` from running ``setup.py``
    (:mod:`bugbout.core.truth.setup_run`): its ``extras_require`` and ``tests_require``
    then stand for the literal ones.
    """
    pyproject = read_toml(tree / "pyproject.toml")
    project = _normalise(project_name(tree) or "")
    extras = _declared_extras(tree, pyproject, executed)
    found: list[str] = []
    for group in _test_groups(extras):
        found += _requirements(extras.get(group, []), extras, project, {group})
    tables = {_normalise(k): v for k, v in toml_table(pyproject, "dependency-groups").items()}
    groups = {name: _dependency_group(tables, name, set()) for name in tables}
    for group in _test_groups(groups):
        found += _requirements(groups[group], extras, project, set())
    poetry_groups = {
        _normalise(k): _poetry_group(v)
        for k, v in toml_table(pyproject, "tool", "poetry", "group").items()
    }
    for group in _test_groups(poetry_groups):
        found += _requirements(poetry_groups[group], extras, project, set())
    tests_require = (
        executed.get("tests_require")
        if executed is not None
        else setup_py_value(tree / "setup.py", "tests_require")
    )
    if not isinstance(tests_require, str | list):
        tests_require = []
    if isinstance(tests_require, str):
        tests_require = tests_require.splitlines()
    found += _requirements(tests_require or [], extras, project, set())
    found += _requirements(requirement_files.test_requirements(tree), extras, project, set())
    dev = requirement_files.dev_requirements(tree)
    if any(map(_test_tool, dev)):
        found += _requirements(dev, extras, project, set())
    tox_deps, tox_extras = requirement_files.tox_requirements(tree)
    found += _requirements(tox_deps, extras, project, set())
    for extra in map(_normalise, tox_extras):
        found += _requirements(extras.get(extra, []), extras, project, {extra})
    return _unique(found)


def declared_names(tree: Path) -> set[str]:
    """The distributions (normalised names) the project in ``tree`` declares it needs, to
    run or to test."""
    requirements = declared_dependencies(tree) + declared_test_dependencies(tree)
    return {
        _normalise(found.group("name"))
        for found in map(_REQUIREMENT.match, requirements)
        if found is not None
    }


def _test_groups(groups: Mapping[str, list[str]]) -> list[str]:
    """The groups (by normalised name) that hold test dependencies, in :data:`TEST_GROUPS`
    then :data:`DEV_GROUPS` order."""
    tested = [name for name in TEST_GROUPS if name in groups]
    return tested + [
        name for name in DEV_GROUPS if name in groups and any(map(_test_tool, groups[name]))
    ]


def _test_tool(requirement: str) -> bool:
    match = _REQUIREMENT.match(requirement)
    name = _normalise(match.group("name")) if match else ""
    return name in TEST_TOOLS or name.startswith("pytest-")


def _normalise(name: str) -> str:
    """A distribution or extra name normalised as PEP 503 says: ``My_Pkg`` is ``my-pkg``."""
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def project_name(tree: Path) -> str | None:
    """The distribution name the project declares in ``tree``, as it writes it."""
    pyproject = read_toml(tree / "pyproject.toml")
    for name in (
        toml_table(pyproject, "project").get("name"),
        toml_table(pyproject, "tool", "poetry").get("name"),
    ):
        if isinstance(name, str) and name.strip():
            return name
    cfg = read_setup_cfg(tree / "setup.cfg")
    if cfg is not None and cfg.has_option("metadata", "name"):
        name = cfg.get("metadata", "name").strip()
        if name:
            return str(name)
    name = setup_py_value(tree / "setup.py", "name")
    return name if isinstance(name, str) and name.strip() else None


def project_version(tree: Path) -> str | None:
    """The version the project declares in ``tree`` as a literal, if it does (one computed
    at build time, by setuptools-scm say, is not)."""
    from packaging.version import InvalidVersion, Version

    pyproject = read_toml(tree / "pyproject.toml")
    found: list[object] = [
        toml_table(pyproject, "project").get("version"),
        toml_table(pyproject, "tool", "poetry").get("version"),
    ]
    cfg = read_setup_cfg(tree / "setup.cfg")
    if cfg is not None and cfg.has_option("metadata", "version"):
        found.append(cfg.get("metadata", "version").strip())
    found.append(setup_py_value(tree / "setup.py", "version"))
    for version in found:
        if isinstance(version, str):
            try:
                return str(Version(version))
            except InvalidVersion:
                continue
    return None


def _declared_extras(
    tree: Path, pyproject: Mapping[str, Any], executed: Mapping[str, Any] | None = None
) -> dict[str, list[str]]:
    """Every extra the project declares, by normalised name, from all the places it can."""
    extras: dict[str, list[str]] = {}

    def add(key: str, requirements: Iterable[Any]) -> None:
        name, _, marker = key.partition(":")  # setuptools' "extra:marker" keys
        if not name.strip():
            return  # ":marker" keys hold conditional install_requires, not an extra
        extras.setdefault(_normalise(name), []).extend(
            _with_marker(str(r).strip(), marker.strip())
            for r in requirements
            if isinstance(r, str) and r.strip()
        )

    for key, value in toml_table(pyproject, "project", "optional-dependencies").items():
        if isinstance(value, list):
            add(key, value)
    cfg = read_setup_cfg(tree / "setup.cfg")
    if cfg is not None and cfg.has_section("options.extras_require"):
        for key, value in cfg.items("options.extras_require"):
            add(key, _setup_cfg_list(tree, value))
    ran = executed.get("extras_require") if executed is not None else None
    from_setup_py = ran if isinstance(ran, dict) else setup_py_extras(tree / "setup.py")
    for key, requirements in from_setup_py.items():
        add(key, requirements.splitlines() if isinstance(requirements, str) else requirements)
    return extras


def _setup_cfg_list(tree: Path, value: str) -> list[str]:
    """A ``setup.cfg`` requirement list as setuptools reads it: lines, else ``;``-separated."""
    value = value.strip()
    if value.startswith("file:"):
        names = [n.strip() for n in value[len("file:") :].split(",")]
        return [req for name in names if name for req in read_requirements(tree / name)]
    lines = value.splitlines() if "\n" in value else value.split(";")
    found = []
    for line in lines:
        line = re.split(r"(^|\s)#", line, maxsplit=1)[0].strip()
        if line:
            found.append(line)
    return found


def _dependency_group(groups: Mapping[str, Any], name: str, seen: set[str]) -> list[str]:
    """A PEP 735 dependency group's requirements, its ``include-group`` entries resolved."""
    entries = groups.get(name)
    if name in seen or not isinstance(entries, list):
        return []
    seen.add(name)
    found: list[str] = []
    for entry in entries:
        if isinstance(entry, str):
            found.append(entry)
        elif isinstance(entry, dict) and isinstance(entry.get("include-group"), str):
            found += _dependency_group(groups, _normalise(entry["include-group"]), seen)
    return found


def _poetry_group(group: Any) -> list[str]:
    dependencies = group.get("dependencies") if isinstance(group, dict) else None
    if not isinstance(dependencies, dict):
        return []
    found: list[str] = []
    for name, value in dependencies.items():
        if name.lower() == "python":
            continue
        for constraint in value if isinstance(value, list) else [value]:
            requirement = _poetry_requirement(name, constraint)
            if requirement:
                found.append(requirement)
    return found


def _requirements(
    requirements: Iterable[str],
    extras: Mapping[str, list[str]],
    project: str,
    seen: set[str],
) -> list[str]:
    """Installable requirements: the project's own (``mypkg[yaml]``) become the extras they
    name (``seen`` stops cycles); local paths, editable installs and URLs are dropped."""
    found: list[str] = []
    for requirement in requirements:
        requirement = requirement.strip()
        if not _installable(requirement):
            continue
        match = _REQUIREMENT.match(requirement)
        if not (match and project and _normalise(match.group("name")) == project):
            found.append(requirement)
            continue
        marker = match.group("rest").partition(";")[2].strip()
        for extra in (match.group("extras") or "").split(","):
            extra = _normalise(extra)
            if not extra or extra in seen:
                continue
            inner = _requirements(extras.get(extra, []), extras, project, seen | {extra})
            found += [_with_marker(r, marker) for r in inner]
    return found


def _installable(requirement: str) -> bool:
    """Whether a requirement names a distribution on an index (no path, URL or option)."""
    head = requirement.partition(";")[0].strip()
    if not head or head.startswith(("-", ".", "/", "~", "file:")):
        return False
    if "://" in head or "@" in head or "/" in head or "\\" in head:
        return False
    return _REQUIREMENT.match(head) is not None and not head.lower().endswith(_ARCHIVES)


def _with_marker(requirement: str, marker: str) -> str:
    """``requirement`` that applies only where ``marker`` holds as well as its own marker."""
    if not marker:
        return requirement
    head, _, own = requirement.partition(";")
    if own.strip():
        return f"{head.strip()} ; ({own.strip()}) and ({marker})"
    return f"{head.strip()} ; {marker}"
