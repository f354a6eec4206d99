"""A test that needs a missing component fails, unless the run allows skipping it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import components

PROBE = "BUGBOUT_COMPONENT_PROBE"


@pytest.mark.skipif(not os.environ.get(PROBE), reason="run by the test below only")
def test_probe() -> None:
    components.missing("podman", "podman is not installed")


def _run(*options: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfs",
         f"{__file__}::test_probe", *options],
        cwd=Path(__file__).parent.parent, capture_output=True, text=True, check=False,
        env={**os.environ, PROBE: "1", **(env or {})}, timeout=120,
    )  # fmt: skip


def test_a_missing_component_fails_with_how_to_install_it() -> None:
    result = _run()
    assert result.returncode == 1, result.stdout
    assert "1 failed" in result.stdout
    assert (
        "podman is not installed: this test needs podman (apt install podman runc conmon "
        "fuse-overlayfs uidmap slirp4netns debootstrap); or run with --allow-skip podman"
    ) in result.stdout


@pytest.mark.parametrize(
    ("options", "env"),
    [
        (["--allow-skip", "podman"], None),
        (["--allow-skip", "all"], None),
        ([], {"BUGBOUT_ALLOW_SKIP": "chromium,podman"}),
    ],
)
def test_a_run_may_allow_skipping_it(options: list[str], env: dict[str, str] | None) -> None:
    result = _run(*options, env=env)
    assert result.returncode == 0, result.stdout
    assert "1 skipped" in result.stdout
    assert "podman is not installed" in result.stdout


def test_allowing_another_component_still_fails() -> None:
    assert _run("--allow-skip", "chromium").returncode == 1
