"""A stopped bout kills a JavaScript run's build and runner: each starts in a process
group of its own, handed to the stop (uuid's build script outlived an interrupted
``bugbout tasks``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from bugbout.core.plumbing.runtime.stopping import Stop
from bugbout.plugins.test_runners.javascript import node_test
from test_js_runs import _run, _written

pytestmark = [pytest.mark.slow, pytest.mark.requires("js-runners")]

TEST = "const { it } = require('node:test');\n\nit('waits', () => {});\n"


def _live(marker: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, check=False, text=True)
    return [int(pid) for pid in found.stdout.split()]


@pytest.mark.parametrize("where", ["build", "test"])
def test_a_killed_stop_kills_the_run_s_build_and_runner(where: str, tmp_path: Path) -> None:
    marker = f"bugbout-js-stop-{os.getpid()}-{where}"
    sleeps = f'node -e "setTimeout(() => {{}}, 600000)" {marker}'
    build = sleeps if where == "build" else "node -e 0"
    scripts = {"build": build, "test": "npm run build && node --test test/"}
    waits = f"{TEST}require('child_process').execSync('{sleeps}');\n"
    files = {
        "package.json": json.dumps({"name": "tiny", "private": True, "scripts": scripts}),
        "src/core.js": "module.exports = {};\n",
        "test/wait.test.js": waits if where == "test" else TEST,
    }
    tree = _written(tmp_path / "tree", files)
    runs: list[Any] = []
    stop = Stop(grace=0, notify=lambda _: None)
    try:
        with stop.installed():
            worker = threading.Thread(
                target=lambda: runs.append(_run(node_test.NodeTest(), tree, tmp_path, ("test",))),
                daemon=True,
            )
            worker.start()
            deadline = time.monotonic() + 120
            while not _live(marker) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert _live(marker)
            stop.kill()
            worker.join(timeout=30)
        assert not worker.is_alive()
        deadline = time.monotonic() + 10
        while _live(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _live(marker)
    finally:
        for pid in _live(marker):  # this test's own, when the stop did not reach them
            os.kill(pid, signal.SIGKILL)
