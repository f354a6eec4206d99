"""What drafting statements cost (``tasks.statement: drafted``) shows in the report's
costs as the drafter's own row, apart from the contestants', on a real history with real
pytest runs and the model a scripted server."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import PriceSettings
from bugbout.core.pipeline import compute_oracles, mine_tasks
from bugbout.core.report.costs import PriceTable
from bugbout.core.report.report_build import build_report
from bugbout.core.report.report_store import read_bout
from bugbout.core.store.drafts import Draft
from bugbout.core.store.store import Store
from bugbout.plugins.reporters.markdown import render_markdown
from bugbout.testing.model_server import INPUT_TOKENS, OUTPUT_TOKENS, ModelServer, Say
from test_costs import TABLE, _records
from test_drafted_statements import CLEAN, LEAKY, _history, _settings

PRICED = PriceTable((("w", PriceSettings(model="gpt-w*", input=2, output=10)),), "x")
DRAFT_COST = (INPUT_TOKENS * 2 + OUTPUT_TOKENS * 10) / 1e6


def _section(text: str) -> dict[str, str]:
    """The rows of the markdown report's "How costly" table, by their first cell."""
    start = text.index("## How costly")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end != -1 else len(text)]
    return {line.split("|")[1].strip(): line for line in section.splitlines() if "|" in line}


def test_drafts_are_a_row_of_their_own_and_count_in_the_total() -> None:
    used = Draft(
        key="k1",
        drafter="writer (m-9)",
        contestant="writer",
        model="m-9",
        reported="r",
        text="t",
        usage={"input_tokens": 1000, "output_tokens": 100},
    )
    refused = used.model_copy(update={"key": "k2", "refused": "it shows a line the fix added"})
    unreported = used.model_copy(update={"key": "k3", "usage": {}})
    alone = build_report(**_records(), prices=TABLE)  # type: ignore[arg-type]
    report = build_report(**_records(), prices=TABLE, drafts=[used, refused, unreported])  # type: ignore[arg-type]
    [drafter] = [row for row in report.costs.agents if row.role == "drafter"]
    # 1000*2 + 100*10 per million, twice: a refused draft took its tokens too
    assert drafter.cost == pytest.approx(0.006)
    assert (drafter.name, drafter.model, drafter.price) == ("writer", "m-9", "m")
    assert (drafter.attempts, drafter.reported, drafter.priced) == (3, 2, 2)
    assert (drafter.resolved, drafter.cost_per_resolved, drafter.pareto) == (0, None, False)
    contestants = [row for row in report.costs.agents if row.role != "drafter"]
    assert contestants == alone.costs.agents  # the contestants' own costs are theirs alone
    assert report.costs.cost == pytest.approx(alone.costs.cost + 0.006)
    row = _section(render_markdown(report))["writer"]
    assert "| drafter |" in row and "| $0.00600 |" in row and "| 2/3 |" in row


@pytest.mark.slow
def test_the_tokens_a_bout_drafted_with_reach_its_report(tmp_path: Path) -> None:
    repo, fix = _history(tmp_path / "repo")
    store, plugins = Store(tmp_path / ".bugbout"), make_plugins(entry_points=False)
    assert read_bout(store).build(PRICED).costs.agents == []  # nothing drafted yet
    with ModelServer([Say(CLEAN)]) as clean, ModelServer([Say(LEAKY)]) as leaky:
        writer = {"agent": "codex", "model": "gpt-w", "base-url": f"{clean.url}/v1"}
        tasks = mine_tasks(_settings(repo, writer=writer), plugins, store)
        compute_oracles(_settings(repo, writer=writer), plugins, store, tasks)
        assert tasks.get(fix[:12]).statement_origin == "drafted by writer (gpt-w)"

        [row] = read_bout(store).build(PRICED).costs.agents
        assert (row.name, row.role, row.model, row.price) == ("writer", "drafter", "gpt-w", "w")
        assert (row.attempts, row.priced) == (1, 1)
        assert row.cost == pytest.approx(DRAFT_COST)
        assert (
            _section(render_markdown(read_bout(store).build(PRICED)))["writer"].count(
                "| drafter | gpt-w | w | 1/1 |"
            )
            == 1
        )

        leaking = {**writer, "model": "gpt-wx", "base-url": f"{leaky.url}/v1"}
        again = mine_tasks(_settings(repo, writer=leaking), plugins, store)
        compute_oracles(_settings(repo, writer=leaking), plugins, store, again)
        assert "is refused" in again.get(fix[:12]).statement_origin
        [refused] = read_bout(store).build(PRICED).costs.agents  # the refused draft's tokens
        assert (refused.model, refused.attempts) == ("gpt-wx", 1)
        assert refused.cost == pytest.approx(DRAFT_COST)

        scrubbed = mine_tasks(_settings(repo, "scrubbed", writer=writer), plugins, store)
        compute_oracles(_settings(repo, "scrubbed", writer=writer), plugins, store, scrubbed)
        assert read_bout(store).build(PRICED).costs.agents == []  # no statement drafted
