"""Removed: agent plugins import :mod:`bugbout.agents`. Still importable, with a
``DeprecationWarning``."""

from bugbout.core.contract.exports import moved

__getattr__ = moved(__name__, "bugbout.agents", "bugbout.core.race.agents")
