"""A static look at a patch's source changes: code a fix has no reason to contain (the
``pytest`` test runner's ``suspicious``; another runner inspects its own language).

:func:`inspect_patch` parses (``ast``) every Python file the patch added or modified in
the package, as it is in the patched tree, and flags what reaches into the test run
rather than fixing anything:

- importing or naming ``pytest``, ``_pytest`` or ``pluggy`` (a string naming them too, as
  ``importlib.import_module`` takes), or ``unittest``'s result and runner classes;
- reaching into the interpreter: ``sys.modules``, ``builtins`` (``__builtins__``),
  ``atexit``, ``os._exit``, ``sys.settrace``/``setprofile``, ``gc``'s object walks, its
  callers' frames (``sys._getframe``, ``inspect.stack``, ``f_back``: code that behaves
  differently when a test calls it);
- naming pytest's variables (``PYTEST_CURRENT_TEST``: code that knows it is tested);
- defining pytest hooks (``def pytest_...``) or ``pytest_plugins``;
- writing or deleting files while being imported (module level, or a function called
  from there);
- files the interpreter runs by name (``sitecustomize.py``, ``usercustomize.py``,
  ``*.pth``).

Only what the patch *adds* is flagged: a finding the file already had before the patch
(the same rule on the same name) is the project's own code. Each finding is one line,
``path:line: what``. Names built at run time from constants (``"mod" + "ules"``,
``"".join(...)``, ``chr(115)``, a reversed string, a module-level name bound to one) are
folded and judged as written, and ``compile`` under a file name is flagged. This is a
tripwire, not a proof: strings computed otherwise pass it; the canaries and the outcome
plugin (:mod:`bugbout.core.plumbing.tampering.canaries`) are what a run is judged on.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bugbout.core.plumbing.confinement.untrusted import UntrustedFileError, read_untrusted
from bugbout.core.plumbing.tampering.folding import Folder
from bugbout.core.store.race_records import ChangeArea, ChangeKind, FileChange
from bugbout.core.store.records import RunStatus, TestRun

READ_LIMIT = 5 * 1024 * 1024
"""The largest file inspected; a larger one is flagged as not inspected."""
TEST_RUNNERS = ("pytest", "_pytest", "pluggy")
UNITTEST_RESULTS = {"TestResult", "TextTestResult", "TextTestRunner", "result", "runner"}
INTERPRETER = {
    ("sys", "modules"): "reaches into sys.modules",
    ("sys", "settrace"): "sets a trace function",
    ("sys", "setprofile"): "sets a profile function",
    ("os", "_exit"): "calls os._exit",
    ("gc", "get_objects"): "walks the interpreter's objects",
    ("gc", "get_referrers"): "walks the interpreter's objects",
    ("gc", "get_referents"): "walks the interpreter's objects",
    ("sys", "_getframe"): "inspects its callers' frames",
    ("inspect", "stack"): "inspects its callers' frames",
    ("inspect", "currentframe"): "inspects its callers' frames",
    ("inspect", "getouterframes"): "inspects its callers' frames",
}
FLAGGED_MODULES = {"atexit": "uses atexit", "builtins": "reaches into builtins"}
STARTUP_FILES = ("sitecustomize.py", "usercustomize.py")
PATH_WRITES = {"write_text", "write_bytes", "unlink", "symlink_to", "hardlink_to", "touch"}
"""Methods that write or delete files whatever they are called on (``pathlib``'s)."""
ONE_PATH = {"rename", "replace"}
"""``Path.rename(target)``: one argument; ``str.replace(old, new)`` takes two."""
FILE_MODULES = ("os", "shutil")
MODULE_WRITES = {
    "remove", "unlink", "rename", "replace", "rmtree", "copy", "copy2", "copyfile",
    "copytree", "move", "symlink", "link", "truncate", "rmdir", "removedirs", "renames",
}  # fmt: skip
"""Functions of ``os`` and ``shutil`` that write or delete files."""
SENSITIVE = {
    "sys", "gc", "builtins", "__builtins__", "atexit", "inspect", "ctypes", "modules",
    "f_back", "f_locals", "f_globals", "co_filename", "__code__", "__globals__",
    "__closure__", "cell_contents", "exec", "eval", "compile",
} | {attribute for _, attribute in INTERPRETER}  # fmt: skip
"""Names that code built at run time gives itself away by (besides pytest's and
bugbout's own)."""


@dataclass(frozen=True)
class Finding:
    """One thing a file does that a fix has no reason to."""

    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def inspect_patch(tree: Path, base: Path | None, changes: Sequence[FileChange]) -> list[str]:
    """What the patch's source changes add that a fix has no reason to contain, one line
    each (``path:line: what``); ``tree`` is patched, ``base`` the tree before the patch."""
    found: list[Finding] = []
    for change in changes:
        if change.area != ChangeArea.SOURCE or change.kind == ChangeKind.DELETED:
            continue
        name = PurePosixPath(change.path).name
        if name in STARTUP_FILES or name.endswith(".pth"):
            found.append(Finding(change.path, 1, "the interpreter runs this file at startup"))
        if not change.path.endswith(".py") or change.symlink:
            continue
        text = _read(tree / change.path)
        if text is None:
            found.append(Finding(change.path, 1, "not inspected: not a regular file of "
                                                 f"at most {READ_LIMIT} bytes"))  # fmt: skip
            continue
        before = _read(base / change.path) if base is not None else None
        old = Counter(f.what for f in scan(change.path, before)) if before else Counter()
        for finding in scan(change.path, text):
            if old[finding.what]:
                old[finding.what] -= 1
            else:
                found.append(finding)
    return [str(finding) for finding in found]


def flag(run: TestRun, findings: Sequence[str]) -> TestRun:
    """``run``, ``tampered`` with ``findings`` among its reasons (unchanged without any)."""
    if not findings:
        return run
    reasons = [*run.tampering, *(f"the patch {finding}" for finding in findings)]
    return run.model_copy(update={"status": RunStatus.TAMPERED, "tampering": reasons})


def _read(path: Path) -> str | None:
    """A regular file's text, opened without following a link, at most READ_LIMIT bytes."""
    try:
        return read_untrusted(path, limit=READ_LIMIT)
    except UntrustedFileError:
        return None


def scan(path: str, text: str) -> list[Finding]:
    """Every finding in one Python file's ``text`` (none when it does not parse: it cannot
    be imported either)."""
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    found = [Finding(path, node.lineno, what) for node, what in _references(module)]
    found += [Finding(path, node.lineno, "writes files when imported") for node in _writes(module)]
    return sorted(set(found), key=lambda f: (f.line, f.what))


def _runner(name: str) -> bool:
    return name.split(".", 1)[0] in TEST_RUNNERS


def _names_runner(text: str) -> bool:
    """Whether a string is a dotted name of pytest's or pluggy's modules, or a name
    pytest gives (``PYTEST_CURRENT_TEST``)."""
    if not all(part.isidentifier() for part in text.split(".")):
        return False
    return _runner(text) or "pytest_" in text.lower()


def _references(module: ast.Module) -> Iterator[tuple[ast.stmt | ast.expr, str]]:
    """Imports, names, attributes and strings that reach into the test run, with names
    built at run time seen through (:mod:`bugbout.core.plumbing.tampering.folding`)."""
    folder = Folder(module)
    for node in ast.walk(module):
        built = folder.built(node) if isinstance(node, ast.expr) else None
        if isinstance(node, ast.expr) and built is not None and _sensitive(built):
            yield node, f"builds the name {built!r} at run time"
        if isinstance(node, ast.Call):
            yield from _dynamic(node, folder)
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _imported(node, alias.name, None)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                yield from _imported(node, node.module, alias.name)
        elif isinstance(node, ast.Attribute) and node.attr == "f_back":
            yield node, "inspects its callers' frames"
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            what = INTERPRETER.get((node.value.id, node.attr))
            if what:
                yield node, what
            if node.value.id == "unittest" and node.attr in UNITTEST_RESULTS:
                yield node, f"uses unittest.{node.attr}"
        elif isinstance(node, ast.Name) and node.id == "__builtins__":
            yield node, "reaches into builtins"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _names_runner(node.value):
                yield node, f"names {node.value}"
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.startswith("pytest_"):
                yield node, f"defines the pytest hook {node.name}"
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in node.targets
        ):
            yield node, "declares pytest_plugins"


def _sensitive(name: str) -> bool:
    lowered = name.lower()
    return (
        name in SENSITIVE
        or _names_runner(name)
        or any(word in lowered for word in ("pytest", "pluggy", "bugbout"))
    )


def _dynamic(call: ast.Call, folder: Folder) -> Iterator[tuple[ast.stmt | ast.expr, str]]:
    """What ``getattr(sys, name)``, ``import_module(name)``, ``__import__(name)`` and
    ``compile(..., filename)`` reach, their names folded."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    args = call.args
    if name in ("getattr", "setattr", "delattr", "hasattr") and len(args) > 1:
        attribute = folder.fold(args[1])
        if isinstance(args[0], ast.Name) and attribute is not None:
            what = INTERPRETER.get((args[0].id, attribute))
            if what:
                yield call, what
    elif name in ("__import__", "import_module") and args:
        module = folder.fold(args[0])
        if module is not None:
            yield from _imported(call, module, None)
    elif isinstance(func, ast.Name) and name == "compile" and len(args) > 1:  # not re's
        filename = folder.fold(args[1])
        if filename is None or not filename.startswith("<"):
            yield call, "compiles code under a file name"


def _imported(
    node: ast.stmt | ast.expr, module: str, name: str | None
) -> Iterator[tuple[ast.stmt | ast.expr, str]]:
    if _runner(module):
        yield node, f"imports {module}"
    elif module.split(".", 1)[0] in FLAGGED_MODULES:
        yield node, FLAGGED_MODULES[module.split(".", 1)[0]]
    elif module in ("unittest.result", "unittest.runner") or (
        module == "unittest" and name in UNITTEST_RESULTS
    ):
        yield node, f"imports unittest's {name or module.rsplit('.', 1)[-1]}"
    elif name is not None and (module, name) in INTERPRETER:
        yield node, INTERPRETER[(module, name)]


def _writes(module: ast.Module) -> Iterator[ast.Call]:
    """Calls that write or delete files among what runs when the module is imported: its
    top-level code (class bodies included) and the module's functions called from there."""
    functions = {
        node.name: node
        for node in module.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    pending: list[ast.AST] = [n for n in module.body if n not in functions.values()]
    called: set[str] = set()
    while pending:
        node = pending.pop()
        for call in _calls(node):
            if _is_write(call):
                yield call
            name = call.func.id if isinstance(call.func, ast.Name) else ""
            if name in functions and name not in called:
                called.add(name)
                pending.extend(functions[name].body)


def _calls(node: ast.AST) -> Iterator[ast.Call]:
    """Calls in ``node``, not looking into function bodies (they run when called)."""
    if isinstance(node, ast.Call):
        yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from _calls(child)


def _is_write(call: ast.Call) -> bool:
    if isinstance(call.func, ast.Attribute):
        attribute, receiver = call.func.attr, call.func.value
        if isinstance(receiver, ast.Name) and receiver.id in FILE_MODULES:
            return attribute in MODULE_WRITES
        if attribute in ONE_PATH:
            return len(call.args) + len(call.keywords) == 1
        return attribute in PATH_WRITES
    if isinstance(call.func, ast.Name) and call.func.id == "open":
        mode = call.args[1] if len(call.args) > 1 else None
        mode = next((k.value for k in call.keywords if k.arg == "mode"), mode)
        if mode is None:
            return False
        return not isinstance(mode, ast.Constant) or any(c in str(mode.value) for c in "wax+")
    return False
