"""File names in records: any name git allows, kept exactly through JSON.

In memory a file name (or a test id that starts with one) is the ``str``
``os.fsdecode`` gives: a byte that is not UTF-8 is a lone surrogate, so the name goes back
to the filesystem or to git unchanged. JSON cannot hold a lone surrogate, so in a
record's JSON a backslash is written ``\\\\`` and a byte that is not UTF-8 is written
``\\xNN`` (two lowercase hex digits); every other character is written as it is. Names
without a backslash or a stray byte, nearly all of them, read the same in the file.
"""

from __future__ import annotations

import os
import re
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, ValidationInfo

_STRAY = re.compile(r"[\\\udc80-\udcff]")
_ESCAPE = re.compile(r"\\(\\|x[89a-f][0-9a-f])|\\")


def to_text(name: str) -> str:
    """``name`` as a record's JSON holds it (valid UTF-8)."""
    return _STRAY.sub(_escape, name)


def from_text(text: str) -> str:
    """The name ``to_text`` wrote as ``text``."""
    return _ESCAPE.sub(_unescape, text)


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
    return from_text(value) if info.mode == "json" and isinstance(value, str) else value


FileName = Annotated[str, PlainSerializer(to_text, when_used="json"), BeforeValidator(_validate)]
"""A file name, or a test id that starts with one, in a record: exact through JSON."""
