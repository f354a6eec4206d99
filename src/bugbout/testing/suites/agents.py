"""The conformance suite of coding agents."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest

from bugbout.core.plumbing.confinement.untrusted import UntrustedFileError
from bugbout.core.race.agents import LOCALE_VARIABLES, VENDOR_KEYS, CodingAgent, Invocation, Session
from bugbout.onboarding.doctor import dummy_session
from bugbout.testing.suites.base import PluginSuite

PROMPT = "Fix the crash in ratio() when the reference is zero (conformance 7f3a)."
"""The session's prompt: plain words, so it reads the same in any file format."""
SECRET_VARIABLES = ("SECRET_TOKEN", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "NPM_TOKEN")
"""User variables no agent may receive."""
KEPT_VARIABLES = ("PATH", "HOME", *LOCALE_VARIABLES)
"""User variables the test environment keeps (everything else is removed)."""
SECRET = "a host secret (conformance 51d0)"
"""What a file the agent links to holds: no summary may show it."""


class AgentSuite(PluginSuite):
    """Contract tests for a coding-agent adapter (``bugbout_agents``).

    The adapter is a :class:`~bugbout.core.race.agents.CodingAgent` with a ``harness``, a
    ``name`` and a ``quota``; ``invocation(session)`` says how to start it (a non-empty
    argv, the prompt delivered, nothing written into the checkout); ``environment(session)``
    passes on nothing of the user's environment but ``PATH``, the locale and its own
    vendor's credentials, with a private ``HOME``; ``parse(logdir)`` reads whatever logs
    there are (none at all included) without raising, and none by following a link or
    waiting on a FIFO.

    Its executable need not be installed: where it is missing, a stub of that name is put
    on ``PATH`` for the test.
    """

    kind: ClassVar[str] = "agent"
    credentials: ClassVar[tuple[str, ...]] = ()
    """Variables besides its vendor's keys (``VENDOR_KEYS``) that the adapter may pass on
    from the user's environment, e.g. its provider's key."""

    @pytest.fixture
    def agent(self, plugin_under_test: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
        """The adapter, with its executable on ``PATH`` (a stub where it is missing)."""
        executable = str(getattr(plugin_under_test, "executable", "") or "")
        if executable and shutil.which(executable) is None:
            if os.sep in executable:
                pytest.skip(f"{executable} is not installed")
            stubs = tmp_path / "stub-bin"
            stubs.mkdir(exist_ok=True)
            stub = stubs / executable
            stub.write_text("#!/bin/sh\nexit 0\n")
            stub.chmod(0o755)
            monkeypatch.setenv("PATH", f"{stubs}{os.pathsep}{os.environ.get('PATH', '')}")
        return plugin_under_test

    @pytest.fixture
    def session(self, tmp_path: Path) -> Session:
        session = dummy_session(tmp_path, PROMPT)
        (session.workdir / "src" / "shapes").mkdir(parents=True)
        (session.workdir / "src" / "shapes" / "area.py").write_text(
            "def ratio(a, b):\n    return a / b\n"
        )
        run_tests = session.logdir / "bin" / "run-tests"
        run_tests.parent.mkdir()
        run_tests.write_text("#!/bin/sh\nexit 0\n")
        run_tests.chmod(0o755)
        return dataclasses.replace(session, test_command=str(run_tests))

    def test_is_a_coding_agent(self, agent: Any) -> None:
        assert isinstance(agent, CodingAgent)
        for attribute in ("harness", "name", "quota"):
            value = getattr(agent, attribute)
            assert isinstance(value, str), f"{attribute} is {type(value).__name__}"
            assert value.strip(), f"{attribute} is empty"

    def test_invocation(self, agent: Any, session: Session) -> None:
        invocation = agent.invocation(session)
        assert isinstance(invocation, Invocation)
        assert isinstance(invocation.argv, list)
        assert invocation.argv, "an empty command line"
        assert all(isinstance(part, str) for part in invocation.argv)
        assert invocation.stdin is None or isinstance(invocation.stdin, str)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in invocation.env.items())
        for endpoint in invocation.endpoints:
            assert endpoint.startswith(("http://", "https://")), endpoint

    def test_the_prompt_reaches_the_agent(self, agent: Any, session: Session) -> None:
        """On standard input, on the command line (the prompt or its file), or in a file
        the adapter wrote for the agent."""
        invocation = agent.invocation(session)
        if PROMPT in (invocation.stdin or "") or any(
            PROMPT in part or str(session.prompt_file) in part for part in invocation.argv
        ):
            return
        for directory in (session.logdir, session.home):
            for path in directory.rglob("*"):
                if (
                    path.is_file()
                    and path != session.prompt_file
                    and PROMPT in path.read_text(errors="replace")
                ):
                    return
        pytest.fail("the prompt reaches the agent neither on stdin, argv nor in a file")

    def test_invocation_leaves_the_checkout_alone(self, agent: Any, session: Session) -> None:
        def snapshot() -> dict[str, bytes]:
            return {
                str(path.relative_to(session.workdir)): path.read_bytes() if path.is_file() else b""
                for path in session.workdir.rglob("*")
            }

        before = snapshot()
        agent.invocation(session)
        assert snapshot() == before, "invocation() changed the checkout: that is the patch"

    def test_environment_passes_on_nothing_of_the_users(
        self, agent: Any, session: Session, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        own = {*VENDOR_KEYS.get(agent.vendor or "", ()), *self.credentials}
        foreign = sorted(
            {key for keys in VENDOR_KEYS.values() for key in keys} - own - set(agent.options.env)
        )
        for name in list(os.environ):
            if name not in KEPT_VARIABLES:
                monkeypatch.delenv(name)
        planted = {name: f"planted-{name.lower()}-9c1e" for name in (*SECRET_VARIABLES, *foreign)}
        for name in own:
            planted[name] = f"planted-own-{name.lower()}-9c1e"
        for name, value in planted.items():
            monkeypatch.setenv(name, value)
        env = agent.environment(session)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
        for name in (*SECRET_VARIABLES, *foreign):
            assert name not in env, f"{name} reached the agent"
            leaked = [key for key, value in env.items() if planted[name] in value]
            assert not leaked, f"{name}'s value reached the agent in {leaked}"
        allowed = {"PATH", *LOCALE_VARIABLES, *own, *agent.options.env}
        for key, value in env.items():
            if key in os.environ and os.environ[key] == value:
                assert key in allowed, f"the user's {key} reached the agent"
        assert env.get("HOME") == str(session.home), "the agent's HOME is not its private one"

    def test_parse_reads_an_empty_log_directory(self, agent: Any, tmp_path: Path) -> None:
        logdir = tmp_path / "empty-logs"
        logdir.mkdir()
        summary, usage = agent.parse(logdir)
        assert isinstance(summary, str)
        assert isinstance(usage, dict)
        assert all(isinstance(k, str) and isinstance(v, int) for k, v in usage.items())
        assert agent.hit_usage_limit(logdir, 0) is False
        assert agent.hit_usage_limit(logdir, 1) is False

    def test_parse_reads_garbage_logs(self, agent: Any, tmp_path: Path) -> None:
        logdir = tmp_path / "garbage-logs"
        logdir.mkdir()
        for name in ("stdout.log", "stderr.log", "last.txt", "trajectory.json"):
            (logdir / name).write_bytes(b'{not json\n\xff\xfe garbage\n{"type": 1}\n')
        summary, usage = agent.parse(logdir)
        assert isinstance(summary, str)
        assert isinstance(usage, dict)

    @pytest.mark.parametrize("planted", ["link", "fifo"])
    def test_parse_follows_no_link_and_waits_on_no_fifo(
        self, agent: Any, session: Session, tmp_path: Path, planted: str
    ) -> None:
        """Every file of the log folder the agent could write (its output streams, and the
        files the invocation names there) replaced by a link to a secret or a FIFO:
        ``parse`` reads none of them (it may refuse with ``UntrustedFileError``)."""
        secret = tmp_path / "secret.txt"
        secret.write_text(SECRET)
        invocation = agent.invocation(session)
        names = {"stdout.log", "stderr.log"} | {
            Path(part).name for part in invocation.argv if Path(part).parent == session.logdir
        }
        for name in names:
            path = session.logdir / name
            path.unlink(missing_ok=True)
            if planted == "link":
                path.symlink_to(secret)
            else:
                os.mkfifo(path)
        answer: list[str] = []

        def parse() -> None:
            try:
                answer.append(agent.parse(session.logdir)[0])
            except UntrustedFileError as exc:
                answer.append(str(exc))

        reader = threading.Thread(target=parse, daemon=True)
        reader.start()
        reader.join(timeout=10)
        if reader.is_alive():
            for name in names:  # let it go: a writer that closes at once
                os.close(os.open(session.logdir / name, os.O_WRONLY | os.O_NONBLOCK))
            pytest.fail(f"parse() blocked on a FIFO in the log folder ({sorted(names)})")
        assert answer and SECRET not in answer[0], "parse() followed a link to a host file"

    def test_settings_key_is_json(self, agent: Any, plugins: Any) -> None:
        key = agent.settings_key()
        assert isinstance(key, dict)
        text = json.dumps(key, sort_keys=True)
        fresh = plugins.create(self.kind, self.plugin, dict(self.options))
        assert json.dumps(fresh.settings_key(), sort_keys=True) == text
