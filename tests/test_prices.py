"""Prices from three sources: the project's ``prices:``, LiteLLM's table (the file the
``litellm`` package ships, in its real format) and bugbout's packaged table."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from bugbout.core.contract.settings import PriceSettings
from bugbout.core.plumbing.models.prices import (
    LITELLM_FILE,
    litellm_file,
    litellm_prices,
    packaged_prices,
    price_table,
)

LITELLM_TABLE = {
    "sample_spec": {
        "input_cost_per_token": 0.0,
        "output_cost_per_token": 0.0,
        "litellm_provider": "one of https://docs.litellm.ai/docs/providers",
        "mode": "one of: chat, embedding, completion, image_generation, ...",
    },
    "claude-sonnet-4-5-20250929": {
        "cache_creation_input_token_cost": 3.75e-06,
        "cache_read_input_token_cost": 3e-07,
        "input_cost_per_token": 3e-06,
        "litellm_provider": "anthropic",
        "max_tokens": 64000,
        "mode": "chat",
        "output_cost_per_token": 1.5e-05,
        "supports_prompt_caching": True,
    },
    "gpt-5-mini": {
        "cache_read_input_token_cost": 2.5e-08,
        "input_cost_per_token": 2.5e-07,
        "litellm_provider": "openai",
        "mode": "chat",
        "output_cost_per_token": 2e-06,
    },
    "text-embedding-3-small": {
        "input_cost_per_token": 2e-08,
        "litellm_provider": "openai",
        "mode": "embedding",
        "output_cost_per_token": 0.0,
    },
    "dall-e-3": {"litellm_provider": "openai", "mode": "image_generation"},
}


def litellm_site(root: Path) -> Path:
    """LiteLLM's table where its package puts it, beside the package's dist-info."""
    package = root / "site-packages" / "litellm"
    package.mkdir(parents=True)
    (root / "site-packages" / "litellm-1.2.3.dist-info").mkdir()
    path = package / LITELLM_FILE
    path.write_text(json.dumps(LITELLM_TABLE))
    return path


def test_litellm_prices_are_read_per_million_tokens_for_chat_models_only(tmp_path: Path) -> None:
    prices, version = litellm_prices(litellm_site(tmp_path))
    assert version == "litellm 1.2.3"
    assert set(prices) == {"claude-sonnet-4-5-20250929", "gpt-5-mini"}
    assert prices["claude-sonnet-4-5-20250929"] == PriceSettings(
        input=3, cached_input=0.3, cache_write=3.75, output=15
    )
    assert prices["gpt-5-mini"] == PriceSettings(input=0.25, cached_input=0.025, output=2)


def test_the_projects_prices_then_litellms_then_the_packaged_ones(tmp_path: Path) -> None:
    own = {"mini": PriceSettings(model="gpt-5*-mini*", input=9, output=9)}
    table = price_table(own, litellm=litellm_site(tmp_path))
    assert table.find("gpt-5-mini") == ("mini", own["mini"])  # the project's first
    found = table.find("anthropic/claude-sonnet-4-5-20250929")  # then LiteLLM's exact name
    assert found is not None and found[0] == "claude-sonnet-4-5-20250929"
    assert found[1].cache_write == 3.75
    packaged = dict(packaged_prices().entries)
    assert table.find("gpt-4.1-nano-2025-04-14") == ("gpt-4.1-nano", packaged["gpt-4.1-nano"])
    assert table.find("unheard-of") is None
    assert table.source == (
        f"LiteLLM's table (litellm 1.2.3), then bugbout's table of {table.as_of}"
    )


@pytest.mark.skipif(importlib.util.find_spec("litellm") is not None, reason="litellm importable")
def test_litellms_table_is_found_in_a_uv_tools_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "tools"
    monkeypatch.setenv("UV_TOOL_DIR", str(tools))
    assert litellm_file() is None
    assert price_table().source == f"bugbout's table of {packaged_prices().as_of}"
    path = litellm_site(tools / "mini-swe-agent" / "lib" / "python3.12")
    assert litellm_file() == path
    assert price_table().listed_from == "litellm 1.2.3"


REAL = Path.home() / ".cache/bugbout-tests/mini-swe-agent/lib/python3.11/site-packages/litellm"


@pytest.mark.skipif(not (REAL / LITELLM_FILE).is_file(), reason="no mini-swe-agent venv here")
def test_the_real_litellm_table_prices_the_models_agents_use() -> None:
    prices, version = litellm_prices(REAL / LITELLM_FILE)
    assert version.startswith("litellm 1.")
    assert len(prices) > 500
    sonnet = prices["claude-sonnet-4-5"]
    assert (sonnet.input, sonnet.cached_input, sonnet.output) == (3, 0.3, 15)
    assert prices["gpt-5"].input == 1.25 and prices["gpt-5"].output == 10
    assert "sample_spec" not in prices
