"""What the protocols share in their answers: usage figures, ids, JSON and server-sent events."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

INPUT_TOKENS = 100
"""Input tokens reported in every response's usage."""
OUTPUT_TOKENS = 20
"""Output tokens reported in every response's usage."""
AUXILIARY_TEXT = "OK"
"""What side requests (titles, quota checks, ...) are answered with."""

_ids = itertools.count(1)


def new_id(prefix: str) -> str:
    """A fresh id for a message, call or response: ``prefix`` then digits."""
    return f"{prefix}{next(_ids):06d}{int(time.time() * 1000) % 10**8:08d}"


@dataclass
class Reply:
    """An HTTP answer, and what the request it answers is recorded as."""

    status: int
    body: bytes
    content_type: str = "application/json"
    protocol: str = "other"
    step: int | None = None
    stream: bool = False


def json_reply(data: Any, *, status: int = 200, **kwargs: Any) -> Reply:
    """``data`` as a JSON answer."""
    return Reply(status, json.dumps(data).encode(), **kwargs)


def sse_reply(events: Iterable[tuple[str | None, Any]], **kwargs: Any) -> Reply:
    """A stream of server-sent events: ``(event name or None, JSON data)`` pairs."""
    chunks = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        chunks.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    body = "".join(chunks).encode()
    return Reply(200, body, content_type="text/event-stream", stream=True, **kwargs)
