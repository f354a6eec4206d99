"""Hydra's compose API as the adapter uses it: one composition, a sweep's combinations
composed before it starts, an override Hydra cannot apply explained in one line (the
closest valid key, or an option of the chosen plugin given its ``+``), and a composed
config made the core's settings."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bugbout.config.groups import GROUPS, INSTANCE_MAPS, ROLES, maps
from bugbout.config.layout import CONFIG_NAME
from bugbout.core.contract.errors import BugboutError, ConfigError

if TYPE_CHECKING:
    from omegaconf import DictConfig

    from bugbout.core.contract.manager import Plugins
    from bugbout.core.contract.settings import BoutSettings


def compose_checked(
    root: Path, overrides: list[str], plugins: Plugins | None = None, name: str = CONFIG_NAME[:-5]
) -> tuple[DictConfig, list[str]]:
    """Compose the config (before Hydra's main, so a bad override is a one-line error);
    ``(config, overrides)``. An option of the chosen plugin that no packaged default sets
    needs no ``+``: the overrides returned carry it."""
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    for _ in range(len(overrides) + 1):
        try:
            return _compose_once(root, overrides, name), overrides
        except (HydraException, OmegaConfBaseException) as exc:
            unknown = _UNKNOWN_OVERRIDE.search(str(exc))
            if unknown is None:
                lines = [line.strip().rstrip(".") for line in str(exc).splitlines() if line.strip()]
                raise ConfigError("; ".join(lines) or type(exc).__name__) from None
            key = unknown.group(1)
            problem = _unknown_setting(root, overrides, key, plugins, name)
            if problem:
                raise ConfigError(problem) from None
            overrides = [f"+{arg}" if arg.split("=", 1)[0] == key else arg for arg in overrides]
    raise ConfigError(f"cannot compose the settings with {' '.join(overrides)}")


SWEEP_CHECKED = 64
"""How many of a sweep's combinations are composed before it starts."""


def sweep_jobs(overrides: list[str]) -> list[list[str]]:
    """The overrides of each job of a sweep: one per combination of the swept values."""
    import itertools

    return [list(job) for job in itertools.product(*_sweep_values(overrides))]


def _sweep_values(overrides: list[str]) -> list[list[str]]:
    """Each override's values as Hydra's grammar reads them: a swept one's, each as its
    own ``key=value``; any other as given."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides(overrides)
    return [
        [f"{o.get_key_element()}={v}" for v in o.sweep_string_iterator()]
        if o.is_sweep_override()
        else [arg]
        for arg, o in zip(overrides, parsed, strict=True)
    ]


def compose_sweep(root: Path, overrides: list[str], plugins: Plugins, name: str) -> list[str]:
    """Compose a sweep's combinations (the first :data:`SWEEP_CHECKED`) before any job
    starts, so a bad override is a one-line error; the overrides, a plugin option that
    some combination's defaults lack given as ``++`` (added, or set where it exists)."""
    import itertools

    try:
        values = _sweep_values(overrides)
    except Exception:  # a sweep only Hydra can expand (glob): its jobs say what is wrong
        return overrides
    added: set[str] = set()
    for combination in itertools.islice(itertools.product(*values), SWEEP_CHECKED):
        try:
            _, composed = compose_checked(root, list(combination), plugins, name)
        except ConfigError as exc:
            swept = [arg for arg, given in zip(combination, values, strict=True) if len(given) > 1]
            raise ConfigError(f"{exc} (in the sweep's job {' '.join(swept)})") from None
        added |= {a.split("=", 1)[0] for a, b in zip(composed, combination, strict=True) if a != b}
    return [f"++{arg}" if f"+{arg.split('=', 1)[0]}" in added else arg for arg in overrides]


_UNKNOWN_OVERRIDE = re.compile(r"Could not override '([^']+)'")


def _compose_once(root: Path, overrides: list[str], name: str = CONFIG_NAME[:-5]) -> DictConfig:
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(root), version_base="1.3"):
        return compose(
            config_name=name,
            overrides=[*overrides, "hydra.searchpath=[pkg://bugbout.conf]"],
        )


def _unknown_setting(
    root: Path, overrides: list[str], key: str, plugins: Plugins | None, name: str
) -> str | None:
    """What is wrong with override ``key``, from the config composed without it; ``None``
    when it is an option of the chosen plugin."""
    from omegaconf import OmegaConf

    from bugbout.config.suggest import unknown_setting
    from bugbout.core.contract.instances import ORDER
    from bugbout.core.plumbing.models.cutoffs import KEY as CUTOFF_KEY
    from bugbout.core.race.contestants import ASSIGNMENT, assignment_of

    others = [arg for arg in overrides if arg.split("=", 1)[0] != key]
    choices = [arg for arg in others if "." not in arg.split("=", 1)[0]]
    tree: Any = {}
    for attempt in (others, choices, []):
        try:
            tree = OmegaConf.to_container(_compose_once(root, attempt, name), resolve=False)
            break
        except Exception:  # another override is wrong too: its turn comes next
            continue

    def options_of(prefix: Sequence[str]) -> set[str]:
        if plugins is None:
            return set()
        extra: set[str] = set()
        try:
            if len(prefix) == 1 and prefix[0] in GROUPS and prefix[0] not in ROLES:
                spec = plugins.get(GROUPS[prefix[0]], tree[prefix[0]]["name"]).spec
            elif len(prefix) == 2 and prefix[0].removesuffix("s") in ROLES:
                defined = tree.get(f"{prefix[0].removesuffix('s')}s") or {}
                entry = {**defined.get(prefix[1], {}), **tree[prefix[0]][prefix[1]]}
                spec = plugins.get("agent", entry["agent"]).spec
                extra = {CUTOFF_KEY} | ({ASSIGNMENT} if prefix[0].startswith("examiner") else set())
            elif prefix[0] in ("examiner", "examiners") and prefix[2:] == [ASSIGNMENT]:
                given = (tree.get(prefix[0]) or {}).get(prefix[1], {}).get(ASSIGNMENT)
                spec = plugins.get(ASSIGNMENT, assignment_of("", given).plugin).spec
                extra = {ASSIGNMENT}
            elif len(prefix) == 1 and prefix[0] in INSTANCE_MAPS:
                return set(plugins.of_kind(INSTANCE_MAPS[prefix[0]]))
            elif len(prefix) == 2 and prefix[0] in INSTANCE_MAPS:
                kind = INSTANCE_MAPS[prefix[0]]
                entry = (tree.get(prefix[0]) or {}).get(prefix[1]) or {}
                spec = plugins.get(kind, entry.get(kind, prefix[1])).spec
                extra = {kind, ORDER}
            else:
                return set()
        except (BugboutError, KeyError, TypeError):
            return set()
        known = {field.alias or name for name, field in spec.options.model_fields.items()}
        return known | extra

    parts = key.lstrip("+~").split(".")
    if len(parts) == 3 and maps().get(parts[0]) == parts[2]:
        return None  # a new entry, named by its plugin: `reporters.short.reporter=html`
    return unknown_setting(key.lstrip("+~"), tree, options_of)


def job_settings(cfg: Any, root: Path) -> BoutSettings:
    """The core's settings from Hydra's composed config; errors name the key."""
    from omegaconf import OmegaConf
    from omegaconf.errors import MissingMandatoryValue

    try:
        data = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    except MissingMandatoryValue as exc:
        key = exc.full_key or "a key"
        raise ConfigError(f"{key} is not set; add it to {root / CONFIG_NAME}") from None
    assert isinstance(data, dict)
    return settings_of({str(key): value for key, value in data.items()}, root)


def settings_of(data: dict[str, Any], root: Path) -> BoutSettings:
    """The core's settings from a composed config as plain, resolved data."""
    from pydantic import ValidationError

    from bugbout.config.suggest import extra_key
    from bugbout.core.contract.settings import BoutSettings

    if "root" in data:
        raise ConfigError(
            f"root: not a setting: the project's root is the folder of {CONFIG_NAME} "
            f"({root}); remove `root` from it"
        )
    try:
        return BoutSettings.model_validate({**data, "root": root})
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            where, _, message = extra_key(BoutSettings, error["loc"]).partition(": ")
        raise ConfigError(
            f"{where}: {message} (set in {root / CONFIG_NAME} or on the command line)"
        ) from None
