"""What the agent adapters' tests share: a session to invoke them on, the environment the
race gives them, and the logs recorded from the real CLIs."""

from __future__ import annotations

from pathlib import Path

from bugbout.core.race.agents import CodingAgent, Session
from bugbout.onboarding.doctor import dummy_session

DATA = Path(__file__).parent / "data" / "agents"
NO_USAGE = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0}


def make_session(root: Path, prompt: str = "Fix the bug in add().") -> Session:
    return dummy_session(root, prompt)


def environment(agent: CodingAgent, session: Session) -> dict[str, str]:
    """The agent process's whole environment, as the race builds it."""
    return {**agent.environment(session), **agent.invocation(session).env}
