"""What verifying a run's outcome stream costs bugbout's own process: every line's HMAC
from two hash states keyed once per stream, never a keyed ``hmac`` object copied per line,
and the same signatures as :mod:`hmac` for any key."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from bugbout.core.plumbing.tampering import canaries
from bugbout.core.plumbing.tampering.canaries import key_line, read_outcomes

KEY = "0123456789abcdef" * 4


def _signed(record: dict[str, object], key: str = KEY) -> bytes:
    """A line as the plugin writes it: the sorted record, its signature put last."""
    body = json.dumps(record, sort_keys=True)
    mac = hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest()
    return (body[:-1] + f', "mac": "{mac}"}}').encode()


def _stream(count: int, key: str = KEY) -> bytes:
    records: list[dict[str, object]] = [
        {"nodeid": f"t.py::test_{n}", "when": "call", "outcome": "passed"} for n in range(count)
    ]
    records.append({"summary": {"reports": count, "changes": [], "impostors": []}})
    lines = [_signed({**record, "seq": n}, key) for n, record in enumerate(records)]
    return key_line(key) + b"\n".join(lines) + b"\n"


def test_a_stream_is_verified_without_a_keyed_hmac_per_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = _stream(300)
    made: list[str] = []
    real_new, real_copy = hmac.new, hmac.HMAC.copy
    monkeypatch.setattr(hmac, "new", lambda *a, **k: made.append("new") or real_new(*a, **k))
    monkeypatch.setattr(hmac.HMAC, "copy", lambda self: made.append("copy") or real_copy(self))

    stream = read_outcomes(data, KEY)
    monkeypatch.undo()

    assert stream.tampering == []
    assert len(stream.reports) == 300
    assert made == [], f"{made.count('copy')} keyed copies, {made.count('new')} keyed objects"


def test_a_line_signed_under_another_key_is_still_found() -> None:
    data = _stream(20)
    forged = _stream(20, "f" * 64).splitlines()[5]
    lines = data.splitlines()
    lines[5] = forged

    stream = read_outcomes(b"\n".join(lines) + b"\n", KEY)

    assert "outcome line 5 is not bugbout's (bad signature)" in stream.tampering
    assert len(stream.reports) == 19


@pytest.mark.parametrize("length", [0, 1, 32, 63, 64, 65, 200])
def test_the_signatures_are_hmac_s_for_any_key_length(length: int) -> None:
    secret = bytes(range(length))
    bodies = [b"", b"{}", b'{"nodeid": "t.py::test_x"}', bytes(range(256)) * 3]

    expected = b"".join(hmac.new(secret, body, hashlib.sha256).digest() for body in bodies)

    assert canaries._macs(secret, bodies) == expected
