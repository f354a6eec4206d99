"""What a project declares in a tree: its Python and runtime dependencies; which
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


# -- setup.py, parsed never run -------------------------------------------------------------


def _setup_py_value(path: Path, keyword: str) -> list[str] | str | None:
    """A literal ``setup(keyword=...)`` value from ``setup.py``; ``None`` if not literal."""
    try:
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError):
        return _setup_py_value_by_text(source, keyword)
    names = _module_assignments(module)
    for node in ast.walk(module):
        if not (isinstance(node, ast.Call) and _callee_name(node.func) == "setup"):
            continue
        for argument in node.keywords:
            if argument.arg == keyword:
                return _literal(argument.value, names)
            if argument.arg is None:  # setup(**kwargs)
                mapping = _literal_mapping(argument.value, names)
                if keyword in mapping:
                    return _literal(mapping[keyword], names)
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
