"""Pinned requirements: a pin's distribution name, and the pytest an era's pins hold
against the oldest bugbout's test runs take (:data:`RUNNER_FLOOR`)."""

from __future__ import annotations

import re

from bugbout.core.plumbing.environments.pytest_era import OLDEST


def name_of(pin: str) -> str:
    """The normalised distribution name of ``name==version``."""
    return pin.split("==", 1)[0].strip().lower().replace("_", "-")


RUNNER_FLOOR = f"pytest>={'.'.join(map(str, OLDEST))}"
"""The requirement that holds an era's pytest to the oldest bugbout's runs take."""


def runner_pins(requirements: list[str]) -> list[str]:
    """The requirements that constrain pytest's version."""
    from packaging.requirements import InvalidRequirement, Requirement

    pins = []
    for requirement in requirements:
        try:
            parsed = Requirement(requirement)
        except InvalidRequirement:
            continue
        if name_of(parsed.name) == "pytest" and parsed.specifier:
            pins.append(requirement)
    return pins


def runner_version(pinned: list[str]) -> tuple[int, ...] | None:
    for pin in pinned:
        if name_of(pin) == "pytest":
            digits = re.findall(r"\d+", pin.split("==", 1)[1])
            return tuple(int(part) for part in digits[:2])
    return None


def too_old_runner(pinned: list[str]) -> bool:
    """Whether ``pinned`` holds a pytest older than the oldest bugbout's runs take."""
    version = runner_version(pinned)
    return version is not None and version < OLDEST


def too_old_reason(old: list[str], floored: list[str]) -> str:
    """Why a pin of pytest is set aside: the pytest it gave, and the one that runs."""
    was, now = (".".join(map(str, runner_version(pins) or ())) for pins in (old, floored))
    return (
        f"set aside: it holds pytest at {was}, older than {'.'.join(map(str, OLDEST))}, the "
        f"oldest bugbout's test runs take (no hook wrappers); pytest {now} runs instead"
    )
