"""What models cost: a price per model name, from three sources in turn.

1. The project's ``prices:`` (USD per million tokens); an entry named like a packaged one
   replaces it.
2. LiteLLM's model price table (``model_prices_and_context_window_backup.json``, the one
   the ``litellm`` package ships and keeps up to date): read when ``litellm`` is
   importable, or installed with a ``uv tool`` (mini-swe-agent depends on it). Its
   entries price exact model names.
3. bugbout's packaged table (``bugbout/data/prices.json``, dated by its ``as-of``).

An entry of ``prices:`` or of the packaged table prices the models its ``model`` pattern
matches (``*`` for any text), the whole name or the part after a provider prefix
(``anthropic/claude-sonnet-4-5``); of several, the longest pattern.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from importlib import resources
from pathlib import Path

from bugbout.core.contract.settings import PriceSettings

PRICES_RESOURCE = "prices.json"
"""The packaged price table, in :mod:`bugbout.data`."""
PER_TOKENS = 1_000_000
"""Prices are per this many tokens."""
LITELLM_FILE = "model_prices_and_context_window_backup.json"
"""LiteLLM's price table, inside its package."""
LITELLM_MODES = (None, "chat", "completion", "responses")
"""The kinds of LiteLLM entries that price a coding agent's model."""


@dataclass(frozen=True)
class PriceTable:
    """Named prices: patterned entries (the project's and the packaged ones), LiteLLM's
    exact names, and where each came from."""

    entries: tuple[tuple[str, PriceSettings], ...]
    as_of: str
    """The packaged table's date."""
    own: frozenset[str] = frozenset()
    """Entries of the project's ``prices:``: they win over every other."""
    listed: Mapping[str, PriceSettings] = field(default_factory=dict)
    """LiteLLM's prices by exact (lower-case) model name."""
    listed_from: str = ""
    """Which LiteLLM table ``listed`` came from (``litellm 1.74.0``); empty: none."""

    @property
    def source(self) -> str:
        """Where the prices come from, in a few words, with the packaged table's date."""
        packaged = f"bugbout's table of {self.as_of}"
        return f"LiteLLM's table ({self.listed_from}), then {packaged}" if self.listed else packaged

    def find(self, model: str | None) -> tuple[str, PriceSettings] | None:
        """The entry that prices ``model`` (its name and price): the project's, else
        LiteLLM's exact name, else the packaged one with the longest pattern."""
        if not model:
            return None
        names = (model.lower(), model.rsplit("/", 1)[-1].lower())
        found = [
            (name, price)
            for name, price in self.entries
            if any(fnmatchcase(candidate, _pattern(name, price)) for candidate in names)
        ]
        own = [entry for entry in found if entry[0] in self.own]
        listed = [(name, self.listed[name]) for name in names if name in self.listed]
        best = own or listed[:1] or found
        if not best:
            return None
        return max(best, key=lambda entry: len(_pattern(*entry).replace("*", "")))


def _pattern(name: str, price: PriceSettings) -> str:
    return (price.model or name).lower()


def packaged_prices() -> PriceTable:
    """The price table shipped with bugbout."""
    text = resources.files("bugbout.data").joinpath(PRICES_RESOURCE).read_text("utf-8")
    data = json.loads(text)
    entries = tuple(
        (name, PriceSettings.model_validate(entry)) for name, entry in data["prices"].items()
    )
    return PriceTable(entries, str(data["as-of"]))


def litellm_file() -> Path | None:
    """LiteLLM's price table on this machine: in the importable ``litellm`` package, else
    in a ``uv tool``'s environment (``$UV_TOOL_DIR``, or ``~/.local/share/uv/tools``)."""
    spec = importlib.util.find_spec("litellm")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        if (path := Path(folder) / LITELLM_FILE).is_file():
            return path
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    tools = Path(os.environ.get("UV_TOOL_DIR") or Path(data) / "uv" / "tools")
    found = sorted(tools.glob(f"*/lib/python*/site-packages/litellm/{LITELLM_FILE}"))
    return found[-1] if found else None


def litellm_prices(path: Path) -> tuple[dict[str, PriceSettings], str]:
    """The chat models' prices of LiteLLM's table at ``path`` (per token there, per
    million here), and which table it is (its package's version when known)."""
    data = json.loads(path.read_text("utf-8"))
    prices: dict[str, PriceSettings] = {}
    for name, entry in data.items():
        if not isinstance(entry, dict) or entry.get("mode") not in LITELLM_MODES:
            continue
        costs = {
            ours: round(float(entry[theirs]) * PER_TOKENS, 6)
            for ours, theirs in (
                ("input", "input_cost_per_token"),
                ("cached_input", "cache_read_input_token_cost"),
                ("cache_write", "cache_creation_input_token_cost"),
                ("output", "output_cost_per_token"),
            )
            if isinstance(entry.get(theirs), int | float)
        }
        if "input" in costs and "output" in costs and name != "sample_spec":
            prices[name.lower()] = PriceSettings(**costs)
    versions = sorted(path.parent.parent.glob("litellm-*.dist-info"))
    version = versions[-1].name.removesuffix(".dist-info").replace("-", " ") if versions else ""
    return prices, version or str(path)


def price_table(
    prices: Mapping[str, PriceSettings] | None = None, litellm: Path | None = None
) -> PriceTable:
    """The project's ``prices:``, LiteLLM's table (``litellm``: its file; by default the
    one :func:`litellm_file` finds) and the packaged table. An entry of ``prices:`` named
    like a packaged one takes its place (and its model pattern, unless it sets ``model``)."""
    packaged = packaged_prices()
    own = dict(prices or {})
    known = dict(packaged.entries)
    for name, price in own.items():
        if name in known and price.model is None:
            own[name] = price.model_copy(update={"model": known[name].model})
    path = litellm or litellm_file()
    listed, listed_from = litellm_prices(path) if path else ({}, "")
    return PriceTable(
        tuple({**known, **own}.items()), packaged.as_of, frozenset(own), listed, listed_from
    )


def attempt_cost(usage: Mapping[str, int], price: PriceSettings) -> float:
    """USD an attempt's token usage cost at ``price`` (each kind at its own rate)."""
    cached = price.input if price.cached_input is None else price.cached_input
    written = price.input if price.cache_write is None else price.cache_write
    total = (
        usage.get("input_tokens", 0) * price.input
        + usage.get("cache_read_tokens", 0) * cached
        + usage.get("cache_write_tokens", 0) * written
        + usage.get("output_tokens", 0) * price.output
    )
    return total / PER_TOKENS
