"""Errors a user can cause: each prints as one line that says what to do."""

from __future__ import annotations


class BugboutError(Exception):
    """A problem with the user's input or machine, reported without a traceback."""


class ConfigError(BugboutError):
    """The configuration is invalid: a missing key, a misspelt option, an unknown plugin."""


class PluginError(BugboutError):
    """A plugin could not be found, loaded or used."""


class StoreError(BugboutError):
    """A record in the results store is missing or corrupt."""


class EnvironmentFailure(BugboutError):
    """A test environment could not be built or cannot run the tests."""
