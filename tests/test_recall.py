"""How contaminated: the similarity measures against hand-computed values, the recall
auditor, knowledge cutoffs, and the report's before/after-cutoff split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import bugbout.conf
from bugbout.core.audit.auditing import AuditRequest
from bugbout.core.audit.recall import (
    changed_lines,
    five_gram_overlap,
    identical_line_ratio,
    ngrams,
    tokens,
)
from bugbout.core.contract.errors import ConfigError
from bugbout.core.plumbing.models.cutoffs import default_cutoff, fixed_before, parse_cutoff
from bugbout.core.report.contamination import Contamination, CutoffSplit, PatchSimilarity
from bugbout.core.report.report import report_schema
from bugbout.core.report.report_build import build_report
from bugbout.core.report.statistics import wilson
from bugbout.core.store.race_records import (
    Attempt,
    AttemptStatus,
    Audit,
    Patch,
    Route,
    Score,
    Similarity,
)
from bugbout.core.store.records import Oracle, OracleSet, TaskSet
from bugbout.core.store.verdict_records import PatchResolution
from bugbout.plugins.auditors.recall import Recall, RecallOptions
from bugbout.plugins.reporters.html import HtmlReporter
from bugbout.plugins.reporters.markdown import MarkdownReporter
from bugbout.plugins.reporters.terminal import TerminalOptions, TerminalReporter
from bugbout.testing.suites.auditors import RESOLVING, SOURCE_DIFF, audit_request, audit_task


def diff(*changed: str, context: str = " def ratio(shape, reference):") -> str:
    body = "\n".join(changed)
    return (
        "diff --git a/src/shapes/area.py b/src/shapes/area.py\n"
        "--- a/src/shapes/area.py\n+++ b/src/shapes/area.py\n"
        f"@@ -12,2 +12,4 @@\n{context}\n{body}\n     return shape / reference\n"
    )


FIX = diff("+    if reference == 0:", "+        return 0.0")
"""Changed lines ``+ if reference == 0:`` and ``+ return 0.0``; tokens ``+ if reference = =
0 : + return 0 . 0`` (12): eight 5-grams."""
REWRITTEN = diff("+    if not reference:", "+        return 0.0")
"""Tokens ``+ if not reference : + return 0 . 0`` (10): six 5-grams, of which
``: + return 0 .`` and ``+ return 0 . 0`` are also the fix's."""


def test_changed_lines_keep_the_sign_and_drop_context_headers_and_spacing() -> None:
    assert changed_lines(FIX) == ["+ if reference == 0:", "+ return 0.0"]
    assert changed_lines(diff("-  x  =  1", "+", "+x = 2")) == ["- x = 1", "+ x = 2"]


def test_tokens_split_words_from_every_other_character() -> None:
    assert tokens(changed_lines(FIX)) == [
        "+", "if", "reference", "=", "=", "0", ":", "+", "return", "0", ".", "0",
    ]  # fmt: skip
    assert ngrams(["+", "x"]) == {("+", "x"): 1}  # shorter than five: one n-gram


def test_five_gram_overlap_against_hand_computed_values() -> None:
    assert five_gram_overlap(FIX, FIX) == 1.0
    # 2 shared 5-grams of 8 + 6: 2 * 2 / 14
    assert five_gram_overlap(FIX, REWRITTEN) == pytest.approx(4 / 14)
    # spacing is not a token: the same change written with other spacing overlaps fully
    assert five_gram_overlap(FIX, diff("+  if reference==0 :", "+ return 0.0")) == 1.0
    # the same lines removed instead of added: only the two 5-grams without a sign token
    # (``if reference = = 0``, ``reference = = 0 :``) are shared, of 8 + 8
    removed = diff("-    if reference == 0:", "-        return 0.0")
    assert five_gram_overlap(FIX, removed) == pytest.approx(4 / 16)
    assert identical_line_ratio(FIX, removed) == 0.0
    assert five_gram_overlap("", "") == 0.0


def test_identical_line_ratio_against_hand_computed_values() -> None:
    assert identical_line_ratio(FIX, FIX) == 1.0
    # one shared line (``+ return 0.0``) of 2 + 2: 2 * 1 / 4
    assert identical_line_ratio(FIX, REWRITTEN) == 0.5
    # a third line that only the patch adds: 2 * 2 / (2 + 3)
    longer = diff("+    if reference == 0:", "+        return 0.0", "+    shape = float(shape)")
    assert identical_line_ratio(FIX, longer) == pytest.approx(0.8)
    # other context and hunk headers change nothing
    other = diff("+    if reference == 0:", "+        return 0.0", context=" # other")
    assert identical_line_ratio(FIX, other.replace("@@ -12,2 +12,4 @@", "@@ -1 +1 @@")) == 1.0


def recall_request(source: str, *, fix: str = SOURCE_DIFF) -> AuditRequest:
    request = audit_request(RESOLVING)
    attempt = request.attempt.model_copy(
        update={"patch": request.attempt.patch.model_copy(update={"source": source})}
    )
    return request.model_copy(update={"attempt": attempt, "fix": fix})


def test_the_recall_auditor_flags_a_verbatim_fix_and_not_a_rewritten_one() -> None:
    auditor = Recall(RecallOptions())
    verbatim = auditor.audit(recall_request(SOURCE_DIFF))
    assert verbatim.verdict == Score.RESOLVED
    assert verbatim.similarity == Similarity(
        measure="recall", five_gram=1.0, identical_lines=1.0, threshold=0.8, recalled=True
    )
    rewritten = auditor.audit(recall_request(REWRITTEN, fix=FIX)).similarity
    assert rewritten is not None
    assert (rewritten.five_gram, rewritten.identical_lines) == (round(4 / 14, 4), 0.5)
    assert not rewritten.recalled
    strict = Recall(RecallOptions(threshold=0.25)).audit(recall_request(REWRITTEN, fix=FIX))
    assert strict.similarity is not None and strict.similarity.recalled


def test_only_a_hidden_audit_carries_the_fix() -> None:
    assert Recall().audit(recall_request(SOURCE_DIFF, fix="")).similarity is None
    visible = audit_request(RESOLVING, visible_only=True).model_dump()
    with pytest.raises(ValueError, match="visible-only audit must not carry the maintainers"):
        AuditRequest.model_validate({**visible, "fix": FIX})


def test_packaged_cutoffs_match_model_names() -> None:
    assert default_cutoff("claude-sonnet-4-5-20250929") == "2025-07-31"
    assert default_cutoff("anthropic/claude-sonnet-4-20250514") == "2025-03-31"
    assert default_cutoff("gpt-5-mini") == "2024-05-31"  # the more specific pattern first
    assert default_cutoff("GPT-5") == "2024-09-30"
    assert default_cutoff("my-local-model") is None
    assert default_cutoff(None) is None


def test_a_declared_cutoff_must_be_a_date() -> None:
    assert parse_cutoff("aider", "2024-06-01") == "2024-06-01"
    with pytest.raises(ConfigError, match=r"aider.*knowledge-cutoff.*2024-06-01"):
        parse_cutoff("aider", "June 2024")
    assert fixed_before("2024-06-01T23:00:00+02:00", "2024-06-01")
    assert not fixed_before("2024-06-02T00:00:00+00:00", "2024-06-01")


DATES = ["2023-05-01", "2023-09-01", "2024-03-01", "2024-08-01", "2025-02-01"]
"""Five tasks' fix dates."""


def records(resolved: dict[str, list[bool]], model: str | None = None) -> dict[str, object]:
    """Scored tasks on ``DATES``, each contestant's score per task, and audits of the
    resolved patches (``alpha``'s verbatim, the others' not)."""
    tasks = [
        audit_task().model_copy(update={"id": f"t{i}", "date": f"{day}T12:00:00+00:00"})
        for i, day in enumerate(DATES)
    ]
    attempts, resolutions, audits = [], [], []
    for name, outcomes in resolved.items():
        for task, won in zip(tasks, outcomes, strict=True):
            attempts.append(
                Attempt(task_id=task.id, contestant=name, key="k", agent="command",
                        model=model, status=AttemptStatus.FINISHED, patch=Patch())
            )  # fmt: skip
            score = Score.RESOLVED if won else Score.WRONG_FIX
            resolutions.append(PatchResolution(task_id=task.id, contestant=name, score=score))
            similar = 1.0 if name == "alpha" else 0.3
            audits.append(
                Audit(task_id=task.id, contestant=name, auditor="recall",
                      verdict=Score.RESOLVED, route=Route.NONE,
                      similarity=Similarity(measure="recall", five_gram=similar,
                                            identical_lines=similar, threshold=0.8,
                                            recalled=similar >= 0.8))
            )  # fmt: skip
    oracles = OracleSet({t.id: Oracle(task_id=t.id, status="ok") for t in tasks})
    return {
        "tasks": TaskSet(tasks=tasks),
        "oracles": oracles,
        "attempts": attempts,
        "resolutions": resolutions,
        "verdicts": [],
        "audits": audits,
        "matrices": [],
    }


def test_the_report_splits_each_resolve_rate_at_the_cutoff() -> None:
    found = records({"alpha": [True, True, True, False, False], "beta": [True, False] * 2 + [True]})
    report = build_report(**found, cutoffs={"alpha": "2024-01-01"})  # type: ignore[arg-type]
    split = {row.contestant: row for row in report.contamination.cutoffs}
    alpha = split["alpha"]
    assert (alpha.cutoff, alpha.declared) == ("2024-01-01", True)
    assert alpha.before is not None and alpha.after is not None
    assert (alpha.before.resolved, alpha.before.tasks) == (2, 2)
    assert (alpha.after.resolved, alpha.after.tasks) == (1, 3)
    expected = wilson(1, 3)
    assert (alpha.after.low, alpha.after.high) == (expected.low, expected.high)
    assert split["beta"].cutoff is None and split["beta"].before is None
    patches = {(p.task, p.contestant): p.similarity.recalled for p in report.contamination.patches}
    assert len(patches) == report.contamination.resolved == 3 + 3  # resolved patches only
    assert patches[("t0", "alpha")] and not patches[("t0", "beta")]
    assert report.contamination.recalled == {"alpha": 3, "beta": 0}
    assert report.contamination.warning is None  # 2 of 5 tasks predate the cutoff


def test_the_report_warns_when_most_tasks_predate_every_cutoff() -> None:
    found = records({"alpha": [True] * 5}, model="gpt-5")  # packaged: 2024-09-30
    report = build_report(**found, cutoffs={})  # type: ignore[arg-type]
    (split,) = report.contamination.cutoffs
    assert (split.cutoff, split.declared) == ("2024-09-30", False)
    warning = report.contamination.warning
    assert warning is not None
    assert "4 of 5 scored tasks" in warning
    assert "miner.since: 2024-09-30" in warning


def test_the_json_report_carries_it_valid_against_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = report_schema()
    found = records({"alpha": [True, False, True, False, True]}, model="gpt-5")
    document = json.loads(build_report(**found, cutoffs={}).to_json())  # type: ignore[arg-type]
    jsonschema.Draft202012Validator(schema).validate(document)
    assert document["contamination"]["patches"][0]["similarity"]["recalled"] is True
    defs = schema["$defs"]
    for model, found_schema in (
        (Contamination, schema["properties"]["contamination"]),
        (PatchSimilarity, defs["patch_similarity"]),
        (CutoffSplit, defs["cutoff_split"]),
        (Similarity, defs["similarity"]),
    ):
        assert set(found_schema["properties"]) == set(model.model_fields), model
        assert set(found_schema["required"]) == set(model.model_fields), model


def test_every_text_report_shows_it() -> None:
    found = records({"alpha": [True, False, True, False, True]}, model="gpt-5")
    report = build_report(**found, cutoffs={})  # type: ignore[arg-type]
    markdown = MarkdownReporter().render(report)
    assert "## How contaminated" in markdown
    assert "| t0 | alpha | 1.00 | 1.00 | yes |" in markdown
    # t0-t3 fixed before gpt-5's cutoff (t0, t2 resolved), t4 after it (resolved)
    assert (
        "| alpha | 2024-09-30 (packaged) | 2/4 (50%, 95% CI 15-85%) | 1/1 (100%, 95% CI 21-100%) |"
        in markdown
    )
    assert "Warning: 4 of 5 scored tasks" in markdown
    assert "How contaminated" in TerminalReporter(TerminalOptions(width=200)).render(report)
    assert "<h2>How contaminated</h2>" in HtmlReporter().render(report)


def test_the_packaged_recall_config_names_valid_options() -> None:
    path = Path(bugbout.conf.__file__).parent / "auditor" / "recall.yaml"
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert config.pop("name") == "recall"
    assert RecallOptions.model_validate(config) == RecallOptions()
