"""Scoring: a patch against the maintainers' hidden tests."""
