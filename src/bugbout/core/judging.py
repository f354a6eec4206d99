"""Removed: judge plugins import :mod:`bugbout.judges`. Still importable, with a
``DeprecationWarning``."""

from bugbout.core.contract.exports import moved

__getattr__ = moved(__name__, "bugbout.judges", "bugbout.core.judge.judging")
