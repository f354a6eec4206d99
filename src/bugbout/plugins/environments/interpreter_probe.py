"""Run by the ``interpreter`` environment builder in the interpreter it is given (any
Python from 3.6): prints, as one JSON object, the interpreter's ``version``, its installed
distributions with what each requires (``requires``: normalised names, extras aside) and
its pytest plugins (``plugins``: ``[entry point, distribution]``). The builder reads
which plugins only bugbout brings from these facts. Importing pytest fails loudly, on
purpose: an interpreter without it cannot run tests.
"""

import json
import re
import sys

import pytest  # noqa: F401  (the interpreter must have it)


def normalised(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def facts() -> "dict[str, object]":
    """What the builder needs; no distributions before Python 3.8 (no importlib.metadata)."""
    found: dict[str, object] = {"version": ".".join(map(str, sys.version_info[:3]))}
    try:
        from importlib import metadata
    except ImportError:
        return {**found, "requires": {}, "plugins": []}
    requires: dict[str, list[str]] = {}
    plugins = []
    for distribution in metadata.distributions():
        name = normalised(distribution.metadata["Name"] or "")
        needs = requires.setdefault(name, [])
        for requirement in distribution.requires or []:
            marker = requirement.partition(";")[2]
            named = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
            if named and not re.search(r"\bextra\s*==", marker):
                needs.append(normalised(named.group(1)))
        plugins += [
            [entry.name, name] for entry in distribution.entry_points if entry.group == "pytest11"
        ]
    return {**found, "requires": requires, "plugins": sorted(plugins)}


sys.stdout.write(json.dumps(facts()))
