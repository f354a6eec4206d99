"""The plugin manager, built as a value: built-ins from an explicit list, third-party
plugins from the ``bugbout`` entry-point group.

A plugin that fails to import or to register is reported and skipped; two plugins that
claim one name are an error naming both distributions. Every problem is one line that
names the plugin module and its distribution.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, TypeVar, overload

import pluggy
from pydantic import ValidationError

from bugbout.core.contract import hookspecs
from bugbout.core.contract.errors import ConfigError, PluginError
from bugbout.core.contract.plugin_problems import (
    close_hook,
    describe,
    invalid_hookimpl,
    options_problem,
    unimportable,
    unmarked_hooks,
    validation_problems,
)
from bugbout.core.contract.types import KINDS, RENAMED_KINDS, PluginSpec

ENTRY_POINT_GROUP = "bugbout"
BUILTIN_DISTRIBUTION = "bugbout"
DISABLE_AUTOLOAD_VARIABLE = "BUGBOUT_DISABLE_PLUGIN_AUTOLOAD"
DISABLE_VARIABLE = "BUGBOUT_DISABLE_PLUGINS"

_LIFECYCLE = ("bugbout_before_", "bugbout_after_")
"""How the names of the lifecycle hooks begin."""
T = TypeVar("T")
Kind = str | type[PluginSpec[Any]]
"""A plugin kind: its record type (``JudgePlugin``), or its word (``"judge"``)."""


@dataclass(frozen=True)
class RegisteredPlugin:
    """A plugin record together with the plugin module and distribution it came from."""

    spec: PluginSpec[Any]
    source: str
    distribution: str

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass(frozen=True)
class Deferred:
    """A plugin module registered before it is imported."""

    module: str
    name: str
    """The name it is registered under (a built-in's is its module's)."""
    distribution: str
    registers: str = ""
    """The one plugin it registers, when its name says: a built-in's module is named after
    its plugin (``git_history``: ``git-history``), and a module of bugbout's plugin folders
    installed as an entry point is installed under its plugin's name; asking its kind for
    another plugin does not import it."""


@dataclass
class Plugins:
    """Every loaded plugin, by kind and name, and the problems met while loading them."""

    pm: pluggy.PluginManager
    distributions: dict[str, str] = field(default_factory=dict)
    """Registered plugin (module) name → the distribution that provided it."""
    problems: list[str] = field(default_factory=list)
    deferred: dict[str, list[Deferred]] = field(default_factory=dict)
    """Plugin modules not imported yet, by kind: the built-ins, and the entry points whose
    module's folder says its kind; imported when their kind is first asked for (so a
    command imports only the kinds it uses), an entry point also when its plugin is."""
    _by_kind: dict[str, dict[str, RegisteredPlugin]] = field(default_factory=dict)
    _noted: set[str] = field(default_factory=set)
    """Problems found while collecting records: reported once, however often we collect."""
    _order: dict[str, int] = field(default_factory=dict)
    """Registered plugin name → its place: a deferred built-in keeps its place in
    :data:`BUILTIN_PLUGINS`, ahead of the entry points, whenever it is imported."""

    @property
    def hook(self) -> Any:
        """Pluggy's hook caller, every deferred module imported first (an agent module
        implements ``bugbout_transcript`` too)."""
        for kind in list(self.deferred):
            self._import_deferred(kind)
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
        skipped = f"plugin {name!r} from {distribution} skipped"
        if self.pm.is_registered(plugin):
            other = self.pm.get_name(plugin)
            self.problems.append(f"{skipped}: it is already registered as {other!r}")
            return None
        try:
            registered = self.pm.register(plugin, name=name)
        except pluggy.PluginValidationError as exc:
            if self.pm.get_plugin(name) is not None:  # pluggy leaves it half-registered
                self.pm.unregister(name=name)
            self.problems.append(f"{skipped}: {invalid_hookimpl(self.pm, plugin, exc)}")
            return None
        self.distributions[name] = distribution
        self._order.setdefault(name, len(self._order))
        self._by_kind = {}
        self._guard(name)
        for attribute in unmarked_hooks(plugin):
            self.problems.append(
                f"plugin {name!r} from {distribution}: {attribute} is not marked @hookimpl, "
                "so bugbout ignores it; add `from bugbout import hookimpl` and decorate it"
            )
        return registered

    def unregister(self, name: str) -> None:
        self.pm.unregister(name=name)
        self.distributions.pop(name, None)
        self._by_kind = {}

    def check_pending(self) -> None:
        """Skip (and report) plugins that implement a hook bugbout does not define."""
        for hook_name, caller in list(self.pm.hook.__dict__.items()):
            if not hook_name.startswith("bugbout_") or caller.spec is not None:
                continue
            if hook_name in hookspecs.RENAMED_HOOKS:  # collected under its new name
                continue
            close = close_hook(hook_name)
            hint = f"; did you mean {close!r}?" if close else " (misspelt?)"
            for impl in caller.get_hookimpls():
                distribution = self.distributions.get(impl.plugin_name, "<inline>")
                self.problems.append(
                    f"plugin {impl.plugin_name!r} from {distribution} skipped: it implements "
                    f"{hook_name!r}, which is not a bugbout hook{hint}"
                )
                self.unregister(impl.plugin_name)

    def notify(self, hook_name: str, **kwargs: Any) -> None:
        """Call a lifecycle hook as pluggy does (``tryfirst``, ``trylast``, wrappers around
        the rest); an implementation that raises is reported, not fatal: the others are
        still called. A wrapper that raises is reported too (those inside it have run)."""
        caller = getattr(self.pm.hook, hook_name)
        try:
            caller(**kwargs)
        except Exception as exc:  # a wrapper's: a plugin's crash must not lose the bout's work
            self.problems.append(
                f"{self._raiser(caller, exc)}: {hook_name}() raised {describe(exc)}"
            )

    def _guard(self, name: str) -> None:
        """Make each lifecycle hook implementation of plugin ``name`` that is not a wrapper
        report what it raises instead of raising it, so the others are still called."""
        for caller in self.pm.get_hookcallers(self.pm.get_plugin(name)) or []:
            if not caller.name.startswith(_LIFECYCLE):
                continue
            for impl in caller.get_hookimpls():
                if impl.plugin_name == name and not (impl.wrapper or impl.hookwrapper):
                    guarded = self._reporting(impl.function, name, caller.name)
                    # pluggy has no per-implementation guard; what it calls is this slot
                    object.__setattr__(impl, "function", guarded)

    def _reporting(self, function: Any, name: str, hook_name: str) -> Any:
        def reporting(*args: Any) -> None:
            try:
                function(*args)
            except Exception as exc:
                distribution = self.distributions.get(name, "<inline>")
                self.problems.append(
                    f"plugin {name!r} from {distribution}: {hook_name}() raised {describe(exc)}"
                )

        return reporting

    def _raiser(self, caller: pluggy.HookCaller, exc: Exception) -> str:
        """``plugin 'name' from distribution``: the implementation of ``caller`` that
        raised ``exc``, found in its traceback."""
        codes = {impl.function.__code__: impl.plugin_name for impl in caller.get_hookimpls()}
        traceback, name = exc.__traceback__, ""
        while traceback is not None:
            name = codes.get(traceback.tb_frame.f_code, name)
            traceback = traceback.tb_next
        return f"plugin {name!r} from {self.distributions.get(name, '<inline>')}"

    def of_kind(self, kind: Kind) -> dict[str, RegisteredPlugin]:
        """Every plugin of ``kind`` by name (its deferred modules imported first)."""
        word = _word(kind)
        self._import_deferred(word)
        return self._collected(word)

    def _collected(self, word: str) -> dict[str, RegisteredPlugin]:
        """The plugins of kind ``word`` registered so far, by name."""
        if word not in self._by_kind:
            self._by_kind[word] = self._collect(KINDS[word])
        return self._by_kind[word]

    def defer(self, modules: Sequence[str]) -> None:
        """Register the built-in plugin ``modules`` in this order, each imported when its
        kind or its plugin is first asked for."""
        for module in modules:
            plugin = module.rsplit(".", 1)[-1].replace("_", "-")
            deferred = Deferred(module, module, BUILTIN_DISTRIBUTION, registers=plugin)
            self._defer(builtin_kind(module), deferred)

    def _defer(self, kind: str, plugin: Deferred) -> None:
        self._order.setdefault(plugin.name, len(self._order))
        self.deferred.setdefault(kind, []).append(plugin)

    def _import_deferred(self, kind: str, name: str | None = None) -> None:
        """Import the deferred modules of ``kind``; given ``name``, not those that
        :attr:`~Deferred.registers` another plugin (they wait for their kind)."""
        waiting = self.deferred.pop(kind, [])
        later = [p for p in waiting if name and p.registers and p.registers != name]
        if later:
            self.deferred[kind] = later
        for plugin in waiting:
            if plugin in later:
                continue
            try:
                module = importlib.import_module(plugin.module)
            except Exception as exc:  # an installed plugin that cannot import is skipped
                if plugin.distribution == BUILTIN_DISTRIBUTION:
                    raise  # a built-in that cannot import is bugbout's own defect
                self.problems.append(unimportable(plugin.name, plugin.distribution, exc))
                continue
            self.register(module, name=plugin.name, distribution=plugin.distribution)

    def get(self, kind: Kind, name: str) -> RegisteredPlugin:
        """The plugin of ``kind`` called ``name``; an error lists the valid names. The
        deferred modules named after other plugins are not imported for it."""
        word = _word(kind)
        self._import_deferred(word, name)
        plugins = self._collected(word)
        if name not in plugins:
            plugins = self.of_kind(word)
        try:
            return plugins[name]
        except KeyError:
            raise ConfigError(
                f"no {word} plugin named {name!r}; choose one of: "
                f"{', '.join(sorted(plugins)) or '(none installed)'}"
            ) from None

    @overload
    def create(
        self, kind: type[PluginSpec[T]], name: str, options: Mapping[str, Any] | None = None
    ) -> T: ...

    @overload
    def create(self, kind: str, name: str, options: Mapping[str, Any] | None = None) -> Any: ...

    def create(self, kind: Kind, name: str, options: Mapping[str, Any] | None = None) -> Any:
        """Build the implementation of plugin ``kind``/``name`` with its options.

        Given the kind's record type (``JudgePlugin``), the result is typed as the kind's
        protocol; given only the kind's word (read from configuration), it is not. The
        options are validated against the plugin's options model first.
        """
        spec = self.get(kind, name).spec
        return spec.factory(spec.parse_options(dict(options or {})))

    def all(self) -> list[RegisteredPlugin]:
        """Every plugin of every kind, in kind order then by name."""
        return [plugin for kind in KINDS for _, plugin in sorted(self.of_kind(kind).items())]

    def _place(self, impl: pluggy.HookImpl) -> int:
        """Where ``impl``'s plugin stands in registration order (deferred built-ins first);
        the last registered is asked first, as pluggy calls them."""
        return self._order.get(impl.plugin_name, len(self._order))

    def _note(self, problem: str) -> None:
        if problem not in self._noted:
            self._noted.add(problem)
            self.problems.append(problem)

    def _implementations(self, hook: str) -> list[tuple[str, Any]]:
        """The implementations of ``hook``, then those of its old names (noted once, as
        a problem), each with the name it implements."""
        found: list[tuple[str, Any]] = []
        for name in (hook, *(old for old, new in hookspecs.RENAMED_HOOKS.items() if new == hook)):
            caller = getattr(self.pm.hook, name, None)
            if caller is None:  # an old name that no plugin implements
                continue
            for impl in sorted(caller.get_hookimpls(), key=self._place, reverse=True):
                if name != hook:
                    distribution = self.distributions.get(impl.plugin_name, "<inline>")
                    self._note(
                        f"plugin {impl.plugin_name!r} from {distribution}: {name}() is now "
                        f"{hook}(); rename the hook (the old name still works)"
                    )
                found.append((name, impl))
        return found

    def _collect(self, spec_type: type[PluginSpec[Any]]) -> dict[str, RegisteredPlugin]:
        found: dict[str, RegisteredPlugin] = {}
        for hook, impl in self._implementations(spec_type.hook):
            distribution = self.distributions.get(impl.plugin_name, "<inline>")
            plugin = f"plugin {impl.plugin_name!r} from {distribution}"
            try:
                records = list(impl.function() or ())
            except ValidationError as exc:  # usually a record the plugin built wrongly
                self._note(
                    f"{plugin} skipped: {hook}() built an invalid "
                    f"{exc.title} record: {validation_problems(exc)}"
                )
                continue
            except Exception as exc:  # a broken plugin must not stop the others
                self._note(f"{plugin} skipped: {hook}() raised {describe(exc)}")
                continue
            for record in records:
                if not isinstance(record, spec_type):
                    self._note(
                        f"{plugin}: {hook}() returned {type(record).__name__}, "
                        f"not {spec_type.__name__}; ignored"
                    )
                    continue
                problem = options_problem(record)
                if problem is not None:
                    self._note(f"{plugin}: {record.kind} {record.name!r} skipped: {problem}")
                    continue
                if record.options.model_config.get("extra") != "forbid":
                    self._note(
                        f"{plugin}: {record.kind} {record.name!r} ignores unknown options "
                        f'({record.options.__name__} does not set extra="forbid"), so a '
                        "misspelt option goes unnoticed"
                    )
                if record.name in found:
                    other = found[record.name]
                    raise PluginError(
                        f"two {spec_type.kind} plugins are named {record.name!r}: "
                        f"one from {other.distribution} ({other.source}), one from "
                        f"{distribution} ({impl.plugin_name}); uninstall or rename one"
                    )
                found[record.name] = RegisteredPlugin(record, impl.plugin_name, distribution)
        return found


def _word(kind: Kind) -> str:
    """The word of ``kind`` (``"judge"``); an unknown one is an error listing the kinds."""
    word = kind if isinstance(kind, str) else kind.kind
    if word not in KINDS:
        if word in RENAMED_KINDS:
            raise PluginError(f"the plugin kind {word!r} is now called {RENAMED_KINDS[word]!r}")
        raise PluginError(f"unknown plugin kind {word!r}; the kinds are {', '.join(KINDS)}")
    return word


BUILTIN_PLUGINS: tuple[str, ...] = (
    "bugbout.plugins.miners.git_history",
    "bugbout.plugins.miners.mutants",
    "bugbout.plugins.issue_sources.github",
    "bugbout.plugins.issue_sources.file",
    "bugbout.plugins.issue_sources.commit",
    "bugbout.plugins.environments.uv",
    "bugbout.plugins.environments.interpreter",
    "bugbout.plugins.environments.podman",
    "bugbout.plugins.test_runners.pytest",
    "bugbout.plugins.sandboxes.auto",
    "bugbout.plugins.sandboxes.bubblewrap",
    "bugbout.plugins.sandboxes.seatbelt",
    "bugbout.plugins.sandboxes.podman",
    "bugbout.plugins.sandboxes.none",
    "bugbout.plugins.executors.local",
    "bugbout.plugins.executors.ray",
    "bugbout.plugins.agents.codex",
    "bugbout.plugins.agents.claude_code",
    "bugbout.plugins.agents.gemini_cli",
    "bugbout.plugins.agents.mini_swe_agent",
    "bugbout.plugins.agents.command",
    "bugbout.plugins.agents.predictions",
    "bugbout.plugins.assignments.reproduce",
    "bugbout.plugins.assignments.specify",
    "bugbout.plugins.judges.majority",
    "bugbout.plugins.judges.unanimous",
    "bugbout.plugins.judges.strict",
    "bugbout.plugins.judges.cross_vendor",
    "bugbout.plugins.auditors.gate",
    "bugbout.plugins.auditors.recall",
    "bugbout.plugins.reporters.terminal",
    "bugbout.plugins.reporters.markdown",
    "bugbout.plugins.reporters.json",
    "bugbout.plugins.reporters.html",
)
"""Built-in plugin modules, imported by name (like entry points, so the core never imports
the plugin layer) and registered in this order before any entry-point plugin."""


def make_plugins(
    *,
    builtins: bool = True,
    entry_points: bool = True,
    blocked: Iterable[str] = (),
    kinds: Iterable[Kind] | None = None,
) -> Plugins:
    """Build a fresh plugin manager: the built-ins, then the entry-point plugins.

    With ``kinds``, only the built-ins of those kinds are imported now; the others are
    imported when their kind is first asked for, as are the entry points naming a module
    of bugbout's plugin folders; any other entry point does not say its kind, so it is
    loaded now. ``BUGBOUT_DISABLE_PLUGIN_AUTOLOAD=1`` turns off entry points,
    and ``BUGBOUT_DISABLE_PLUGINS=a,b`` blocks plugins by entry-point name.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    plugins = Plugins(pm)
    words = list(KINDS) if kinds is None else [k if isinstance(k, str) else k.kind for k in kinds]
    blocked = {*blocked, *filter(None, os.environ.get(DISABLE_VARIABLE, "").split(","))}
    if builtins:
        plugins.defer(BUILTIN_PLUGINS)
    if entry_points and not os.environ.get(DISABLE_AUTOLOAD_VARIABLE):
        _load_entry_points(plugins, blocked)
    plugins.check_pending()
    for word in words:  # collect them now, so broken plugins are reported up front
        plugins.of_kind(word)
    return plugins


def builtin_kind(module: str) -> str:
    """The kind of the built-in plugin module ``module``, from its folder
    (``bugbout.plugins.issue_sources.github`` → ``issue-source``)."""
    folder = module.split(".")[-2]
    return next(word for word, spec in KINDS.items() if spec.hook == f"bugbout_{folder}")


def create_plugin(
    kind: type[PluginSpec[T]], name: str, options: Mapping[str, Any] | None = None
) -> T:
    """The plugin ``kind``/``name`` built with ``options``, found as a bout finds it (the
    built-ins, then the installed plugins): how one plugin uses another without importing
    its module."""
    return make_plugins(kinds=[kind]).create(kind, name, options)


def _load_entry_points(plugins: Plugins, blocked: set[str]) -> None:
    """Register every entry point not ``blocked``: one naming a module of bugbout's plugin
    folders (``bugbout.plugins.test_runners...``) is deferred to its kind, as a built-in
    is, and to its name (:attr:`Deferred.registers`); any other is imported now, since nothing
    else says its kind."""
    names: dict[int, str] = {}  # a distribution's metadata is parsed once, not per entry point
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry_point.name in blocked:
            continue
        dist = id(entry_point.dist)
        distribution = names[dist] = names.get(dist) or _distribution_name(entry_point)
        kind = _folder_kind(entry_point.value)
        if kind is not None:
            deferred = Deferred(
                entry_point.value, entry_point.name, distribution, registers=entry_point.name
            )
            plugins._defer(kind, deferred)
            continue
        try:
            plugin = entry_point.load()
        except Exception as exc:  # a plugin that cannot import is skipped, not fatal
            plugins.problems.append(unimportable(entry_point.name, distribution, exc))
            continue
        plugins.register(plugin, name=entry_point.name, distribution=distribution)


def _folder_kind(value: str) -> str | None:
    """The kind of the plugin module ``value`` (an entry point's) when it is a module
    inside one of bugbout's plugin folders, from that folder; ``None`` otherwise."""
    parts = value.split(".")
    if ":" in value or len(parts) < 4 or parts[:2] != ["bugbout", "plugins"]:
        return None
    return next((word for word, spec in KINDS.items() if spec.hook == f"bugbout_{parts[2]}"), None)


def _distribution_name(entry_point: metadata.EntryPoint) -> str:
    dist = entry_point.dist
    if dist is None:
        return "<unknown distribution>"
    about = dist.metadata
    return f"{about['Name']} {about['Version']}"
