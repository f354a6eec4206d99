"""Scoring in the podman sandbox, for real: real podman, real pytest, on the one-bug
repository of ``test_crossexam``. A test tree that is an overlay is run as a copy (podman
cannot mount its storage inside bugbout's user namespace), and a run whose container never
starts is the machine's failure, never a verdict on the patch.

Without podman these fail, unless the run allows skipping podman (``--allow-skip podman``).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import test_podman_env as podman_env
from bugbout.core.contract.errors import BugboutError
from bugbout.core.contract.settings import BoutSettings, PluginChoice
from bugbout.core.plumbing.bench import Bench
from bugbout.core.plumbing.confinement import confine as confinement
from bugbout.core.plumbing.confinement.confine import Confine
from bugbout.core.score.scoring import score
from bugbout.core.store.race_records import Score
from bugbout.core.store.records import Outcome, RunStatus
from bugbout.plugins.environments.podman import PodmanBuilder, PodmanOptions
from bugbout.plugins.sandboxes.podman import PodmanSandbox, PodmanSandboxOptions
from runners import pytest_runner
from test_crossexam import PROJECT, World, build_world

pytestmark = pytest.mark.requires("podman")

STORAGE = f"/var/tmp/bugbout-podman-testruns{os.environ.get('PYTEST_XDIST_WORKER', '')}"
"""Podman's storage for these tests, outside pytest's temporary folders (it holds mounts)."""
EVEN = "tests/test_core.py::test_even"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from build_world(tmp_path_factory)


@pytest.fixture(scope="module")
def podman(world: World) -> Confine:
    """How the bout confines test runs with ``sandbox=podman``."""
    sandbox = PodmanSandbox(PodmanSandboxOptions(storage=STORAGE))
    problem = sandbox.problem()
    assert problem is None, problem
    settings = BoutSettings(
        project=PROJECT,
        sandbox=PluginChoice(name="podman"),
        environment=PluginChoice(name="interpreter"),
        root=world.git.repository,
    )
    return confinement.test_confinement(
        settings.limits.tests,
        sandbox,
        world.checkouts.cache_dir.parent,
        confinement.masked_paths(
            settings.repository, settings.store_dir, world.checkouts.cache_dir.parent
        ),
    )


def bench(world: World, confine: Confine) -> Bench:
    return Bench(
        world.checkouts, world.environment, PROJECT, 120, confine, ("tests",), pytest_runner()
    )


def test_patches_are_scored_in_the_podman_sandbox(world: World, podman: Confine) -> None:
    """The trees scoring makes are overlays here: podman runs pytest on them all the same
    (it used to fail with exit 125 before pytest started, and every patch was a wrong fix)."""
    good = score(world.task, world.oracle, world.attempts["good"], bench(world, podman))
    assert good.run is not None and good.run.status == RunStatus.OK, good.run
    assert good.score == Score.RESOLVED
    assert good.fail_to_pass == {EVEN: Outcome.PASSED}
    wrong = score(world.task, world.oracle, world.attempts["wrong"], bench(world, podman))
    assert wrong.score == Score.WRONG_FIX and wrong.fail_to_pass == {EVEN: Outcome.FAILED}


def test_a_run_whose_container_never_starts_is_no_verdict(world: World, podman: Confine) -> None:
    """podman started inside a user namespace cannot mount its storage (exit 125, before
    pytest): the correct patch is not scored at all, and the error says why."""
    unshare = shutil.which("unshare")
    assert unshare is not None

    def in_a_user_namespace(argv: list[str], tree: Path, writable: tuple[Path, ...]) -> list[str]:
        return [unshare, "--user", "--map-root-user", "--", *podman(argv, tree, writable)]

    with pytest.raises(BugboutError, match="never started") as raised:
        score(world.task, world.oracle, world.attempts["good"], bench(world, in_a_user_namespace))
    message = str(raised.value)
    assert "125" in message and "operation not permitted" in message, message
    assert "\n" not in message


@pytest.fixture(scope="module")
def images() -> Iterator[PodmanBuilder]:
    """The podman environment's builder, on tests/test_podman_env.py's storage."""
    built = PodmanBuilder(PodmanOptions(storage=podman_env.STORAGE))
    yield built
    built.close()


def test_a_podman_environment_run_that_never_started_is_no_outcome(
    images: PodmanBuilder, tmp_path: Path
) -> None:
    """The environment's image is gone (podman exits 125 before the container starts): no
    outcome. Code under test that exits 125 in the container is an outcome (crashed)."""
    tree = podman_env.project(tmp_path, {"test_ok.py": "def test_ok():\n    pass\n"})
    contained = podman_env.environment(images, tree, tmp_path / "home")
    assert podman_env.run_in(contained, tree, ["tests"]).status == RunStatus.OK
    gone = dataclasses.replace(contained, image="localhost/bugbout-env:gone")
    with pytest.raises(BugboutError, match=r"the run test run never started \(exit status 125"):
        podman_env.run_in(gone, tree, ["tests"])
    (tree / "tests" / "conftest.py").write_text("import os\nos._exit(125)\n")
    assert podman_env.run_in(contained, tree, ["tests"]).status == RunStatus.CRASHED
