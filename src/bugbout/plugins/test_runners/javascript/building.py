"""The build steps a project's test script runs before its runner (``"test": "yarn build
&& mocha"``, or ``"pretest": "npm run build"``): tests that import the package's build
(``dist/``), or run compiled, need it made from the tree they test, so each run makes it
first, confined as the run is."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
from pathlib import Path

from bugbout.plugins.test_runners.javascript import script
from bugbout.test_runners import TestRunRequest, watch

STEP = r"(?:npm|pnpm|yarn)(?:\s+run)?\s+([\w:.-]+)"
"""A test script's step that runs one of the package's scripts (``yarn build``)."""
BUILDS = ("build", "compile", "prepare", "prepack")
"""How the scripts that build the package are named (``build``, ``build:cjs``)."""
RUN_SCRIPT = (
    "const path = require('path');"
    "const bins = (process.env.NODE_PATH || '').split(path.delimiter).filter(Boolean)"
    ".map((folder) => path.join(folder, '.bin'));"
    "process.env.PATH = [...bins, path.dirname(process.execPath), process.env.PATH]"
    ".join(path.delimiter);"
    "require('child_process').execSync(process.argv[1], { stdio: 'inherit' });"
)
"""Runs a script's command in a shell, the installation's programs on its ``PATH``, as
``npm run`` would."""
OUTPUT_LIMIT = 4000


def build_steps(tree: Path) -> list[str]:
    """The commands of the build scripts ``tree``'s ``package.json`` runs before its
    tests' runner, in order: those of its ``pretest`` script (``npm test`` runs it
    first), then those its ``test`` script runs before the runner (none when it runs
    none)."""
    named = script.scripts(tree)
    if "test" not in named:
        return []
    return [*_steps(named, named.get("pretest", "")), *_steps(named, named["test"])]


def _steps(scripts: dict[str, str], command: str) -> list[str]:
    """The commands of the build scripts ``command`` runs before anything else."""
    found: list[str] = []
    for step in command.split("&&"):
        named = re.fullmatch(STEP, step.strip())
        if named is None:  # the runner: what follows is the tests'
            break
        if named[1].startswith(BUILDS) and named[1] in scripts:
            found.append(scripts[named[1]])
    return found


def build(request: TestRunRequest, tree: Path) -> str:
    """Run the build steps of ``tree`` (see :func:`build_steps`), each confined and
    within the run's timeout; why the first that failed did, else empty."""
    for step in build_steps(tree):
        with tempfile.TemporaryDirectory(prefix="bugbout-build-") as home:
            command = request.environment.command(["-e", RUN_SCRIPT, step], tree, [])
            argv = command.argv
            if not command.contained:
                argv = request.confine(argv, tree, (Path(home),))
            env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": home, "TMPDIR": home}
            process = subprocess.Popen(
                argv,
                cwd=command.cwd,
                env={**env, "LANG": "C.UTF-8", **request.project.env, **command.env},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            watch(process)  # a stopped bout kills its group
            said: bytes | None = None
            try:
                said, _ = process.communicate(timeout=request.timeout)
            except subprocess.TimeoutExpired:
                pass
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)  # what it left running
                process.wait()
            if said is None:
                return f"the test script's build step `{step}` ran past {request.timeout:g} s"
            if process.returncode != 0:
                tail = said[-OUTPUT_LIMIT:].decode("utf-8", "replace")
                return (
                    f"the test script's build step `{step}` failed (exit code "
                    f"{process.returncode})\n{tail}"
                )
    return ""
