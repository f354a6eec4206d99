"""__DIST__ against bugbout's conformance suite for __KIND__ plugins.

The suite looks the plugin up by name among the installed ones, through the `bugbout`
entry point: install the package first (`pip install -e .`), then run `pytest`.
"""

from __future__ import annotations
