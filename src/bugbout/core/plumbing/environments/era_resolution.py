"""One era's resolution, made from its requirements and kept: resolved with the date
checks of :mod:`~bugbout.core.plumbing.environments.backtrack`, the era's pytest and what it
needs from the interpreter's time when the fix predates it, the oldest pytest bugbout's
runs take as a floor when the era's is older, and the era's build tools. Kept in
``BUGBOUT_HOME/resolutions``; the date cap is the first day of the month after the fix
(:func:`exclude_newer_date`)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path

from bugbout.core.contract.errors import EnvironmentFailure
from bugbout.core.plumbing.environments.pins import (
    RUNNER_FLOOR,
    runner_pins,
    too_old_reason,
    too_old_runner,
)
from bugbout.core.plumbing.environments.uv_program import (
    UvFailure,
    supports_exclude_newer_package,
)
from bugbout.core.plumbing.environments.uv_resolution import (
    BUILD_TOOLS,
    SETUPTOOLS_BEFORE,
    Resolution,
    Resolver,
    UvCall,
    raised,
    timed_out_reason,
)
from bugbout.core.store.records import Exemption


def runner_of(
    resolver: Resolver, requirements: list[str], until: str, python: str
) -> list[Exemption]:
    """When the fix's era predates the interpreter (its pytest would not run there): pytest
    and what it needs, as of ``until`` (the interpreter's time), as exemptions from the
    era's date; none otherwise."""
    from packaging.requirements import InvalidRequirement, Requirement

    call = resolver.call
    if call.exclude_newer is None or until <= call.exclude_newer:
        return []
    try:
        names = {Requirement(r).name.lower() for r in requirements}
    except InvalidRequirement:
        return []
    if "pytest" not in names:
        return []
    reason = f"the fix's predates Python {'.'.join(python.split('.')[:2])}"
    pinned = Resolver(replace(call, exclude_newer=until), resolver.interpreter, resolver.scratch)
    return [  # the build tools are free of the date anyway
        Exemption(name=name, until=until, reason=reason, needed_by="pytest")
        for name in (pin.split("==")[0] for pin in pinned.compile(["pytest"]))
        if name.lower() not in BUILD_TOOLS
    ]


def checked(
    resolver: Resolver,
    resolution: Resolution,
    *,
    index_url: str | None,
    direct: list[str],
    python: str,
) -> Resolution:
    """``resolution`` checked against the index's dates (when capped at one), resolved
    again with the blocking dependencies exempt (see
    :mod:`bugbout.core.plumbing.environments.backtrack`), and the declared test dependencies it left
    out tried again with them: the same blocker may be why they did not resolve (``pytest==3.8.2``
    needs atomicwrites)."""
    from bugbout.core.plumbing.environments.backtrack import check_era
    from bugbout.core.plumbing.environments.package_index import PackageIndex

    call = resolver.call
    if not call.exclude_newer:
        return resolution
    latest = [resolution.pinned]
    requirements, left_out = list(resolution.requirements), dict(resolution.left_out)

    def rebuild(exempt: list[Exemption]) -> list[str]:
        call.exempt = list(exempt)
        for requirement, why in list(left_out.items()):  # the exemptions may let it resolve
            set_aside = resolver.set_aside([requirement, *requirements])
            if timed_out_reason(why) or requirement in set_aside:
                continue
            try:
                resolver.compile([requirement, *requirements])
            except UvFailure:
                continue
            requirements.insert(0, requirement)
            del left_out[requirement]
        latest.append(resolver.compile(requirements))
        return latest[-1]

    era = check_era(
        PackageIndex(index_url),
        resolution.pinned,
        rebuild if supports_exclude_newer_package() else None,
        direct=direct,
        python=python,
        date=call.exclude_newer,
    )
    return resolution.model_copy(
        update={
            "pinned": latest[-1],
            "requirements": requirements,
            "left_out": left_out,
            "era": era,
            "era_build_tools": resolver.era_build_tools,
            "installable": list(call.installable),
        }
    )


def exclude_newer_date(fix_date: str) -> str:
    """The first day of the month after ``fix_date`` (ISO 8601), e.g. ``2021-07-01``."""
    year, month = int(fix_date[:4]), int(fix_date[5:7])
    year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return f"{year:04d}-{month:02d}-01"


def era_tools_date(exclude_newer: str | None, python_version: str) -> str | None:
    """The date the era's build tools are capped at: the month after the interpreter came
    out (its venvs carried the setuptools of that time, whatever the fix's date: older
    tools may not run on it), else the fix's era."""
    from bugbout.core.plumbing.environments.interpreters import PYTHON_RELEASES

    if exclude_newer is None:
        return None
    released = PYTHON_RELEASES.get(".".join(python_version.split(".")[:2]))
    return exclude_newer_date(released) if released else exclude_newer


@dataclass
class EraResolution:
    """One era's resolution: read from ``BUGBOUT_HOME/resolutions``, else made and kept
    there (unless it is short)."""

    home: Path
    era: str
    interpreter: Path
    version: str
    exclude_newer: str | None
    required: list[str]
    declared: list[str]
    index_url: str | None
    timeout: float

    def resolved(self) -> tuple[Resolution, list[str]]:
        """The resolution, and the era's build tools pinned (setuptools before 3.12)."""
        import tempfile

        path = self.home / "resolutions" / f"{self.era}.json"
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
            resolution = Resolution.model_validate(stored["resolution"])
            tools = list(stored["tools"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
        else:
            floored = not self._floor_untried(resolution) or stored.get("runner-floor")
            if floored and (not resolution.installable or stored.get("replacements")):
                return resolution, tools  # else: kept before the floor or replacements
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".resolving-", dir=path.parent) as scratch:
            resolution, tools = self._resolve(Path(scratch))
        if not resolution.short:
            handle, kept = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                kept_data = {"resolution": resolution.model_dump(mode="json"), "tools": tools}
                json.dump({**kept_data, "runner-floor": True, "replacements": True}, file)
            Path(kept).replace(path)
        return resolution, tools

    def _resolve(self, scratch: Path) -> tuple[Resolution, list[str]]:
        call = UvCall(self.exclude_newer, self.index_url, self.timeout, scratch)
        tools_date = era_tools_date(self.exclude_newer, self.version)
        resolver = Resolver(
            call,
            self.interpreter,
            scratch,
            python=self.version,
            tools_until=max(self.exclude_newer, tools_date)
            if self.exclude_newer and tools_date
            else None,
        )
        if tools_date is not None:
            try:
                call.runner = runner_of(resolver, self.required, tools_date, self.version)
            except UvFailure as failure:
                raise raised(failure) from None
        resolution = self._checked(resolver, self.required, self.declared)
        if self._floor_untried(resolution):
            resolution = self._floored(resolver, resolution)
        resolution = resolution.model_copy(update={"runner": call.runner})
        minor = tuple(int(part) for part in self.version.split(".")[:2])
        if minor >= SETUPTOOLS_BEFORE:
            return resolution, []
        tools_call = UvCall(
            tools_date,
            self.index_url,
            self.timeout,
            scratch,
            oldest_build_tools="",  # the interpreter's own, however old
        )
        tools = Resolver(tools_call, self.interpreter, scratch, era_build_tools=True)
        try:
            return resolution, tools.compile(["setuptools"])
        except UvFailure as failure:
            raise raised(failure) from None

    def _floor_untried(self, resolution: Resolution) -> bool:
        """Whether ``resolution`` holds a pytest older than bugbout's runs take, and the
        project's own requirements leave room for a newer one (its ``test-dependencies``
        pinning an old pytest are its choice: the runs then say so)."""
        return too_old_runner(resolution.pinned) and not runner_pins(self.required)

    def _floored(self, resolver: Resolver, resolution: Resolution) -> Resolution:
        """The requirements resolved again with the oldest pytest bugbout runs as a floor:
        the declared test dependencies that do not resolve with it (a pin of an older
        pytest, ``py==1.4.15``) are left out, a pin of pytest with why. ``resolution``
        when nothing resolves with the floor."""
        try:
            floored = self._checked(resolver, [*self.required, RUNNER_FLOOR], self.declared)
        except EnvironmentFailure:  # uv's failures among them
            return resolution
        reason = too_old_reason(resolution.pinned, floored.pinned)
        for pin in runner_pins(list(floored.left_out)):
            floored.left_out[pin] = reason
        return floored

    def _checked(self, resolver: Resolver, required: list[str], declared: list[str]) -> Resolution:
        """``required`` and as many of ``declared`` as resolve, checked against the
        index's dates."""
        return checked(
            resolver,
            resolver.resolve(required, declared),
            index_url=self.index_url,
            direct=[*required, *declared],
            python=self.version,
        )
