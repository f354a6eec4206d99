"""The plugin manager, built as a value: built-ins from an explicit list, third-party
plugins from the ``bugbout`` entry-point group.

A plugin that fails to import or to register is reported and skipped; two plugins that
claim one name are an error naming both distributions.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from types import ModuleType
from typing import Any

import pluggy

from bugbout.core import hookspecs
from bugbout.core.errors import ConfigError, PluginError
from bugbout.core.types import KINDS, PluginSpec

ENTRY_POINT_GROUP = "bugbout"
BUILTIN_DISTRIBUTION = "bugbout"
DISABLE_AUTOLOAD_VARIABLE = "BUGBOUT_DISABLE_PLUGIN_AUTOLOAD"
DISABLE_VARIABLE = "BUGBOUT_DISABLE_PLUGINS"


@dataclass(frozen=True)
class RegisteredPlugin:
    """A plugin record together with the plugin module and distribution it came from."""

    spec: PluginSpec
    source: str
    distribution: str

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass
class Plugins:
    """Every loaded plugin, by kind and name, and the problems met while loading them."""

    pm: pluggy.PluginManager
    distributions: dict[str, str] = field(default_factory=dict)
    """Registered plugin (module) name → the distribution that provided it."""
    problems: list[str] = field(default_factory=list)
    _by_kind: dict[str, dict[str, RegisteredPlugin]] | None = None

    @property
    def hook(self) -> Any:
        return self.pm.hook

    def register(
        self, plugin: object, name: str | None = None, distribution: str = "<inline>"
    ) -> str | None:
        """Register one plugin object (a module or an instance); ``None`` if it was skipped."""
        name = name or getattr(plugin, "__name__", None) or repr(plugin)
        if name in self.distributions:
            raise PluginError(
                f"two plugins are named {name!r}: one from {self.distributions[name]}, "
                f"one from {distribution}; uninstall one of them"
            )
        try:
            registered = self.pm.register(plugin, name=name)
        except pluggy.PluginValidationError as exc:
            self.problems.append(f"plugin {name!r} from {distribution} skipped: {exc}")
            return None
        self.distributions[name] = distribution
        self._by_kind = None
        return registered

    def unregister(self, name: str) -> None:
        self.pm.unregister(name=name)
        self.distributions.pop(name, None)
        self._by_kind = None

    def check_pending(self) -> None:
        """Skip (and report) plugins that implement a hook bugbout does not define."""
        for hook_name, caller in list(self.pm.hook.__dict__.items()):
            if not hook_name.startswith("bugbout_") or caller.spec is not None:
                continue
            for impl in caller.get_hookimpls():
                distribution = self.distributions.get(impl.plugin_name, "<inline>")
                self.problems.append(
                    f"plugin {impl.plugin_name!r} from {distribution} skipped: it implements "
                    f"{hook_name!r}, which is not a bugbout hook (misspelt?)"
                )
                self.unregister(impl.plugin_name)

    def notify(self, hook_name: str, **kwargs: Any) -> None:
        """Call a lifecycle hook; an implementation that raises is reported, not fatal."""
        caller = getattr(self.pm.hook, hook_name)
        for impl in caller.get_hookimpls():
            try:
                impl.function(**{name: kwargs[name] for name in impl.argnames})
            except Exception as exc:  # a plugin's crash must not lose the bout's work
                distribution = self.distributions.get(impl.plugin_name, "<inline>")
                self.problems.append(
                    f"plugin {impl.plugin_name!r} from {distribution}: {hook_name}() raised "
                    f"{type(exc).__name__}: {exc}"
                )

    def of_kind(self, kind: str) -> dict[str, RegisteredPlugin]:
        """Every plugin of ``kind`` by name."""
        if self._by_kind is None:
            self._by_kind = {name: self._collect(spec) for name, spec in KINDS.items()}
        try:
            return self._by_kind[kind]
        except KeyError:
            raise PluginError(
                f"unknown plugin kind {kind!r}; the kinds are {', '.join(KINDS)}"
            ) from None

    def get(self, kind: str, name: str) -> RegisteredPlugin:
        """The plugin of ``kind`` called ``name``; an error lists the valid names."""
        plugins = self.of_kind(kind)
        try:
            return plugins[name]
        except KeyError:
            raise ConfigError(
                f"no {kind} plugin named {name!r}; choose one of: "
                f"{', '.join(sorted(plugins)) or '(none installed)'}"
            ) from None

    def create(self, kind: str, name: str, options: dict[str, Any] | None = None) -> Any:
        """Build the implementation of plugin ``kind``/``name`` with its options."""
        return self.get(kind, name).spec.create(options)

    def all(self) -> list[RegisteredPlugin]:
        """Every plugin of every kind, in kind order then by name."""
        return [plugin for kind in KINDS for _, plugin in sorted(self.of_kind(kind).items())]

    def _collect(self, spec_type: type[PluginSpec]) -> dict[str, RegisteredPlugin]:
        caller = getattr(self.pm.hook, spec_type.hook)
        found: dict[str, RegisteredPlugin] = {}
        for impl in reversed(caller.get_hookimpls()):
            distribution = self.distributions.get(impl.plugin_name, "<inline>")
            try:
                records = list(impl.function() or ())
            except Exception as exc:  # a broken plugin must not stop the others
                self.problems.append(
                    f"plugin {impl.plugin_name!r} from {distribution} skipped: "
                    f"{spec_type.hook}() raised {type(exc).__name__}: {exc}"
                )
                continue
            for record in records:
                if not isinstance(record, spec_type):
                    self.problems.append(
                        f"plugin {impl.plugin_name!r} from {distribution}: {spec_type.hook}() "
                        f"returned {type(record).__name__}, not {spec_type.__name__}; ignored"
                    )
                    continue
                if record.name in found:
                    other = found[record.name]
                    raise PluginError(
                        f"two {spec_type.kind} plugins are named {record.name!r}: "
                        f"one from {other.distribution} ({other.source}), one from "
                        f"{distribution} ({impl.plugin_name}); uninstall or rename one"
                    )
                found[record.name] = RegisteredPlugin(record, impl.plugin_name, distribution)
        return found


def make_plugins(
    *,
    builtins: bool = True,
    entry_points: bool = True,
    blocked: Iterable[str] = (),
) -> Plugins:
    """Build a fresh plugin manager: the built-ins, then the entry-point plugins.

    ``BUGBOUT_DISABLE_PLUGIN_AUTOLOAD=1`` turns off entry points, and
    ``BUGBOUT_DISABLE_PLUGINS=a,b`` blocks plugins by entry-point name.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    plugins = Plugins(pm)
    blocked = {*blocked, *filter(None, os.environ.get(DISABLE_VARIABLE, "").split(","))}
    if builtins:
        from bugbout.plugins import BUILTIN_PLUGINS

        for module in _import_all(BUILTIN_PLUGINS):
            plugins.register(module, name=module.__name__, distribution=BUILTIN_DISTRIBUTION)
    if entry_points and not os.environ.get(DISABLE_AUTOLOAD_VARIABLE):
        _load_entry_points(plugins, blocked)
    plugins.check_pending()
    plugins.all()  # collect every kind now, so broken plugins are reported up front
    return plugins


def _import_all(names: Sequence[str]) -> list[ModuleType]:
    return [importlib.import_module(name) for name in names]


def _load_entry_points(plugins: Plugins, blocked: set[str]) -> None:
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry_point.name in blocked:
            continue
        distribution = _distribution_name(entry_point)
        try:
            plugin = entry_point.load()
        except Exception as exc:  # a plugin that cannot import is skipped, not fatal
            plugins.problems.append(
                f"plugin {entry_point.name!r} from {distribution} failed to import and was "
                f"skipped: {type(exc).__name__}: {exc}"
            )
            continue
        plugins.register(plugin, name=entry_point.name, distribution=distribution)


def _distribution_name(entry_point: metadata.EntryPoint) -> str:
    dist = entry_point.dist
    if dist is None:
        return "<unknown distribution>"
    return f"{dist.metadata['Name']} {dist.version}"
