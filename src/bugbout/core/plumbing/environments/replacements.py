"""What a release that stands in for its era's asks of the era's other requirements.

A distribution whose era offered no file uv installs is resolved as of its first release
that has one (:mod:`~bugbout.core.plumbing.environments.installable`): a later release takes
the era's place. That release may need more than the era had: a dependency with no fitting
release before the date (Twisted 19.7 needs zope.interface 4.4.2, of 2017), or a newer one
than the era's requirements pin (``zope.interface==4.0.5``). Rather than leave the
replacement out, each such dependency is exempted from the date up to its first fitting
release, and each requirement that conflicts with what the replacement needs is set aside
for that need, named with why; every other requirement stays as it is. A pin of the
replaced distribution itself that excludes its replacement is set aside too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from bugbout.core.plumbing.environments.backtrack import applies, blocking, requirements_of
from bugbout.core.plumbing.environments.package_index import PackageIndex
from bugbout.core.store.records import Exemption


@dataclass(frozen=True)
class Need:
    """What a replacement (or a release its needs let in) requires."""

    requirement: Requirement
    needed_by: str
    """The release that requires it, e.g. ``twisted 19.7.0``."""


@dataclass
class Replacements:
    """The releases that stand in for their era's, and what they need, for resolving on
    Python ``python`` as of ``date`` (ISO 8601 day) from ``index``."""

    index: PackageIndex
    python: str
    date: str
    releases: dict[str, tuple[Version, str]] = field(default_factory=dict)
    """Each replaced distribution (canonical name): its release standing in, and why."""
    needs: dict[str, list[Need]] = field(default_factory=dict)
    """What each replacement needs, its needs' needs included (when exempted)."""

    def add(self, name: str, version: Version, why: str, known: set[str]) -> list[Exemption]:
        """Take ``version`` of ``name`` in place of its era's (``why``: no release before it
        installs): the exemptions its needs ask for, but those of ``known`` names."""
        name = canonicalize_name(name)
        self.releases[name] = (version, why)
        files = self.index.releases(name).get(version, [])
        seen: list[tuple[Requirement, str]] = []
        found = blocking(
            self.index,
            requirements_of(self.index, files),
            f"{name} {version}",
            cutoff=datetime.fromisoformat(self.date).replace(tzinfo=UTC),
            python=self.python,
            seen=seen,
        )
        self.needs[name] = [
            Need(requirement, needed_by)
            for requirement, needed_by in seen
            if requirement.marker is None or applies(requirement.marker, self.python)
        ]
        return [
            e.model_copy(update={"reason": f"needed by {e.needed_by}: {e.reason}"})
            for e in found.values()
            if e.name not in known
        ]

    def applied(self, requirements: list[str]) -> list[str]:
        """``requirements`` with each one set aside replaced by what stands in for it."""
        instead = self._set_aside(requirements)
        return list(dict.fromkeys(instead[r][0] if r in instead else r for r in requirements))

    def set_aside(self, requirements: list[str]) -> dict[str, str]:
        """The requirements among ``requirements`` that are set aside, each with why."""
        return {r: why for r, (_, why) in self._set_aside(requirements).items()}

    def _set_aside(self, requirements: list[str]) -> dict[str, tuple[str, str]]:
        """Requirement -> (what stands in for it, why), for the replacements
        ``requirements`` name."""
        parsed = _parsed(requirements)
        named = {canonicalize_name(p.name) for p in parsed.values()}
        found: dict[str, tuple[str, str]] = {}
        for name, (version, why) in self.releases.items():
            if name not in named:
                continue
            for text, requirement in parsed.items():
                if canonicalize_name(
                    requirement.name
                ) == name and not requirement.specifier.contains(version, prereleases=True):
                    reason = f"set aside: {why}; {name} {version} stands in"
                    found.setdefault(text, (_with(requirement, SpecifierSet()), reason))
            for need in self.needs.get(name, []):
                for text, requirement in parsed.items():
                    if text not in found and self._conflict(requirement, need.requirement):
                        reason = (
                            f"set aside: {need.needed_by}, standing in for {name}'s release "
                            f"of the era, needs {need.requirement.name}{need.requirement.specifier}"
                        )
                        found[text] = (_with(requirement, need.requirement.specifier), reason)
        return found

    def _conflict(self, requirement: Requirement, need: Requirement) -> bool:
        """Whether ``requirement`` and ``need`` name one distribution that no release of
        the index satisfies both."""
        if canonicalize_name(requirement.name) != canonicalize_name(need.name):
            return False
        both = requirement.specifier & need.specifier
        return not any(both.contains(v) for v in self.index.releases(need.name))


def _with(requirement: Requirement, specifier: SpecifierSet) -> str:
    """``requirement`` with ``specifier`` in place of its own (extras and marker kept)."""
    changed = Requirement(str(requirement))
    changed.specifier = specifier
    return str(changed)


def _parsed(requirements: list[str]) -> dict[str, Requirement]:
    parsed: dict[str, Requirement] = {}
    for text in requirements:
        try:
            parsed[text] = Requirement(text)
        except InvalidRequirement:
            continue
    return parsed
