"""Compositions kept beside the store, so that the next command composed from the same
things reuses one without importing Hydra.

What a composition is made from is its key: ``bugbout.yaml``, the overrides, the
packaged config groups, the project's folders that could shadow them, and the installs of
Hydra, OmegaConf and Hydra's plugins. Plugins chosen by name are looked up again on each
reuse. Only a single job whose file and overrides leave Hydra's own settings alone, and
whose interpolations OmegaConf resolves alone, is kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bugbout import __version__
from bugbout.config.compose import job_settings, settings_of
from bugbout.config.groups import GROUPS
from bugbout.core.contract.errors import ConfigError

if TYPE_CHECKING:
    from omegaconf import DictConfig

    from bugbout.core.contract.manager import Plugins
    from bugbout.core.contract.settings import BoutSettings

FILE = "composed.json"
"""The file in the store folder that keeps the last compositions."""
KEPT = 8
"""How many compositions it keeps, the newest."""
FORMAT = "1"
"""Changes when what is kept changes: a composition kept in another format is ignored."""
_RESOLVER = re.compile(r"\$\{(?!oc\.)[\w.-]+:")
"""An interpolation calling a resolver other than OmegaConf's own (``${now:...}``)."""


@dataclass(frozen=True)
class Composition:
    """A composed config, its interpolations unresolved, and what composing it said."""

    config: dict[str, Any]
    overrides: list[str]
    """The overrides as the job gets them (a plugin's option given a ``+``)."""
    notes: list[str]
    """The notes on settings written the old way, said again on each reuse."""
    plugins: list[tuple[str, str]]
    """The plugins chosen by name, ``(kind, name)``: each must still be installed."""


def kept_settings(composition: Composition, root: Path) -> BoutSettings:
    """The settings of a kept composition: OmegaConf resolves its interpolations, if any."""
    if "${" not in json.dumps(composition.config):
        return settings_of(composition.config, root)
    from omegaconf import OmegaConf

    return job_settings(OmegaConf.create(composition.config), root)


def composition_key(config: Path, overrides: list[str]) -> str:
    """What a composition of ``config`` with ``overrides`` is made from, as a digest."""
    root = config.parent
    [packaged] = [Path(place) for place in _locations("bugbout.conf")]
    groups = sorted({*GROUPS, "hydra", *(p.name for p in packaged.iterdir() if p.is_dir())})
    made_of = {
        "format": FORMAT,
        "bugbout": __version__,
        "config": str(config),
        "text": _digest(config),
        "overrides": overrides,
        "packaged": _files(packaged),
        "project": [_files(root / group) for group in groups],
        "base": _digest(root / "base.yaml"),
        "installs": [_stat(Path(_origin(name))) for name in ("hydra", "omegaconf")],
        "hydra-plugins": [_files(Path(place)) for place in _locations("hydra_plugins")],
    }
    return hashlib.sha256(json.dumps(made_of, sort_keys=True).encode()).hexdigest()


def kept(store_dir: Path, key: str, plugins: Plugins) -> Composition | None:
    """The composition kept under ``key``, if its plugins are all still installed."""
    try:
        entry = json.loads((store_dir / FILE).read_text(encoding="utf-8")).get(key)
        found = Composition(**entry) if isinstance(entry, dict) else None
    except (OSError, ValueError, TypeError):
        return None
    if found is None:
        return None
    for kind, name in found.plugins:
        try:
            plugins.get(kind, name)  # imports that plugin's module, not its kind's
        except ConfigError:
            return None
    return Composition(
        config=found.config,
        overrides=list(found.overrides),
        notes=list(found.notes),
        plugins=[(kind, name) for kind, name in found.plugins],
    )


def keep(
    store_dir: Path,
    key: str,
    cfg: DictConfig,
    *,
    overrides: list[str],
    notes: list[str],
    plugins: list[tuple[str, str]],
) -> None:
    """Keep the composed ``cfg`` under ``key`` (with the newest others), when it can be
    reused without Hydra; a store folder that cannot be written keeps nothing."""
    from omegaconf import OmegaConf

    plain = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(plain, dict)
    composition = Composition({str(k): v for k, v in plain.items()}, overrides, notes, plugins)
    text = json.dumps(composition.config)
    if _RESOLVER.search(text) or json.loads(text) != composition.config:
        return  # Hydra's resolvers, or keys and values JSON does not give back
    from bugbout.core.contract.errors import StoreError
    from bugbout.core.store.store import Store, write_atomic

    path = store_dir / FILE
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        entries = {}
    entries = entries if isinstance(entries, dict) else {}
    entries.pop(key, None)
    newest = [*list(entries.items())[-(KEPT - 1) :], (key, asdict(composition))]
    try:
        Store(store_dir).ensure()  # a store made here ignores itself in git
        write_atomic(path, json.dumps(dict(newest)))
    except (OSError, StoreError):
        return


def _files(folder: Path) -> list[tuple[str, str]]:
    """Every file under ``folder`` (config groups, Hydra's plugins: a few small files)
    but bytecode, with its digest."""
    found = []
    for where, folders, names in os.walk(folder):
        folders[:] = [name for name in folders if name != "__pycache__"]
        for name in names:
            path = Path(where, name)
            found.append((str(path.relative_to(folder)), _digest(path)))
    return sorted(found)


def _digest(path: Path) -> str:
    """The SHA-256 of the file at ``path``; empty when there is none."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def _stat(path: Path) -> tuple[str, int, int]:
    try:
        status = path.stat()
    except OSError:
        return (path.name, -1, -1)
    return (path.name, status.st_size, status.st_mtime_ns)


def _origin(module: str) -> str:
    spec = find_spec(module)
    return (spec.origin if spec else None) or ""


def _locations(package: str) -> list[str]:
    spec = find_spec(package)
    return list(spec.submodule_search_locations or []) if spec else []
