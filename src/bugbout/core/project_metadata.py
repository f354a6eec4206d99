"""What a project declares in a tree: its Python, runtime and test dependencies; which
interpreter on this machine to test it with.

Declarations are read, never executed: ``setup.py`` is parsed with :mod:`ast`, and only
literal values count.
"""

from __future__ import annotations

import ast
import configparser
import functools
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from bugbout.core.errors import EnvironmentFailure

PYTHON_RELEASES: dict[str, str] = {
    "3.7": "2018-06-27",
    "3.8": "2019-10-14",
    "3.9": "2020-10-05",
    "3.10": "2021-10-04",
    "3.11": "2022-10-24",
    "3.12": "2023-10-02",
    "3.13": "2024-10-07",
    "3.14": "2025-10-07",
}
"""The date each Python 3 minor version was first released."""

MIN_PYTHON = (3, 7)
_PYENV_VERSION = re.compile(r"^(3)\.(\d+)\.(\d+)$")
_PATH_PYTHON = re.compile(r"^python(3)\.(\d+)$")


# -- dependencies ---------------------------------------------------------------------------


def declared_dependencies(tree: Path) -> list[str]:
    """The runtime dependencies the project declares in ``tree``, as PEP 508 strings.

    The first of ``pyproject.toml`` (PEP 621, then Poetry), ``setup.cfg`` and ``setup.py``
    that declares them wins; ``requirements.txt`` counts only when none does. Markers are
    kept verbatim.
    """
    pyproject = _read_toml(tree / "pyproject.toml")
    for found in (
        _pep621_dependencies(tree, pyproject),
        _poetry_dependencies(pyproject),
        _setup_cfg_dependencies(tree),
        _setup_py_value(tree / "setup.py", "install_requires"),
    ):
        if isinstance(found, list):
            return _unique(found)
    return _unique(read_requirements(tree / "requirements.txt"))


def declared_python(tree: Path) -> str | None:
    """The Python versions the project declares it supports in ``tree``, e.g. ``>=3.7``."""
    pyproject = _read_toml(tree / "pyproject.toml")
    project = _table(pyproject, "project")
    if isinstance(project.get("requires-python"), str):
        return str(project["requires-python"]).strip() or None
    poetry_python = _table(pyproject, "tool", "poetry", "dependencies").get("python")
    if isinstance(poetry_python, str):
        return poetry_specifier(poetry_python) or None
    cfg = _read_setup_cfg(tree / "setup.cfg")
    if cfg is not None and cfg.has_option("options", "python_requires"):
        return cfg.get("options", "python_requires").strip() or None
    value = _setup_py_value(tree / "setup.py", "python_requires")
    return (value.strip() or None) if isinstance(value, str) else None


def read_requirements(path: Path) -> list[str]:
    """Requirement lines of a requirements file, without options, includes or comments."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = []
    for line in text.replace("\\\n", " ").splitlines():
        line = re.split(r"(^|\s)#", line, maxsplit=1)[0].strip()
        line = re.split(r"\s--?[a-z]", line, maxsplit=1)[0].strip()  # per-line options
        if not line or line.startswith(("-", ".", "/", "file:")):
            continue
        found.append(line)
    return found


def _pep621_dependencies(tree: Path, pyproject: Mapping[str, Any]) -> list[str] | None:
    project = _table(pyproject, "project")
    dependencies = project.get("dependencies")
    if isinstance(dependencies, list):
        return [str(d).strip() for d in dependencies if isinstance(d, str) and d.strip()]
    if "dependencies" in (project.get("dynamic") or ()):
        dynamic = _table(pyproject, "tool", "setuptools", "dynamic").get("dependencies")
        files = dynamic.get("file") if isinstance(dynamic, dict) else None
        if isinstance(files, str):
            files = [files]
        if isinstance(files, list):
            return [req for name in files for req in read_requirements(tree / str(name))]
    return None


def _poetry_dependencies(pyproject: Mapping[str, Any]) -> list[str] | None:
    poetry = _table(pyproject, "tool", "poetry")
    dependencies = poetry.get("dependencies")
    if not isinstance(dependencies, dict):
        return None
    found: list[str] = []
    for name, value in dependencies.items():
        if name.lower() == "python":
            continue
        for constraint in value if isinstance(value, list) else [value]:
            requirement = _poetry_requirement(name, constraint)
            if requirement:
                found.append(requirement)
    return found


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


def _release(version: str) -> list[int]:
    numbers = []
    for piece in version.split("."):
        match = re.match(r"\d+", piece)
        if not match:
            break
        numbers.append(int(match.group()))
    return numbers


def _caret(version: str) -> str:
    release = _release(version)
    if not release:
        return ""
    index = next((i for i, n in enumerate(release) if n != 0), len(release) - 1)
    upper = [*release[:index], release[index] + 1]
    return f">={version},<{'.'.join(map(str, upper))}"


def _tilde(version: str) -> str:
    release = _release(version)
    if not release:
        return ""
    upper = [release[0] + 1] if len(release) == 1 else [release[0], release[1] + 1]
    return f">={version},<{'.'.join(map(str, upper))}"


def _setup_cfg_dependencies(tree: Path) -> list[str] | None:
    cfg = _read_setup_cfg(tree / "setup.cfg")
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


def _read_setup_cfg(path: Path) -> configparser.RawConfigParser | None:
    if not path.is_file():
        return None
    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None
    return parser


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def _table(data: Mapping[str, Any], *keys: str) -> dict[str, Any]:
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

TEST_REQUIREMENT_FILES = (
    "requirements-test.txt",
    "requirements-tests.txt",
    "test-requirements.txt",
    "tests/requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "requirements/testing.txt",
)
"""Requirement files of test dependencies; the first that exists counts."""

_REQUIREMENT = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*"
    r"(?:\[(?P<extras>[^\]]*)\])?\s*(?P<rest>.*)$",
    re.DOTALL,
)
_ARCHIVES = (".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")


def declared_test_dependencies(tree: Path) -> list[str]:
    """The test dependencies the project declares in ``tree``, as PEP 508 strings.

    The union, in this order, of: the ``test``, ``tests`` and ``testing`` extras
    (``[project.optional-dependencies]``, ``setup.cfg``'s ``[options.extras_require]``,
    ``setup.py``'s literal ``extras_require``); the dependency groups of those names (PEP
    735, with ``include-group`` resolved); Poetry's groups of those names; ``setup.py``'s
    literal ``tests_require``; the first test requirements file that exists (see
    :data:`TEST_REQUIREMENT_FILES`). Markers are kept verbatim. A requirement of the project
    itself (``mypkg[yaml]``) stands for the extras it names, which are read in its place;
    local paths, editable installs and URLs are left out.
    """
    pyproject = _read_toml(tree / "pyproject.toml")
    project = _normalise(_project_name(tree, pyproject) or "")
    extras = _declared_extras(tree, pyproject)
    found: list[str] = []
    for group in TEST_GROUPS:
        found += _requirements(extras.get(group, []), extras, project, {group})
    groups = {_normalise(k): v for k, v in _table(pyproject, "dependency-groups").items()}
    for group in TEST_GROUPS:
        found += _requirements(_dependency_group(groups, group, set()), extras, project, set())
    poetry_groups = {
        _normalise(k): v for k, v in _table(pyproject, "tool", "poetry", "group").items()
    }
    for group in TEST_GROUPS:
        found += _requirements(_poetry_group(poetry_groups.get(group)), extras, project, set())
    tests_require = _setup_py_value(tree / "setup.py", "tests_require")
    if isinstance(tests_require, str):
        tests_require = tests_require.splitlines()
    found += _requirements(tests_require or [], extras, project, set())
    for name in TEST_REQUIREMENT_FILES:
        if (tree / name).is_file():
            found += _requirements(read_requirements(tree / name), extras, project, set())
            break
    return _unique(found)


def _normalise(name: str) -> str:
    """A distribution or extra name normalised as PEP 503 says: ``My_Pkg`` is ``my-pkg``."""
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def _project_name(tree: Path, pyproject: Mapping[str, Any]) -> str | None:
    for name in (
        _table(pyproject, "project").get("name"),
        _table(pyproject, "tool", "poetry").get("name"),
    ):
        if isinstance(name, str) and name.strip():
            return name
    cfg = _read_setup_cfg(tree / "setup.cfg")
    if cfg is not None and cfg.has_option("metadata", "name"):
        name = cfg.get("metadata", "name").strip()
        if name:
            return str(name)
    name = _setup_py_value(tree / "setup.py", "name")
    return name if isinstance(name, str) and name.strip() else None


def _declared_extras(tree: Path, pyproject: Mapping[str, Any]) -> dict[str, list[str]]:
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

    for key, value in _table(pyproject, "project", "optional-dependencies").items():
        if isinstance(value, list):
            add(key, value)
    cfg = _read_setup_cfg(tree / "setup.cfg")
    if cfg is not None and cfg.has_section("options.extras_require"):
        for key, value in cfg.items("options.extras_require"):
            add(key, _setup_cfg_list(tree, value))
    for key, requirements in _setup_py_extras(tree / "setup.py").items():
        add(key, requirements)
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


# -- setup.py, parsed never run -------------------------------------------------------------


def _setup_py_value(path: Path, keyword: str) -> list[str] | str | None:
    """A literal ``setup(keyword=...)`` value from ``setup.py``; ``None`` if not literal."""
    parsed = _parse_setup_py(path)
    if parsed is None:
        return None
    source, module = parsed
    if module is None:
        return _setup_py_value_by_text(source, keyword)
    names = _module_assignments(module)
    node = _setup_argument(module, names, keyword)
    return None if node is None else _literal(node, names)


def _setup_py_extras(path: Path) -> dict[str, list[str]]:
    """The literal ``setup(extras_require={...})`` of ``setup.py``, extra by extra."""
    parsed = _parse_setup_py(path)
    if parsed is None:
        return {}
    source, module = parsed
    names: dict[str, ast.expr] = {}
    if module is None:
        node = _setup_py_expression_by_text(source, "extras_require")
    else:
        names = _module_assignments(module)
        node = _setup_argument(module, names, "extras_require")
    extras: dict[str, list[str]] = {}
    for key, value in (_literal_mapping(node, names) if node is not None else {}).items():
        literal = _literal(value, names)
        lines = literal.splitlines() if isinstance(literal, str) else literal
        if lines is not None:
            extras[key] = [
                line.strip() for line in lines if line.strip() and not line.strip().startswith("#")
            ]
    return extras


def _parse_setup_py(path: Path) -> tuple[str, ast.Module | None] | None:
    """``setup.py``'s source and its syntax tree (``None`` if Python 3 cannot parse it)."""
    try:
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    try:
        return source, ast.parse(source)
    except (SyntaxError, ValueError):
        return source, None


def _setup_argument(
    module: ast.Module, names: Mapping[str, ast.expr], keyword: str
) -> ast.expr | None:
    """The expression passed as ``keyword`` to ``setup()``, directly or in ``**kwargs``."""
    for node in ast.walk(module):
        if not (isinstance(node, ast.Call) and _callee_name(node.func) == "setup"):
            continue
        for argument in node.keywords:
            if argument.arg == keyword:
                return argument.value
            if argument.arg is None:  # setup(**kwargs)
                mapping = _literal_mapping(argument.value, names)
                if keyword in mapping:
                    return mapping[keyword]
    return None


def _setup_py_expression_by_text(source: str, keyword: str) -> ast.expr | None:
    """For a Python 2 ``setup.py``: the bracketed expression after ``keyword=``, parsed."""
    match = re.search(rf"\b{keyword}\s*=\s*(dict\s*\(|[{{\[(])", source)
    if not match:
        return None
    start = match.start(1)
    depth, quote, index = 0, "", start
    while index < len(source):
        char = source[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#":
            index = source.find("\n", index)
            if index < 0:
                return None
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                try:
                    return ast.parse(source[start : index + 1], mode="eval").body
                except (SyntaxError, ValueError):
                    return None
        index += 1
    return None


def _setup_py_value_by_text(source: str, keyword: str) -> list[str] | str | None:
    """For a ``setup.py`` Python 3 cannot parse (Python 2 code): find a literal by text."""
    pattern = rf"\b{keyword}\s*=\s*(\[[^\]]*\]|\([^)]*\)|'[^'\n]*'|\"[^\"\n]*\")"
    match = re.search(pattern, source)
    if not match:
        return None
    try:
        return _literal(ast.parse(match.group(1), mode="eval").body, {})
    except (SyntaxError, ValueError):
        return None


def _callee_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _module_assignments(module: ast.Module) -> dict[str, ast.expr]:
    names: dict[str, ast.expr] = {}
    for node in module.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            names[node.target.id] = node.value
    return names


def _literal(node: ast.expr, names: Mapping[str, ast.expr]) -> list[str] | str | None:
    if isinstance(node, ast.Name) and node.id in names:
        node = names[node.id]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.List | ast.Tuple):
        values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        if len(values) == len(node.elts) and all(isinstance(v, str) for v in values):
            return [str(v) for v in values]
    return None


def _literal_mapping(node: ast.expr, names: Mapping[str, ast.expr]) -> dict[str, ast.expr]:
    if isinstance(node, ast.Name) and node.id in names:
        node = names[node.id]
    if isinstance(node, ast.Dict):
        return {
            key.value: value
            for key, value in zip(node.keys, node.values, strict=True)
            if isinstance(key, ast.Constant) and isinstance(key.value, str)
        }
    if isinstance(node, ast.Call) and _callee_name(node.func) == "dict":
        return {kw.arg: kw.value for kw in node.keywords if kw.arg}
    return {}


# -- interpreters ---------------------------------------------------------------------------


def available_interpreters() -> dict[str, Path]:
    """Python 3.7+ interpreters on this machine, by minor version (``"3.9"``).

    Looks in pyenv's versions (the newest patch release of each minor version wins), then
    ``python3.X`` on ``PATH`` (skipping pyenv's shims), then the running interpreter.
    """
    found: dict[str, Path] = {}
    for version, path in (*_pyenv_interpreters(), *_path_interpreters(), _running()):
        found.setdefault(version, path)
    return dict(sorted(found.items(), key=lambda item: _version_tuple(item[0])))


def pyenv_root() -> Path | None:
    """pyenv's root directory, if pyenv is installed."""
    root = os.environ.get("PYENV_ROOT")
    if root and Path(root).is_dir():
        return Path(root)
    default = Path.home() / ".pyenv"
    if default.is_dir():
        return default
    pyenv = shutil.which("pyenv")
    if not pyenv:
        return None
    try:
        result = subprocess.run(
            [pyenv, "root"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    path = Path(result.stdout.strip())
    return path if result.returncode == 0 and path.is_dir() else None


def _pyenv_interpreters() -> Iterator[tuple[str, Path]]:
    root = pyenv_root()
    versions = root / "versions" if root else None
    if versions is None or not versions.is_dir():
        return
    found: dict[str, tuple[tuple[int, ...], Path]] = {}
    for entry in versions.iterdir():
        match = _PYENV_VERSION.match(entry.name)
        if not match:
            continue
        numbers = tuple(int(n) for n in match.groups())
        minor = f"{numbers[0]}.{numbers[1]}"
        binary = entry / "bin" / f"python{minor}"
        if numbers[:2] < MIN_PYTHON or not _executable(binary):
            continue
        if minor not in found or found[minor][0] < numbers:
            found[minor] = (numbers, binary)
    for minor, (_, binary) in found.items():
        yield minor, binary


def _path_interpreters() -> Iterator[tuple[str, Path]]:
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if not directory or "shims" in Path(directory).parts:
            continue
        try:
            entries = sorted(Path(directory).iterdir())
        except OSError:
            continue
        for entry in entries:
            match = _PATH_PYTHON.match(entry.name)
            if not match:
                continue
            numbers = (int(match.group(1)), int(match.group(2)))
            real = entry.resolve()
            if numbers < MIN_PYTHON or "shims" in real.parts or not _executable(real):
                continue
            yield f"{numbers[0]}.{numbers[1]}", real


def _running() -> tuple[str, Path]:
    major, minor = sys.version_info[:2]
    return f"{major}.{minor}", Path(sys.executable)


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(_release(version))


def choose_python(
    declared: str | None,
    fix_date: str | None,
    available: Mapping[str, Path],
    pinned: str | None,
) -> tuple[str, Path]:
    """The Python version (``"3.9"``) and interpreter to test a fix with.

    ``pinned`` wins. Otherwise, among the available versions the ``declared`` specifier
    allows, the newest released before ``fix_date``, else the oldest of them.
    """
    versions = sorted(available, key=_version_tuple)
    listing = ", ".join(versions) or "none"
    if pinned:
        minor = ".".join(pinned.strip().split(".")[:2])
        if minor in available:
            return minor, Path(available[minor])
        raise EnvironmentFailure(
            f"project.python is {pinned} but Python {minor} is not installed (available: "
            f"{listing}); install it, e.g. `pyenv install {minor}`"
        )
    candidates = [v for v in versions if _allows(declared, v)]
    if not candidates:
        raise EnvironmentFailure(
            f"the project declares Python {declared!r} at this fix but no installed Python "
            f"satisfies it (available: {listing}); install one, e.g. `pyenv install "
            f"<version>`, or set project.python"
        )
    if fix_date:
        day = fix_date.strip()[:10]
        released = [v for v in candidates if PYTHON_RELEASES.get(v, "9999") < day]
        if released:
            return released[-1], Path(available[released[-1]])
        return candidates[0], Path(available[candidates[0]])
    return candidates[-1], Path(available[candidates[-1]])


def _allows(declared: str | None, minor: str) -> bool:
    """Whether ``declared`` admits some release of ``minor`` (unparsable admits all)."""
    if not declared or not declared.strip():
        return True
    try:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet
    except ImportError:  # pragma: no cover - packaging is a dependency of pytest and uv
        return True
    try:
        specifier = SpecifierSet(declared.strip().replace(" ", "").rstrip(","))
    except InvalidSpecifier:
        return True
    return any(specifier.contains(v, prereleases=True) for v in (minor, f"{minor}.999"))


# -- the tree on PYTHONPATH -----------------------------------------------------------------


def python_path(tree: Path, import_root: str, extra_paths: Iterable[Path]) -> str:
    """``PYTHONPATH`` for running a tree's tests: ``extra_paths``, the import root, the tree.

    Entries are absolute (the tests run with the tree as working directory) and unique.
    """
    entries = [str(Path(p).absolute()) for p in (*extra_paths, tree / import_root, tree)]
    return os.pathsep.join(dict.fromkeys(entries))


@functools.lru_cache(maxsize=64)
def interpreter_version(interpreter: Path) -> str:
    """The full version of an interpreter, e.g. ``3.9.18`` (asked once per process)."""
    code = "import sys; sys.stdout.write('%d.%d.%d' % tuple(sys.version_info[:3]))"
    try:
        result = subprocess.run(
            [str(interpreter), "-c", code], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise EnvironmentFailure(f"Python interpreter {interpreter} cannot run: {exc}") from None
    if result.returncode != 0 or not re.fullmatch(r"\d+\.\d+\.\d+", result.stdout.strip()):
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise EnvironmentFailure(f"Python interpreter {interpreter} does not start: {last}")
    return result.stdout.strip()
