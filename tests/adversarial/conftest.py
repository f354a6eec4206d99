"""The adversarial suite: every test in this folder is marked ``adversarial``
(``pytest -m adversarial``); the machinery is in harness.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import Listener

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.adversarial)


@pytest.fixture(scope="session")
def listener() -> Iterator[Listener]:
    """A :class:`~harness.Listener` (TCP, UDP, abstract socket) open for the session."""
    with Listener() as opened:
        yield opened
