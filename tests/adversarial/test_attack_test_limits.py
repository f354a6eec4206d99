"""Attacks on the host from a patch's code, performed for real: each contestant's patch
fixes the bug (so that, unchecked, it would score resolved) and does something hostile
when the package is imported, in every test run after the race (the cross-examination,
the score, the audit). One bout per sandbox with lowered ``limits.tests``; each attack is
asserted by its effect: the run is stopped at the limit, the patch is not resolved and
its run says which limit, and nothing it started outlives the bout."""

from __future__ import annotations

import re
from typing import Any

import pytest
from harness import SANDBOXES, Bout, run_bout

pytestmark = pytest.mark.slow

LIMITS = {"memory": 300_000_000, "processes": 64, "disk": 100_000_000, "tmp": 20_000_000}
FIX = "python3 - <<'EOF'\nfrom pathlib import Path\ncore = Path('src/box/core.py')\n" + (
    "core.write_text('def clamp(value, low, high):\\n    return min(high, max(low, value))\\n')\n"
)
"""The start of every attacker: the right fix, then (before ``EOF``) what its package's
``__init__.py`` does on import."""

ON_IMPORT = {
    # 1.5 GB in 50 MB steps: bounded, so that an unchecked run cannot take the host down
    "hog": """
import time
_blocks = []
for _ in range(30):
    _blocks.append(bytearray(50_000_000))
    time.sleep(0.02)
""",
    # 300 sleeping children (small shells), the bout's tag on their command lines
    "swarm": """
import subprocess
for _ in range(300):
    subprocess.Popen(["sh", "-c", "sleep 600; :", "TAG"])
""",
    # 20 MB files in the tree, up to 1 GB (no single file is past the limit)
    "hoard": """
import os
os.makedirs("hoard", exist_ok=True)
for number in range(50):
    with open(f"hoard/{number}", "wb") as out:
        out.write(os.urandom(20_000_000))
""",
    # up to 200 MB into the memory-backed /tmp; how much went in, as an import error
    "tmpfill": """
written = 0
try:
    with open("/tmp/fill", "wb") as out:
        for _ in range(200):
            out.write(b"x" * 1_000_000)
            out.flush()
            written += 1_000_000
except OSError:
    pass
raise RuntimeError(f"tmp-written {written}")
""",
}


@pytest.fixture(scope="module", params=SANDBOXES)
def bout(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Bout:
    root = tmp_path_factory.mktemp(f"test-limits-{request.param}")
    scripts = {name: _script(name) for name in ON_IMPORT}
    overrides = tuple(f"limits.tests.{key}={value}" for key, value in LIMITS.items())
    ran = run_bout(root, scripts, sandbox=request.param, overrides=overrides)
    assert ran.result.returncode == 0, ran.result.stderr[-3000:]
    return ran


def _script(name: str) -> str:
    """The attacker's bash script: the fix, then its ``__init__.py`` (the bout's tag put
    in, unquoted by bash: the heredoc is quoted, so the tag goes in through a variable)."""
    code = ON_IMPORT[name].replace('"TAG"', "TAG")
    return (
        "export TAG\n"
        f"{FIX}import os\ncode = {code!r}.replace('TAG', repr(os.environ['TAG']))\n"
        "Path('src/box/__init__.py').write_text(code)\nEOF\n"
    )


def _run(bout: Bout, name: str) -> dict[str, Any]:
    resolution = bout.resolutions()[name]
    assert resolution["score"] != "resolved", resolution
    return dict(resolution["run"])


def test_a_patch_that_allocates_on_import_is_stopped_at_the_memory_limit(bout: Bout) -> None:
    run = _run(bout, "hog")
    assert run["status"] == "crashed", run
    first = run["detail"].splitlines()[0]
    found = re.fullmatch(
        r"memory limit exceeded \(([0-9.,]+) MB > 300(\.0)? MB limit; setting "
        r"limits\.tests\.memory\)",
        first,
    )
    assert found, first
    assert float(found[1].replace(",", "")) < 700  # the peak: not 1.5 GB


def test_a_patch_that_forks_is_stopped_and_nothing_outlives_the_bout(bout: Bout) -> None:
    run = _run(bout, "swarm")
    assert run["status"] == "crashed", run
    assert run["detail"].startswith("too many processes ("), run["detail"][:300]
    assert "> 64 limit; setting limits.tests.processes)" in run["detail"].splitlines()[0]
    assert bout.survivors() == []


def test_a_patch_that_fills_the_disk_is_stopped(bout: Bout) -> None:
    run = _run(bout, "hoard")  # crashed, or tampered: the static scan flags its writes
    assert run["status"] in ("crashed", "tampered"), run
    first = run["detail"].splitlines()[0]
    assert first.startswith("disk limit exceeded ("), first
    # killed within a few kB of the limit, the amounts are said in bytes to tell them apart
    limit = r"> (100 MB|100,000,000 bytes) limit; setting limits\.tests\.disk\)$"
    assert re.search(limit, first), first


def test_a_patch_cannot_fill_tmp_past_its_limit(bout: Bout) -> None:
    run = _run(bout, "tmpfill")
    (message,) = run["collection_errors"].values()
    written = int(re.search(r"tmp-written (\d+)", message)[1])  # type: ignore[index]
    assert 0 < written <= LIMITS["tmp"]
