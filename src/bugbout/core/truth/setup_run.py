"""Running a ``setup.py`` for its metadata, confined, when reading it is not enough.

:mod:`bugbout.core.plumbing.project.setup_py` reads literals only; a ``setup.py`` that builds
its extras by code (a comprehension, a helper, a file it reads) keeps them from that
reader. Here the script runs as ``setup.py`` would, in the test confinement (no
network, the tree its only writable place, none of your environment variables), with
``setup()`` replaced by a function that records its keywords and builds nothing. What it
prints is untrusted: one marked line within the first ``OUTPUT_LIMIT`` bytes, whose
values are kept only when they are strings, lists of strings or dicts of those.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.plumbing.confinement.process import run_script

TIMEOUT = 60.0
"""Seconds a ``setup.py`` may take to call ``setup()``."""
OUTPUT_LIMIT = 1_000_000
MARK = "BUGBOUT-SETUP-METADATA "
KEYWORDS = ("install_requires", "extras_require", "tests_require")
_STUB = f"""
import json, os, sys, types
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
    sys.stdout.write("\\n{MARK}" + json.dumps(found) + "\\n")
"""


def executed_setup_py(tree: Path, confine: Confine) -> dict[str, object] | None:
    """The keywords of ``KEYWORDS`` that ``tree/setup.py`` passes to ``setup()``, from
    running it confined; ``None`` when there is no ``setup.py`` or it did not get there."""
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
    return {key: found.get(key) for key in KEYWORDS} if isinstance(found, dict) else None
