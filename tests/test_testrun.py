"""Running pytest: exact node ids, no network, and timeouts that kill everything."""

from __future__ import annotations

import os
import socket
import textwrap
import time
from pathlib import Path

import pytest

from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import Environment, EnvironmentRequest
from bugbout.core.plumbing.testruns.run_reports import FAILURE_LINE
from bugbout.core.plumbing.testruns.testrun import run_tests
from bugbout.core.store.records import Outcome, RunStatus, TestRun

PROJECT = ProjectSettings(source="pkg", tests="tests")


@pytest.fixture
def environment(plugins: Plugins, tmp_path: Path) -> Environment:
    builder = plugins.create("environment", "interpreter")
    request = EnvironmentRequest(project=PROJECT, tree=tmp_path, home=tmp_path / "home")
    return builder.build(request)  # type: ignore[no-any-return]


def write(tree: Path, name: str, source: str) -> None:
    path = tree / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))


def test_node_ids_are_kept_verbatim(environment: Environment, tmp_path: Path) -> None:
    write(
        tmp_path,
        "tests/test_ids.py",
        """
        import pytest

        @pytest.mark.parametrize("text", ["a b", "x[1]", "line\\nbreak", "é"])
        def test_text(text):
            assert text != "x[1]"

        class TestThing:
            def test_method(self):
                pass

        @pytest.mark.xfail
        def test_expected_failure():
            assert False

        @pytest.mark.skip
        def test_skipped():
            pass

        @pytest.fixture
        def broken():
            raise RuntimeError("setup")

        def test_setup_error(broken):
            pass
        """,
    )
    run = run_tests(
        environment, tmp_path, ["tests/test_ids.py"], project=PROJECT, label="t", timeout=60
    )
    assert run.status == RunStatus.OK
    assert run.outcomes == {
        "tests/test_ids.py::test_text[a b]": Outcome.PASSED,
        "tests/test_ids.py::test_text[x[1]]": Outcome.FAILED,
        "tests/test_ids.py::test_text[line\\nbreak]": Outcome.PASSED,
        "tests/test_ids.py::test_text[\\xe9]": Outcome.PASSED,
        "tests/test_ids.py::TestThing::test_method": Outcome.PASSED,
        "tests/test_ids.py::test_expected_failure": Outcome.XFAILED,
        "tests/test_ids.py::test_skipped": Outcome.SKIPPED,
        "tests/test_ids.py::test_setup_error": Outcome.ERROR,
    }


def test_project_addopts_are_ignored_and_the_tree_is_importable(
    environment: Environment, tmp_path: Path
) -> None:
    write(tmp_path, "pyproject.toml", '[tool.pytest.ini_options]\naddopts = "--cov=pkg -n 4"\n')
    write(tmp_path, "pkg/__init__.py", "VALUE = 42\n")
    write(
        tmp_path,
        "tests/test_pkg.py",
        "import pkg\n\ndef test_value():\n    assert pkg.VALUE == 42\n",
    )
    run = run_tests(
        environment, tmp_path, ["tests/test_pkg.py"], project=PROJECT, label="t", timeout=60
    )
    assert run.outcomes == {"tests/test_pkg.py::test_value": Outcome.PASSED}


def test_collection_errors_are_recorded_per_module(
    environment: Environment, tmp_path: Path
) -> None:
    write(tmp_path, "tests/test_good.py", "def test_ok():\n    pass\n")
    write(tmp_path, "tests/test_bad.py", "from pkg import missing\n\ndef test_x():\n    pass\n")
    run = run_tests(
        environment, tmp_path, ["tests/test_good.py", "tests/test_bad.py"],
        project=PROJECT, label="t", timeout=60,
    )  # fmt: skip
    assert run.status == RunStatus.OK
    assert run.outcomes == {"tests/test_good.py::test_ok": Outcome.PASSED}
    assert list(run.collection_errors) == ["tests/test_bad.py"]
    assert "pkg" in run.collection_errors["tests/test_bad.py"]


def test_each_failed_test_keeps_its_first_error_line_bounded(
    environment: Environment, tmp_path: Path
) -> None:
    write(
        tmp_path,
        "tests/test_fail.py",
        """
        import pytest

        def test_ok():
            pass

        def test_wrong_total():
            assert sum([2, 2]) == 5, "total of [2, 2]"

        def test_long():
            raise ValueError("</pre><script>x</script>" + "y" * 5000 + "\\nsecond line")

        @pytest.fixture
        def broken():
            raise RuntimeError("no database")

        def test_setup(broken):
            pass
        """,
    )
    run = run_tests(
        environment, tmp_path, ["tests/test_fail.py"], project=PROJECT, label="t", timeout=60
    )
    assert set(run.failures) == {
        "tests/test_fail.py::test_wrong_total",
        "tests/test_fail.py::test_long",
        "tests/test_fail.py::test_setup",
    }
    assert run.failures["tests/test_fail.py::test_wrong_total"].startswith(
        "AssertionError: total of [2, 2]"
    )
    assert run.failures["tests/test_fail.py::test_setup"] == "RuntimeError: no database"
    long = run.failures["tests/test_fail.py::test_long"]
    assert long.startswith("ValueError: </pre><script>x</script>yyy")
    assert len(long) <= FAILURE_LINE and "second line" not in long and "\n" not in long


def test_a_run_that_collects_nothing_is_reported(environment: Environment, tmp_path: Path) -> None:
    write(tmp_path, "tests/test_bad.py", "import does_not_exist\n")
    run = run_tests(
        environment, tmp_path, ["tests/test_bad.py"], project=PROJECT, label="t", timeout=60
    )
    assert run.status == RunStatus.COLLECTION_FAILED


def test_tests_have_no_network(environment: Environment, tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    write(
        tmp_path,
        "tests/test_net.py",
        f"""
        import socket

        def test_host_is_unreachable():
            with socket.create_connection(("127.0.0.1", {port}), timeout=2):
                pass

        def test_loopback_inside_works():
            inner = socket.socket()
            inner.bind(("127.0.0.1", 0))
            inner.listen()
            socket.create_connection(inner.getsockname(), timeout=2).close()
        """,
    )
    try:
        run = run_tests(
            environment, tmp_path, ["tests/test_net.py"], project=PROJECT, label="t", timeout=60
        )
    finally:
        server.close()
    assert run.outcomes["tests/test_net.py::test_host_is_unreachable"] == Outcome.FAILED
    assert run.outcomes["tests/test_net.py::test_loopback_inside_works"] == Outcome.PASSED


@pytest.mark.slow
def test_timeout_kills_the_whole_process_group(environment: Environment, tmp_path: Path) -> None:
    marker = tmp_path / "daemon-alive"
    write(
        tmp_path,
        "tests/test_hang.py",
        f"""
        import subprocess, sys, time

        def test_hang():
            subprocess.Popen([sys.executable, "-c",
                "import time, pathlib\\n"
                "time.sleep(3)\\n"
                "pathlib.Path({str(marker)!r}).write_text('still here')"])
            time.sleep(600)
        """,
    )
    started = time.monotonic()
    run = run_tests(
        environment, tmp_path, ["tests/test_hang.py"], project=PROJECT, label="t", timeout=2
    )
    assert run.status == RunStatus.TIMEOUT
    assert time.monotonic() - started < 30
    time.sleep(4)
    assert not marker.exists(), "a child of the timed-out run outlived it"


def test_only_the_allowed_environment_reaches_the_tests(
    environment: Environment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plugins: Plugins
) -> None:
    monkeypatch.setenv("SECRET_API_KEY", "do-not-leak")
    project = PROJECT.model_copy(update={"env": {"DATABASE_URL": "sqlite://"}})
    write(
        tmp_path,
        "tests/test_env.py",
        """
        import os

        def test_secret_is_absent():
            assert "SECRET_API_KEY" not in os.environ

        def test_configured_variable_is_present():
            assert os.environ["DATABASE_URL"] == "sqlite://"

        def test_home_and_tmpdir_are_usable():
            for name in ("HOME", "TMPDIR"):
                path = os.path.join(os.environ[name], "probe-" + name)
                with open(path, "w") as handle:
                    handle.write("ok")
        """,
    )
    run = _confined_run(environment, tmp_path, "tests/test_env.py", project, plugins)
    assert set(run.outcomes.values()) == {Outcome.PASSED}
    assert os.environ["SECRET_API_KEY"] == "do-not-leak"


def test_a_plugin_reading_the_cache_as_it_configures_runs_and_leaves_the_tree_alone(
    environment: Environment, tmp_path: Path, plugins: Plugins
) -> None:
    """pytest-randomly 3.5 reads ``config.cache`` in ``pytest_configure``: it finds the
    outcome plugin's, in memory; nothing is written in the tree."""
    write(
        tmp_path,
        "conftest.py",
        """
        def pytest_configure(config):
            config.cache.set("seed/last", config.cache.get("seed/last", 0) + 1)
        """,
    )
    write(tmp_path, "tests/test_it.py", "def test_it():\n    pass\n")
    run = _confined_run(environment, tmp_path, "tests/test_it.py", PROJECT, plugins)
    assert run.status == RunStatus.OK, run.detail
    assert run.outcomes == {"tests/test_it.py::test_it": Outcome.PASSED}
    assert not (tmp_path / ".pytest_cache").exists()


def _confined_run(
    environment: Environment, tree: Path, target: str, project: ProjectSettings, plugins: Plugins
) -> TestRun:
    """``target`` run in ``tree``, confined in bubblewrap as bugbout confines test runs."""
    from bugbout.core.contract.settings import BoutSettings
    from bugbout.core.plumbing.confinement.confine import masked_paths, test_confinement

    sandbox = plugins.create("sandbox", "bubblewrap")
    settings = BoutSettings(project=project, root=tree / "repo")
    confine = test_confinement(
        settings.limits.tests,
        sandbox,
        tree / "bugbout-home",
        masked_paths(settings.repository, settings.store_dir, tree / "bugbout-home"),
    )
    return run_tests(
        environment, tree, [target], project=project, label="t", timeout=60, confine=confine
    )
