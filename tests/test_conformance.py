"""Every built-in plugin passes its kind's conformance suite (``bugbout.testing.suites``),
as a third-party plugin's tests would run it; and the plugin author's fixtures work."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from bugbout import JudgePlugin, hookimpl
from bugbout.core.contract.errors import PluginError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.types import KINDS
from bugbout.core.judge.judging import JudgeContext
from bugbout.core.race.agents import Session
from bugbout.core.store.verdict_records import Verdict
from bugbout.testing import RepositoryBuilder
from bugbout.testing.model_server import ModelServer, Say
from bugbout.testing.suites import (
    SUITES,
    AgentSuite,
    AssignmentSuite,
    AuditorSuite,
    EnvironmentSuite,
    ExecutorSuite,
    IssueSourceSuite,
    JudgeSuite,
    MinerSuite,
    ReporterSuite,
    SandboxSuite,
    TestRunnerSuite,
)

if TYPE_CHECKING:
    from bugbout.testing.fixtures import FixedBugRepository

pytest_plugins = ["pytester", "bugbout.testing.fixtures"]


class BuiltinsOnly:
    """The built-ins, without entry points: an installed plugin must not change what the
    built-ins' suites see (or collide with their names)."""

    @pytest.fixture
    def plugins(self, bugbout_plugins: Plugins) -> Plugins:
        return bugbout_plugins


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- miners and issue sources ---------------------------------------------------------------


class TestGitHistory(BuiltinsOnly, MinerSuite):
    plugin = "git-history"


class TestMutants(BuiltinsOnly, MinerSuite):
    """Injected bugs, not the fix: the suite's fix is history, and mutants are HEAD's."""

    plugin = "mutants"
    options = {"limit": 3}
    finds_fix = False


class TestGitHubIssues(BuiltinsOnly, IssueSourceSuite):
    """An API nobody answers: ``IssueSourceUnavailable``, never another error."""

    plugin = "github"
    options = {"api-url": f"http://127.0.0.1:{closed_port()}", "timeout": 2}


class TestFileIssues(BuiltinsOnly, IssueSourceSuite):
    plugin = "file"
    options = {"path": "issues.json"}
    known_issue = 12


class TestFileIssuesWithoutAFile(BuiltinsOnly, IssueSourceSuite):
    plugin = "file"


class TestCommitIssues(BuiltinsOnly, IssueSourceSuite):
    plugin = "commit"
    known_issue = 12


# -- environments -----------------------------------------------------------------------------


class TestInterpreter(BuiltinsOnly, EnvironmentSuite):
    plugin = "interpreter"
    options = {"path": sys.executable}


@pytest.mark.slow
class TestUv(BuiltinsOnly, EnvironmentSuite):
    plugin = "uv"


@pytest.mark.slow
@pytest.mark.requires("podman")
class TestPodman(BuiltinsOnly, EnvironmentSuite):
    plugin = "podman"
    # Outside pytest's temporary folders: podman's storage holds mounts, and its images
    # are worth keeping between sessions.
    options = {"storage": "/var/tmp/bugbout-podman-tests"}


# -- test runners -----------------------------------------------------------------------------


class TestPytest(BuiltinsOnly, TestRunnerSuite):
    plugin = "pytest"


# -- agents -----------------------------------------------------------------------------------


class TestCodex(BuiltinsOnly, AgentSuite):
    plugin = "codex"
    options = {"model": "gpt-5-codex"}


class TestCodexOnAnotherServer(BuiltinsOnly, AgentSuite):
    plugin = "codex"
    options = {"model": "scripted", "base-url": "http://127.0.0.1:9/v1", "vendor": "openai"}


class TestClaudeCode(BuiltinsOnly, AgentSuite):
    plugin = "claude-code"
    options = {"model": "claude-sonnet-4-5"}


class TestGeminiCli(BuiltinsOnly, AgentSuite):
    plugin = "gemini-cli"
    options = {"model": "gemini-2.5-pro"}


class TestMiniSweAgent(BuiltinsOnly, AgentSuite):
    plugin = "mini-swe-agent"
    options = {"model": "openai/gpt-5-mini"}


class TestCommand(BuiltinsOnly, AgentSuite):
    plugin = "command"
    options = {"name": "echo-agent", "command": ["echo", "{prompt}"]}


class TestCommandOnStandardInput(BuiltinsOnly, AgentSuite):
    plugin = "command"
    options = {"name": "cat-agent", "command": ["cat"], "model": "claude-haiku-4-5"}


class TestPredictions(BuiltinsOnly, AgentSuite):
    plugin = "predictions"
    options = {"name": "replay", "file": str(Path(__file__).parent / "data" / "predictions.jsonl")}

    def test_the_prompt_reaches_the_agent(self, agent: Any, session: Session) -> None:
        """It runs no model: what reaches it is the task's stored patch."""
        invocation = agent.invocation(dataclasses.replace(session, task_id="0123456789ab"))
        assert invocation.stdin == agent.patch_for("0123456789ab")
        assert "ratio(a, b)" in (invocation.stdin or "")


# -- sandboxes --------------------------------------------------------------------------------


class TestBubblewrap(BuiltinsOnly, SandboxSuite):
    plugin = "bubblewrap"


class TestSeatbelt(BuiltinsOnly, SandboxSuite):
    """Off macOS its ``problem()`` says so, and the behavioural tests skip."""

    plugin = "seatbelt"


class TestAutoSandbox(BuiltinsOnly, SandboxSuite):
    plugin = "auto"


class TestPodmanSandbox(BuiltinsOnly, SandboxSuite):
    """Skips where podman does not work; tests/test_podman_sandbox.py fails there instead
    (unless the run allows skipping podman)."""

    plugin = "podman"
    options = {"storage": "/var/tmp/bugbout-podman-sandbox-tests"}


class TestNoSandbox(BuiltinsOnly, SandboxSuite):
    plugin = "none"
    confines = False


# -- executors --------------------------------------------------------------------------------


class TestLocalExecutor(BuiltinsOnly, ExecutorSuite):
    plugin = "local"


class TestLocalExecutorOneWorker(BuiltinsOnly, ExecutorSuite):
    plugin = "local"
    options = {"workers": 1}


@pytest.mark.slow
class TestRayExecutor(BuiltinsOnly, ExecutorSuite):
    """On one local Ray instance for the whole class: the executor joins it, as it would
    inside a Ray job, and leaves it running."""

    plugin = "ray"

    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def ray_instance(cls) -> Iterator[None]:
        ray = pytest.importorskip("ray")
        ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
        try:
            yield
        finally:
            ray.shutdown()


# -- examiners, judges, auditors, reporters ---------------------------------------------------


class TestReproduce(BuiltinsOnly, AssignmentSuite):
    plugin = "reproduce"


class TestSpecify(BuiltinsOnly, AssignmentSuite):
    plugin = "specify"


class TestMajority(BuiltinsOnly, JudgeSuite):
    plugin = "majority"


class TestMajorityDemanding(BuiltinsOnly, JudgeSuite):
    plugin = "majority"
    options = {"threshold": 1.0, "quorum": 0.0}


class TestUnanimous(BuiltinsOnly, JudgeSuite):
    plugin = "unanimous"


class TestStrict(BuiltinsOnly, JudgeSuite):
    plugin = "strict"


class TestCrossVendor(BuiltinsOnly, JudgeSuite):
    plugin = "cross-vendor"


class TestGate(BuiltinsOnly, AuditorSuite):
    plugin = "gate"


class TestGateShortReports(BuiltinsOnly, AuditorSuite):
    plugin = "gate"
    options = {"max-listed": 1}


class TestRecall(BuiltinsOnly, AuditorSuite):
    plugin = "recall"


class TestTerminal(BuiltinsOnly, ReporterSuite):
    plugin = "terminal"
    options = {"width": 100}


class TestMarkdown(ReporterSuite):
    """Found through `make_plugins()`, as a third-party plugin is: entry points included."""

    plugin = "markdown"


class TestJson(BuiltinsOnly, ReporterSuite):
    plugin = "json"


class TestHtml(BuiltinsOnly, ReporterSuite):
    plugin = "html"


# -- every built-in is covered ----------------------------------------------------------------


def test_every_kind_has_a_suite() -> None:
    assert set(SUITES) == set(KINDS)


def test_every_builtin_plugin_runs_its_kinds_suite(bugbout_plugins: Plugins) -> None:
    covered = {
        (cls.kind, cls.plugin)
        for cls in globals().values()
        if isinstance(cls, type) and cls.__name__.startswith("Test") and hasattr(cls, "kind")
    }
    builtins = {(plugin.kind, plugin.name) for plugin in bugbout_plugins.all()}
    assert builtins - covered == set()


# -- a third-party plugin, as its own tests would check it ------------------------------------


class Cautious:
    """Abstains unless every examiner's reproduction passes and there is exactly one
    candidate: a judge a risk-averse team might write."""

    name = "cautious"

    def __init__(self, options: Any = None) -> None:
        self.options = options

    def judge(self, matrix: Any, context: JudgeContext) -> Verdict:
        from bugbout.core.judge.judging import gather

        evidence = gather(matrix, context)
        approved = [
            name
            for name, found in evidence.patches.items()
            if found.unanimous and not found.breakages
        ]
        pick = approved[0] if len(approved) == 1 else None
        return Verdict(
            task_id=matrix.task_id,
            policy=self.name,
            pick=pick,
            reason="the only patch that passes everything" if pick else "abstained",
            approved=approved,
            support={name: found.score for name, found in evidence.patches.items()},
        )


class CautiousPlugin:
    @hookimpl
    def bugbout_judges(self) -> Iterator[JudgePlugin]:
        yield JudgePlugin(name="cautious", factory=Cautious)


class TestAnInlineJudge(JudgeSuite):
    """The suite on a plugin that is not installed: the ``plugins`` fixture registers it."""

    plugin = "cautious"

    @pytest.fixture
    def plugins(self, bugbout_plugins: Plugins, register_plugin: Callable[..., str]) -> Plugins:
        register_plugin(CautiousPlugin(), name="cautious-plugin")
        return bugbout_plugins


class SelfServing(Cautious):
    """Picks the first patch whatever the evidence: the suite must catch it."""

    name = "self-serving"

    def judge(self, matrix: Any, context: JudgeContext) -> Verdict:
        patches = [p for p in matrix.patches if p != "(unfixed)"]
        return Verdict(
            task_id=matrix.task_id,
            policy=self.name,
            pick=patches[0] if patches else None,
            reason="always the first",
        )


def test_the_suite_catches_a_judge_that_breaks_the_contract(
    bugbout_plugins: Plugins, register_plugin: Callable[..., str]
) -> None:
    class Plugin:
        @hookimpl
        def bugbout_judges(self) -> Iterator[JudgePlugin]:
            yield JudgePlugin(name="self-serving", factory=SelfServing)

    register_plugin(Plugin(), name="self-serving-plugin")
    judge = bugbout_plugins.create("judge", "self-serving")
    suite = JudgeSuite()
    with pytest.raises(AssertionError, match="own tests"):
        suite.test_never_picks_a_patch_supported_only_by_its_own_tests(judge)
    with pytest.raises(AssertionError, match="without evidence"):
        suite.test_abstains_when_nothing_reproduces_the_bug(judge)


# -- the fixtures -----------------------------------------------------------------------------


def test_bugbout_plugins_holds_the_builtins_only(bugbout_plugins: Plugins) -> None:
    assert set(bugbout_plugins.distributions.values()) == {"bugbout"}
    assert "majority" in bugbout_plugins.of_kind("judge")
    assert bugbout_plugins.problems == []


def test_register_plugin_registers_for_one_test(
    bugbout_plugins: Plugins, register_plugin: Callable[..., str]
) -> None:
    name = register_plugin(CautiousPlugin(), name="cautious-plugin")
    assert name == "cautious-plugin"
    assert bugbout_plugins.get("judge", "cautious").distribution == "<inline>"


def test_register_plugin_reports_a_misspelt_hook(register_plugin: Callable[..., str]) -> None:
    class Misspelt:
        @hookimpl
        def bugbout_judgez(self) -> list[JudgePlugin]:
            return []

    with pytest.raises(PluginError, match="bugbout_judgez"):
        register_plugin(Misspelt(), name="misspelt")


def test_register_plugin_unregisters_at_teardown(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["bugbout.testing.fixtures"]')
    pytester.makepyfile(
        """
        from bugbout import JudgePlugin, hookimpl

        class Plugin:
            @hookimpl
            def bugbout_judges(self):
                yield JudgePlugin(name="inline", factory=object)

        seen = []

        def test_register(bugbout_plugins, register_plugin):
            register_plugin(Plugin(), name="inline-plugin")
            assert "inline" in bugbout_plugins.of_kind("judge")
            seen.append(bugbout_plugins)

        def test_after():
            (plugins,) = seen
            assert "inline-plugin" not in plugins.distributions
            assert "inline" not in plugins.of_kind("judge")
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_make_repository(make_repository: Callable[..., RepositoryBuilder], tmp_path: Path) -> None:
    repo = make_repository()
    sha = repo.commit("Initial", {"a.txt": "a\n"})
    assert repo.path == tmp_path / "repo"
    assert repo.head() == sha
    other = make_repository("other")
    assert other.path == tmp_path / "other"
    with pytest.raises(FileExistsError):
        make_repository("other")


def test_fixed_bug_repository(fixed_bug_repository: FixedBugRepository) -> None:
    repo = fixed_bug_repository
    assert repo.builder.git("rev-parse", f"{repo.fix}^") == repo.parent
    subject = repo.builder.git("log", "-1", "--format=%s", repo.fix)
    assert subject == repo.fix_title
    changed = repo.builder.git("show", "--name-only", "--format=", repo.fix).splitlines()
    assert sorted(changed) == ["src/shapes/area.py", repo.test_file]
    issues = json.loads((repo.path / repo.issues_file).read_text())
    assert [issue["number"] for issue in issues] == [repo.issue]
    assert repo.mining_request().project == repo.project()


def test_model_server(model_server: Callable[..., ModelServer]) -> None:
    server = model_server([Say("Done.")])
    with urllib.request.urlopen(server.url + "/v1/models", timeout=5) as response:
        assert json.loads(response.read())["data"][0]["id"] == "scripted"
    assert [request.path for request in server.requests] == ["/v1/models"]


def test_bugbout_home(bugbout_home: Path) -> None:

    from bugbout.core.plumbing.runtime.home import bugbout_home as configured

    assert configured() == bugbout_home
    assert os.environ["BUGBOUT_HOME"] == str(bugbout_home)
    assert bugbout_home.is_dir()
    assert not any(bugbout_home.iterdir())
