"""Where bugbout keeps what outlives a bout on this machine (``BUGBOUT_HOME``)."""

from __future__ import annotations

import os
from pathlib import Path

from bugbout.core.contract.hookspecs import PROJECT_NAME


def bugbout_home() -> Path:
    """Where environments and scratch trees are cached: ``BUGBOUT_HOME`` or
    ``~/.cache/bugbout``."""
    configured = os.environ.get("BUGBOUT_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / PROJECT_NAME
