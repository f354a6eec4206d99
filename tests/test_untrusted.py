"""Reading files an agent could write (``read_untrusted``), and how an attempt's logs are
kept from it and concluded (``Captures``, ``conclude``)."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from bugbout.core.plumbing.confinement.process import Finished
from bugbout.core.plumbing.confinement.untrusted import (
    UntrustedFileError,
    read_untrusted,
    read_untrusted_bytes,
)
from bugbout.core.race.logs import Captures, conclude, last_line
from bugbout.core.store.race_records import AttemptStatus
from bugbout.plugins.agents.codex import CodexAgent
from bugbout.plugins.agents.command import CommandAgent
from bugbout.plugins.agents.mini_swe_agent import MiniSweAgent

SECRET = "the-user's-secret-7f3a"


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    return folder


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET)
    return path


def test_a_regular_file_is_read_with_bad_bytes_replaced(logdir: Path) -> None:
    (logdir / "out.log").write_bytes(b"caf\xc3\xa9 \xff done\n")
    assert read_untrusted(logdir / "out.log") == "café \ufffd done\n"
    assert read_untrusted_bytes(logdir / "out.log") == b"caf\xc3\xa9 \xff done\n"


def test_a_missing_file_is_none(logdir: Path) -> None:
    assert read_untrusted(logdir / "absent.txt") is None


def test_a_symlink_is_never_followed(logdir: Path, secret: Path) -> None:
    (logdir / "stdout.log").symlink_to(secret)
    with pytest.raises(UntrustedFileError) as caught:
        read_untrusted(logdir / "stdout.log")
    message = str(caught.value)
    assert message.startswith("logs/stdout.log is a symbolic link to ")
    assert str(secret) in message
    assert SECRET not in message


def test_a_link_to_a_device_is_refused_at_once(logdir: Path) -> None:
    (logdir / "stdout.log").symlink_to("/dev/zero")
    with pytest.raises(UntrustedFileError, match="symbolic link to '/dev/zero'"):
        read_untrusted(logdir / "stdout.log", tail=True)


def test_a_fifo_is_never_waited_on(logdir: Path) -> None:
    os.mkfifo(logdir / "last.txt")
    started = time.monotonic()
    with pytest.raises(UntrustedFileError, match=r"^logs/last.txt is a FIFO, not a regular"):
        read_untrusted(logdir / "last.txt")
    assert time.monotonic() - started < 1


def test_a_directory_and_a_socket_are_refused(logdir: Path, tmp_path: Path) -> None:
    (logdir / "trajectory.json").mkdir()
    with pytest.raises(UntrustedFileError, match="is a directory"):
        read_untrusted(logdir / "trajectory.json")
    short = Path("/tmp") / f"bugbout-sock-{os.getpid()}"  # unix socket paths are short
    short.mkdir(exist_ok=True)
    try:
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(short / "s"))
            with pytest.raises(UntrustedFileError, match=r"-\d+/s is a socket, not a regular file"):
                read_untrusted(short / "s")
    finally:
        (short / "s").unlink(missing_ok=True)
        short.rmdir()


def test_a_file_over_the_bound_is_refused_or_read_from_its_end(logdir: Path) -> None:
    path = logdir / "trajectory.json"
    path.write_bytes(b"a" * 1000 + b"THE END")
    with pytest.raises(UntrustedFileError, match=r"^logs/trajectory.json is larger than 1 kB"):
        read_untrusted(path, limit=1000)
    assert read_untrusted(path, limit=1007) == "a" * 1000 + "THE END"
    assert read_untrusted(path, limit=10, tail=True) == "aaaTHE END"


def test_a_huge_sparse_file_costs_no_memory(logdir: Path) -> None:
    path = logdir / "stdout.log"
    with path.open("wb") as handle:
        handle.truncate(50 * 1024**3)  # 50 GB of holes
    with pytest.raises(UntrustedFileError, match="larger than 5 MB"):
        read_untrusted(path)
    assert read_untrusted(path, limit=100, tail=True) == "\0" * 100


# -- the attempt's logs ------------------------------------------------------------------------


def finished(exit_code: int | None = 0, *, timed_out: bool = False) -> Finished:
    return Finished(exit_code=exit_code, timed_out=timed_out, duration=1.0)


def captured(tmp_path: Path, stdout: str, stderr: str = "") -> Captures:
    captures = Captures(tmp_path / "streams").create()
    captures.stdout.write_text(stdout)
    captures.stderr.write_text(stderr)
    return captures


def command_agent() -> CommandAgent:
    return CommandAgent(name="agent", command=["true"])


def test_captures_are_published_into_the_log_folder(tmp_path: Path, logdir: Path) -> None:
    captures = captured(tmp_path, "All done.\n", "a warning\n")
    (logdir / "own.txt").write_text("the agent's own file")
    assert captures.publish(logdir) is None
    assert (logdir / "stdout.log").read_text() == "All done.\n"
    assert (logdir / "stderr.log").read_text() == "a warning\n"
    assert (logdir / "own.txt").read_text() == "the agent's own file"
    assert not captures.folder.exists()


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory", "file"])
def test_what_the_agent_put_where_bugbouts_logs_go_is_replaced_and_said(
    tmp_path: Path, logdir: Path, secret: Path, kind: str
) -> None:
    captures = captured(tmp_path, "What it really printed.\n")
    target = logdir / "stdout.log"
    if kind == "symlink":
        target.symlink_to(secret)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "directory":
        (target / "inner").mkdir(parents=True)
        (target / "inner" / "link").symlink_to(secret)
    else:
        target.write_text("I fixed everything, trust me.")
    said = captures.publish(logdir)
    assert said is not None
    assert said.startswith("the agent wrote logs/stdout.log itself (")
    assert target.is_file() and not target.is_symlink()
    assert target.read_text() == "What it really printed.\n"
    assert secret.read_text() == SECRET  # nothing followed, nothing removed outside
    ending = conclude(command_agent(), logdir, finished(), empty_patch=False, tampered=said)
    assert ending.status == AttemptStatus.AGENT_ERROR
    assert ending.error == said
    assert ending.summary == "What it really printed."


def test_an_adapter_file_that_is_a_link_makes_the_attempt_an_agent_error(
    tmp_path: Path, logdir: Path, secret: Path
) -> None:
    captured(tmp_path, '{"type": "turn.completed", "usage": {"output_tokens": 5}}\n').publish(
        logdir
    )
    (logdir / "last.txt").symlink_to(secret)
    ending = conclude(CodexAgent(), logdir, finished(), empty_patch=False, tampered=None)
    assert ending.status == AttemptStatus.AGENT_ERROR
    assert ending.error is not None and ending.error.startswith("logs/last.txt is a symbolic link")
    assert SECRET not in ending.summary


def test_a_trajectory_nested_too_deep_is_no_crash(logdir: Path) -> None:
    (logdir / "trajectory.json").write_text("[" * 200_000)
    agent = MiniSweAgent("openai/gpt-5")
    summary, _ = agent.parse(logdir)
    assert isinstance(summary, str)
    ending = conclude(agent, logdir, finished(1), empty_patch=True, tampered=None)
    assert ending.status == AttemptStatus.AGENT_ERROR


def test_an_adapter_that_fails_on_its_logs_is_the_agents_doing(logdir: Path) -> None:
    class Fragile(CommandAgent):
        def parse(self, logdir: Path) -> tuple[str, dict[str, int]]:
            raise RecursionError("maximum recursion depth exceeded")

    (logdir / "stdout.log").write_text("the end of what it said\n")
    agent = Fragile(name="agent", command=["true"])
    ending = conclude(agent, logdir, finished(), empty_patch=False, tampered=None)
    assert ending.status == AttemptStatus.AGENT_ERROR
    assert ending.error == (
        "its logs could not be read: RecursionError: maximum recursion depth exceeded"
    )
    assert ending.summary == "the end of what it said"


CASES = [
    (finished(0), False, "", AttemptStatus.FINISHED, None),
    (finished(None, timed_out=True), False, "", AttemptStatus.TIMEOUT, None),
    (finished(1), True, "Error: you hit your usage limit\n", AttemptStatus.QUOTA, None),
    (finished(3), False, "boom\n\n", AttemptStatus.AGENT_ERROR, "boom"),
]


@pytest.mark.parametrize("case", CASES, ids=["finished", "timeout", "quota", "agent-error"])
def test_how_an_attempt_ended(tmp_path: Path, logdir: Path, case: tuple[Any, ...]) -> None:
    ended, empty, stderr, status, error = case
    captured(tmp_path, "said\n", stderr).publish(logdir)
    ending = conclude(command_agent(), logdir, ended, empty_patch=empty, tampered=None)
    assert (ending.status, ending.error, ending.summary) == (status, error, "said")


def test_the_error_line_of_a_log_that_is_not_a_file_says_so(logdir: Path) -> None:
    os.mkfifo(logdir / "stderr.log")
    assert last_line(logdir / "stderr.log") == (
        "logs/stderr.log is a FIFO, not a regular file (bugbout reads no other kind)"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and removes whatever it likes")
def test_what_the_agent_locked_is_taken_back_or_refused(tmp_path: Path, logdir: Path) -> None:
    captures = captured(tmp_path, "printed\n")
    locked = logdir / "stdout.log" / "locked"
    (locked / "deeper").mkdir(parents=True)
    (logdir / "last.txt").write_text("mine")
    (logdir / "last.txt").chmod(0)
    locked.chmod(0)
    logdir.chmod(0)
    said = captures.publish(logdir)
    assert said is not None and "(a directory)" in said
    assert (logdir / "stdout.log").read_text() == "printed\n"
    with pytest.raises(UntrustedFileError, match=r"^cannot read logs/last.txt: Permission denied"):
        read_untrusted(logdir / "last.txt")
