"""Helpers for testing bugbout and its plugins: synthetic repositories with fix commits."""

from bugbout.testing.repository import RepositoryBuilder

__all__ = ["RepositoryBuilder"]
