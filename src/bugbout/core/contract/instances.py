"""Plugins of which a bout uses several (reporters, issue sources): a map of instances by
name, each naming its plugin under the kind's word and holding that plugin's options,
``reporters: {short: {reporter: html, title: Short}}``. An entry set to ``null`` is
removed; ``order`` (default 0) puts an entry before those with a higher one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.types import PluginSpec

T = TypeVar("T")

ORDER = "order"
"""The key of an instance that sets its place among the others (lower first)."""


@dataclass(frozen=True)
class Instance:
    """One entry of a map of instances: its name, its plugin's name and that plugin's options."""

    role: str
    """The settings key of the map, e.g. ``reporters``."""
    name: str
    plugin: str
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def where(self) -> str:
        """The entry's dotted key, e.g. ``reporters.short``."""
        return f"{self.role}.{self.name}"

    def build(self, plugins: Plugins, kind: type[PluginSpec[T]]) -> T:
        """The plugin's implementation with these options; a problem names the entry."""
        try:
            return plugins.create(kind, self.plugin, self.options)
        except ConfigError as exc:
            raise ConfigError(f"{self.where}: {exc}") from None

    def check(self, plugins: Plugins, kind: type[PluginSpec[Any]]) -> BaseModel:
        """The validated options; fail in one line, naming the entry, when its plugin is
        unknown or an option wrong."""
        try:
            return plugins.get(kind, self.plugin).spec.parse_options(self.options)
        except ConfigError as exc:
            raise ConfigError(f"{self.where}: {exc}") from None


def instance(
    role: str, kind: str, name: str, entry: Mapping[str, Any], example: str = ""
) -> Instance:
    """Entry ``name`` of map ``role``, naming its plugin under ``kind``; one line naming
    the entry when it names none (``example``, default ``name``, is the plugin its
    suggested fix names)."""
    options = dict(entry)
    plugin = options.pop(kind, None)
    if not plugin:
        raise ConfigError(
            f"{role}.{name} names no plugin; add `{kind}: <plugin>` to it, "
            f"e.g. `{role}: {{{name}: {{{kind}: {example or name}}}}}`"
        )
    return Instance(role, name, str(plugin), options)


def instances(
    role: str, kind: str, entries: Mapping[str, Mapping[str, Any] | None]
) -> list[Instance]:
    """The entries of map ``role`` that are set, in ascending ``order`` then as written;
    each names its plugin under ``kind`` (``reporter: html``)."""
    found = []
    for position, (name, entry) in enumerate(entries.items()):
        if entry is None:
            continue
        given = instance(role, kind, name, entry)
        order = given.options.pop(ORDER, 0)
        if not isinstance(order, int) or isinstance(order, bool):
            raise ConfigError(f"{role}.{name}.{ORDER}: must be a whole number, e.g. -1 or 2")
        found.append((order, position, given))
    return [given for *_, given in sorted(found, key=lambda item: item[:2])]
