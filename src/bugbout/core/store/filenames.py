"""File names and test ids in records: any name git or pytest gives, kept exactly through
JSON, and readable as plain JSON text whenever it is text.

In memory a file name (or a test id, which starts with one) is the ``str``
``os.fsdecode`` gives: a byte that is not UTF-8 is a lone surrogate, so the name goes back
to the filesystem or to git unchanged. In a record's JSON a name that is valid text is
written as it is, backslashes and all: a JSON parser reads pytest's own node id. JSON
cannot hold a lone surrogate, so a name holding a byte that is not UTF-8 is written
*escaped*: ``MARK`` (a NUL, ``\\u0000`` in the JSON, which no path or node id starts
with), then the name with each backslash written ``\\\\`` and each such byte ``\\xNN``
(two lowercase hex digits, ``to_text``). A name that starts with ``MARK`` is escaped too,
so every name reads back exactly.

Records written before format 2 (:mod:`bugbout.core.store.records`) escaped every name,
without ``MARK``; ``legacy_names`` reads them so.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, ValidationInfo

MARK = "\0"
"""Starts a name written escaped."""

_STRAY = re.compile(r"[\\\udc80-\udcff]")
_NOT_TEXT = re.compile(r"[\udc80-\udcff]")
_ESCAPE = re.compile(r"\\(\\|x[89a-f][0-9a-f])|\\")
_LEGACY: ContextVar[bool | None] = ContextVar("legacy_names", default=None)


def to_text(name: str) -> str:
    """``name`` escaped (valid UTF-8): each backslash doubled, each stray byte ``\\xNN``."""
    return _STRAY.sub(_escape, name)


def from_text(text: str) -> str:
    """The name ``to_text`` wrote as ``text``."""
    return _ESCAPE.sub(_unescape, text)


def stored(name: str) -> str:
    """``name`` as a record's JSON holds it: itself when it is valid text, else escaped."""
    if _NOT_TEXT.search(name) or name.startswith(MARK):
        return MARK + to_text(name)
    return name


def unstored(text: str) -> str:
    """The name ``stored`` wrote as ``text``."""
    return from_text(text[len(MARK) :]) if text.startswith(MARK) else text


@contextlib.contextmanager
def legacy_names(written_before: bool | None) -> Iterator[None]:
    """Read the names validated inside as a record of format 1 wrote them (every one
    escaped, no ``MARK``) when ``written_before``; ``None``: as the enclosing record says."""
    if written_before is None:
        yield
        return
    token = _LEGACY.set(written_before)
    try:
        yield
    finally:
        _LEGACY.reset(token)


def reading_legacy() -> bool | None:
    """Whether the record being read is of format 1 (``None``: no record said)."""
    return _LEGACY.get()


def _escape(match: re.Match[str]) -> str:
    character = match.group()
    if character == "\\":
        return "\\\\"
    return f"\\x{os.fsencode(character)[0]:02x}"


def _unescape(match: re.Match[str]) -> str:
    escape = match.group(1)
    if escape is None:
        raise ValueError(f"a lone backslash at {match.start()} (write it as \\\\)")
    if escape == "\\":
        return "\\"
    return os.fsdecode(bytes([int(escape[1:], 16)]))


def _validate(value: Any, info: ValidationInfo) -> Any:
    if info.mode != "json" or not isinstance(value, str):
        return value
    return from_text(value) if _LEGACY.get() else unstored(value)


def _validate_plain(value: Any, info: ValidationInfo) -> Any:
    if info.mode != "json" or not isinstance(value, str) or _LEGACY.get():
        return value
    return unstored(value)


FileName = Annotated[str, PlainSerializer(stored, when_used="json"), BeforeValidator(_validate)]
"""A file name in a record: exact through JSON, plain JSON text when it is text."""

TestId = FileName
"""A test's node id in a record, as pytest gave it: stored like a file name, since it
starts with one."""

PlainTestId = Annotated[
    str, PlainSerializer(stored, when_used="json"), BeforeValidator(_validate_plain)
]
"""A test id that format 1 wrote as it was (never escaped): stored as ``TestId`` now."""
