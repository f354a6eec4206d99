"""The podman environment for real: the same outcomes and oracles as on the host, no
network inside, nothing of the host but the tree, and a timeout that removes the container.

These need podman: without it they fail, unless the run allows skipping podman
(``--allow-skip podman``). Images live in :data:`STORAGE`, outside pytest's temporary
folders: podman's storage holds mounts, and its images are worth keeping between sessions.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import EnvironmentRequest
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import Outcome, RunStatus, TestRun
from bugbout.plugins.environments.interpreter import InterpreterBuilder, InterpreterOptions
from bugbout.plugins.environments.podman import (
    ENV_REPOSITORY,
    PodmanBuilder,
    PodmanEnvironment,
    PodmanOptions,
)
from bugbout.sandbox.podman import LABEL

STORAGE = "/var/tmp/bugbout-podman-tests"

pytestmark = pytest.mark.requires("podman")

ODD_IDS = """\
import pytest


@pytest.mark.parametrize("text", ["a b", "[x]", "line\\nbreak", "caf\\u00e9", "::"])
def test_odd_ids(text):
    assert text


def test_fails():
    assert 1 == 2


@pytest.mark.xfail(reason="known")
def test_expected_to_fail():
    assert False


@pytest.mark.skip(reason="not here")
def test_skipped():
    pass


@pytest.fixture
def broken():
    raise RuntimeError("setup fails")


def test_setup_error(broken):
    pass
"""


@pytest.fixture(scope="module")
def builder() -> Iterator[PodmanBuilder]:
    built = PodmanBuilder(PodmanOptions(storage=STORAGE))
    yield built
    built.close()


def project(root: Path, tests: dict[str, str]) -> Path:
    """A src-layout project ``tiny`` with ``tests``."""
    tree = root / "tree"
    (tree / "src" / "tiny").mkdir(parents=True)
    (tree / "tests").mkdir()
    (tree / "pyproject.toml").write_text('[project]\nname = "tiny"\nversion = "0"\n')
    (tree / "src" / "tiny" / "__init__.py").write_text("VALUE = 42\n")
    for name, text in tests.items():
        (tree / "tests" / name).write_text(text)
    return tree


def settings(**env: str) -> ProjectSettings:
    return ProjectSettings(source="src/tiny", tests="tests", env=env)


def environment(builder: PodmanBuilder, tree: Path, home: Path) -> PodmanEnvironment:
    return builder.build(EnvironmentRequest(project=settings(), tree=tree, home=home))


def run_in(
    env: object, tree: Path, targets: list[str], *, timeout: float = 120.0, **variables: str
) -> TestRun:
    return run_tests(
        env,  # type: ignore[arg-type]
        tree,
        targets,
        project=settings(**variables),
        label="run",
        timeout=timeout,
    )


def test_outcomes_and_node_ids_are_the_hosts(builder: PodmanBuilder, tmp_path: Path) -> None:
    tree = project(tmp_path, {"test_odd.py": ODD_IDS, "test_broken.py": "import nowhere\n"})
    contained = environment(builder, tree, tmp_path / "home")
    assert contained.description.startswith("podman: Python 3.")
    host = InterpreterBuilder(InterpreterOptions(path=sys.executable)).build(
        EnvironmentRequest(project=settings(), tree=tree, home=tmp_path / "home")
    )
    inside = run_in(contained, tree, ["tests"])
    outside = run_in(host, tree, ["tests"])
    assert inside.outcomes == outside.outcomes
    assert inside.collection_errors.keys() == outside.collection_errors.keys()
    assert inside.status == outside.status == RunStatus.OK
    assert inside.outcomes["tests/test_odd.py::test_odd_ids[a b]"] == Outcome.PASSED
    assert inside.outcomes["tests/test_odd.py::test_odd_ids[line\\nbreak]"] == Outcome.PASSED
    assert len([nodeid for nodeid in inside.outcomes if "test_odd_ids" in nodeid]) == 5
    assert inside.outcomes["tests/test_odd.py::test_setup_error"] == Outcome.ERROR
    assert inside.outcomes["tests/test_odd.py::test_expected_to_fail"] == Outcome.XFAILED
    assert "tests/test_broken.py" in inside.collection_errors


def test_no_network_and_only_the_tree(builder: PodmanBuilder, tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir()
    (private / "secret.txt").write_text("the fix\n")
    check = textwrap.dedent(
        """\
        import os
        import socket

        import pytest


        def test_only_loopback():
            with open("/proc/net/dev") as devices:
                names = [line.split(":")[0].strip() for line in devices.readlines()[2:]]
            assert names == ["lo"]


        def test_no_connection():
            with pytest.raises(OSError):
                socket.create_connection(("1.1.1.1", 53), timeout=3)


        def test_the_host_is_out_of_sight():
            assert not os.path.exists(os.environ["PRIVATE"])
            assert os.environ["HOME"] != "/root" and os.access(os.environ["HOME"], os.W_OK)


        def test_the_tree_is_writable():
            with open("written.txt", "w") as out:
                out.write("from the container")
        """
    )
    tree = project(tmp_path, {"test_offline.py": check})
    contained = environment(builder, tree, tmp_path / "home")
    run = run_in(contained, tree, ["tests"], PRIVATE=str(private))
    assert run.outcomes == dict.fromkeys(
        [
            "tests/test_offline.py::test_only_loopback",
            "tests/test_offline.py::test_no_connection",
            "tests/test_offline.py::test_the_host_is_out_of_sight",
            "tests/test_offline.py::test_the_tree_is_writable",
        ],
        Outcome.PASSED,
    ), run.detail
    assert (tree / "written.txt").read_text() == "from the container"


def test_a_timeout_removes_the_container(builder: PodmanBuilder, tmp_path: Path) -> None:
    marker = f"bugbout-timeout-{os.getpid()}-{time.monotonic_ns()}"
    slow = f"import time\n\n\ndef test_slow():\n    time.sleep(300)  # {marker}\n"
    tree = project(tmp_path, {"test_slow.py": slow})
    contained = environment(builder, tree, tmp_path / "home")
    started = time.monotonic()
    run = run_in(contained, tree, ["tests"], timeout=3)
    assert run.status == RunStatus.TIMEOUT
    assert time.monotonic() - started < 30
    client = builder.podman(tmp_path / "home").client()

    def ours() -> list[object]:
        return [
            container
            for container in client.containers.list(all=True, filters={"label": f"{LABEL}=test"})
            if str(tree) in json.dumps(container.attrs.get("Mounts", []))
        ]

    deadline = time.monotonic() + 30
    while ours() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ours() == []


def test_the_image_is_cached_by_key(builder: PodmanBuilder, tmp_path: Path) -> None:
    tree = project(tmp_path, {"test_a.py": "def test_a():\n    pass\n"})
    first = environment(builder, tree, tmp_path / "home")
    fresh = PodmanBuilder(PodmanOptions(storage=STORAGE))
    try:
        started = time.monotonic()
        again = environment(fresh, tree, tmp_path / "home")
        assert time.monotonic() - started < 20  # found, not built
    finally:
        fresh.close()
    assert again.key == first.key and again.image == first.image
    (tree / "pyproject.toml").write_text(
        '[project]\nname = "tiny"\nversion = "0"\ndependencies = ["iniconfig"]\n'
    )
    assert environment(builder, tree, tmp_path / "home").key != first.key


def test_an_image_an_earlier_bugbout_labelled_env_is_reused(
    builder: PodmanBuilder, tmp_path: Path
) -> None:
    """Environment images were labelled ``env`` before the label took its kind's name: one
    is found and reused as it is, its labels read, not built again."""
    podman = builder.podman(tmp_path / "home")
    client = podman.client()
    image = f"{ENV_REPOSITORY}:earlier-{os.getpid()}-{time.monotonic_ns()}"
    container = client.containers.create(podman.base_image().name, ["true"])
    try:
        repository, tag = image.rsplit(":", 1)
        changes = [f"LABEL {LABEL}=env", 'LABEL io.bugbout.test-extras-error="no extras"']
        made = container.commit(repository=repository, tag=tag, changes=changes)
        builds = list[str]()
        labels = podman.built(image, lambda: builds.append(image))
        assert builds == []
        assert labels[LABEL] == "env" and labels["io.bugbout.test-extras-error"] == "no extras"
        assert client.images.get(image).id == made.id
    finally:
        container.remove(force=True)
        client.images.remove(image, force=True)


@pytest.mark.slow
def test_test_runs_need_no_service(tmp_path: Path) -> None:
    """Each test run is podman's own, not the service's (which builds the images): an
    environment still runs its tests once the service that built it has stopped."""
    tree = project(tmp_path, {"test_a.py": "def test_a():\n    pass\n"})
    fresh = PodmanBuilder(PodmanOptions(storage=STORAGE))
    try:
        contained = environment(fresh, tree, tmp_path / "home")
    finally:
        fresh.close()
    run = run_in(contained, tree, ["tests"])
    assert run.status == RunStatus.OK, run.detail
    assert run.outcomes == {"tests/test_a.py::test_a": Outcome.PASSED}


def test_threads_share_one_podman_service(tmp_path: Path) -> None:
    """Ground truth builds environments from several threads (``tasks.jobs``): they get one
    podman, whose service outlives each build."""
    from concurrent.futures import ThreadPoolExecutor

    fresh = PodmanBuilder(PodmanOptions(storage=STORAGE))
    try:
        with ThreadPoolExecutor(3) as pool:
            found = list(pool.map(lambda _: fresh.podman(tmp_path / "home"), range(3)))
        assert found[0] is found[1] is found[2]
        assert found[0].socket_path.is_socket()
    finally:
        fresh.close()


# -- bugbout tasks environment=podman ----------------------------------------------------------


def bugbout(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )


CLASSES = ("status", "fail_to_pass", "pass_to_pass", "unstable", "fail_on_base")
RANDOM_ID = re.compile(r"\[0\.\d+\]")
"""The synthetic history's unstable test draws a random parameter every run."""


def classes(oracle: dict[str, object]) -> dict[str, object]:
    """How an oracle classified the tests, random ids replaced by one mark."""
    found = {key: oracle[key] for key in CLASSES}
    found["unstable"] = sorted(RANDOM_ID.sub("[random]", i) for i in oracle["unstable"])  # type: ignore[attr-defined]
    return found


@pytest.mark.slow
def test_tasks_with_podman_give_the_oracles_of_uv(
    calc_repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    source, _ = calc_repo
    found = {}
    for env in ("uv", "podman"):
        repo = tmp_path / env
        shutil.copytree(source, repo)
        assert bugbout("init", cwd=repo).returncode == 0
        overrides = [f"environment={env}"] + (
            [f"environment.storage={STORAGE}"] if env == "podman" else []
        )
        result = bugbout("tasks", *overrides, cwd=repo)
        assert result.returncode == 0, result.stderr
        found[env] = json.loads((repo / ".bugbout" / "oracles.json").read_text())
    assert found["podman"].keys() == found["uv"].keys()
    assert len(found["podman"]) >= 5
    for task_id, oracle in found["podman"].items():
        assert oracle["environment"].startswith("podman: Python 3."), oracle
        assert classes(oracle) == classes(found["uv"][task_id])
    assert any(oracle["fail_to_pass"] for oracle in found["podman"].values())
