"""Running a ``setup.py`` for its metadata, confined, when reading it is not enough.

:mod:`bugbout.core.plumbing.project.setup_py` reads literals only; a ``setup.py`` that builds
its extras by code (a comprehension, a helper, a file it reads) keeps them from that
reader. Here the script runs as ``setup.py`` would, in the test confinement (no
network, the tree its only writable place, none of your environment variables), with
``setup()`` replaced by a function that records its keywords and builds nothing. What it
prints is untrusted: one marked line within the first ``OUTPUT_LIMIT`` bytes, whose
values are kept only when they are strings, lists of strings or dicts of those.

The line also says what the script read (every file it opened for reading, every folder
it listed, from Python's audit events) and whether it started a process, for
:mod:`bugbout.core.truth.setup_cache` to key what it found by.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.plumbing.confinement.process import run_script

TIMEOUT = 60.0
"""Seconds a ``setup.py`` may take to call ``setup()``."""
OUTPUT_LIMIT = 1_000_000
MARK = "BUGBOUT-SETUP-METADATA "
KEYWORDS = ("install_requires", "extras_require", "tests_require")
SPAWNS = ("subprocess.", "os.exec", "os.posix_spawn", "os.spawn", "os.system", "os.fork")
"""Audit events of a process started (or forked): what it reads, no hook here sees."""
_STUB = f"""
import json, os, sys, types
read, listed, spawned = set(), set(), []
def _path(value):
    return os.path.abspath(os.fsdecode(value)) if isinstance(value, (str, bytes)) else None
def _reading(mode, flags):
    if isinstance(mode, str):
        return not set(mode) & set("wax+")
    return not flags & (os.O_WRONLY | os.O_RDWR)
def _watch(event, args):
    try:
        if event == "open" and _reading(args[1], args[2]):
            read.add(_path(args[0]))
        elif event in ("os.listdir", "os.scandir"):
            listed.add(_path(args[0] if args[0] is not None else "."))
        elif event.startswith({SPAWNS!r}):
            spawned.append(event)
    except Exception:
        read.add(None)
sys.addaudithook(_watch)
sys.dont_write_bytecode = True  # the tree as it was: a module it imports leaves nothing
captured = {{}}
def setup(**keywords):
    captured.update(keywords)
try:
    import setuptools
except Exception:
    setuptools = types.ModuleType("setuptools")
    setuptools.find_packages = lambda *a, **k: []
    setuptools.find_namespace_packages = lambda *a, **k: []
    setuptools.Extension = lambda *a, **k: None
    setuptools.Command = object
    sys.modules["setuptools"] = setuptools
setuptools.setup = setup
try:
    import distutils.core
    distutils.core.setup = setup
except Exception:
    pass
sys.argv = ["setup.py", "--name"]
sys.path.insert(0, os.getcwd())
path = os.path.abspath("setup.py")
with open(path, "rb") as handle:
    code = compile(handle.read(), path, "exec")
exec(code, {{"__name__": "__main__", "__file__": path}})
def plain(value):
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple, set)):
        return [item for item in value if isinstance(item, str)]
    if isinstance(value, dict):
        return {{str(k): plain(v) for k, v in value.items()}}
    return None
if captured:
    found = {{k: plain(captured.get(k)) for k in {KEYWORDS!r}}}
    inputs = {{"read": sorted(read, key=str), "listed": sorted(listed, key=str),
              "spawned": bool(spawned), "cwd": os.getcwd()}}
    sys.stdout.write("\\n{MARK}" + json.dumps({{"keywords": found, "inputs": inputs}}) + "\\n")
"""


@dataclass(frozen=True)
class SetupRun:
    """What a run of ``setup.py`` found, and what it read to find it (untrusted)."""

    keywords: dict[str, object]
    """The keywords of ``KEYWORDS`` it passed to ``setup()``."""
    read: list[str | None]
    """The absolute paths of the files it opened for reading (``None``: a file it opened
    by descriptor)."""
    listed: list[str | None]
    """The absolute paths of the folders it listed (``None``: by descriptor)."""
    spawned: bool
    """Whether it started a process (whose reads nothing here saw)."""
    cwd: str | None
    """Where it saw the tree (a container may show it elsewhere)."""


def executed_setup_py(tree: Path, confine: Confine) -> dict[str, object] | None:
    """The keywords of ``KEYWORDS`` that ``tree/setup.py`` passes to ``setup()``, from
    running it confined; ``None`` when there is no ``setup.py`` or it did not get there."""
    run = setup_py_run(tree, confine)
    return run.keywords if run is not None else None


def setup_py_run(tree: Path, confine: Confine) -> SetupRun | None:
    """:func:`executed_setup_py`, with what the script read."""
    if not (tree / "setup.py").is_file():
        return None
    argv = confine([sys.executable, "-I", "-c", _STUB], tree, ())
    ran = run_script(argv, tree, timeout=TIMEOUT, limit=OUTPUT_LIMIT)
    finished, text = ran.finished, ran.stdout
    if finished.exit_code != 0:
        return None
    line = next((part for part in reversed(text.split("\n")) if part.startswith(MARK)), None)
    if line is None:
        return None
    try:
        found = json.loads(line[len(MARK) :])
    except ValueError:
        return None
    if not isinstance(found, dict) or not isinstance(found.get("keywords"), dict):
        return None
    keywords, inputs = found["keywords"], found.get("inputs")
    inputs = inputs if isinstance(inputs, dict) else {}
    return SetupRun(
        keywords={key: keywords.get(key) for key in KEYWORDS},
        read=_paths(inputs.get("read")),
        listed=_paths(inputs.get("listed")),
        spawned=inputs.get("spawned") is not False,
        cwd=inputs["cwd"] if isinstance(inputs.get("cwd"), str) else None,
    )


def _paths(value: object) -> list[str | None]:
    """A list of paths as the script wrote it; ``[None]`` (nothing to key by) otherwise."""
    if not isinstance(value, list):
        return [None]
    return [item if isinstance(item, str) else None for item in value]
