"""The sweep summary: every job of a sweep side by side, from the jobs' own records.

The sweep below races two contestants on three scored tasks under two judge policies,
with one examiner (``repro``) whose attempts every job shares:

===  ============================  ==========  ==============  ===========  =========
job  overrides                     resolved    judge's picks   merge gate   runs
===  ============================  ==========  ==============  ===========  =========
0    contestant=a judge=majority   a 2/3       2 of 3 right    2/2 right    6 made
1    contestant=a judge=strict     a 2/3       2 of 2, 1 abst  2/2 right    6 reused
2    contestant=b judge=majority   b 1/3       1 of 3 right    1/3 right    3 + 3
3    contestant=b judge=strict     b 1/3       1 of 1, 2 abst  1/1 right    6 reused
4    (its report.json is cut short)
5    (an empty directory: the job died before writing anything)
===  ============================  ==========  ==============  ===========  =========
"""

from __future__ import annotations

import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from bugbout.config.callbacks import SweepSummaryCallback
from bugbout.core.contract.errors import BugboutError
from bugbout.core.report.report import (
    AgentRow,
    GateRow,
    MergeGate,
    Picking,
    PolicyPicks,
    Report,
    Totals,
    UsageRow,
)
from bugbout.core.store.verdict_records import Job, JobAttempt
from bugbout.sweep import (
    SUMMARY_FILES,
    SWEEP_SCHEMA_VERSION,
    SweepJob,
    SweepSummary,
    load_sweep,
    render_summary,
    render_sweep,
    write_sweep_summary,
)
from bugbout.sweep.render import job_labels

TASKS = ("t1", "t2", "t3")
RESOLVED = {"a": 2, "b": 1}
TOKENS = {"a": 3000, "b": 1200, "repro": 500}
HOSTILE = 'contestant.a.prompt="<script>alert(1)</script> & | pipe"'
STARTED = "2026-12-02T10:00:00+00:00"


def make_report(
    contestant: str, policy: str, picks: int, right: int, gate: tuple[int, int]
) -> Report:
    """One job's report: ``contestant`` on three scored tasks, judged by ``policy``."""
    resolved = RESOLVED[contestant]
    approvals, right_approvals = gate
    usage = [
        UsageRow(name=contestant, role="contestant", agent="command", attempts=3, tasks=3,
                 tokens=TOKENS[contestant], usage={"input": TOKENS[contestant]}, wall_time=30.0),
        UsageRow(name="repro", role="examiner", agent="command", attempts=3, tasks=3,
                 tokens=TOKENS["repro"], usage={"input": TOKENS["repro"]}, wall_time=9.0),
    ]  # fmt: skip
    return Report(
        contestants=[contestant],
        examiners=["repro"],
        policies=[policy],
        agents=[
            AgentRow(
                contestant=contestant,
                agent="command",
                attempted=3,
                scored=3,
                resolved=resolved,
                wrong_fix=3 - resolved,
                resolve_rate=resolved / 3,
                tokens=TOKENS[contestant],
                wall_time=30.0,
            )
        ],
        picking=Picking(
            tasks=3,
            policies=[
                PolicyPicks(
                    policy=policy,
                    tasks=3,
                    picks=picks,
                    resolved=right,
                    abstentions=3 - picks,
                    precision=right / picks,
                    resolve_rate=right / 3,
                )
            ],
        ),
        merge_gate=MergeGate(
            policies=[
                GateRow(
                    policy=policy,
                    patches=3,
                    approvals=approvals,
                    right_approvals=right_approvals,
                    precision=right_approvals / approvals,
                    right=resolved,
                    wrong=3 - resolved,
                    stopped=3 - resolved - (approvals - right_approvals),
                )
            ]
        ),
        totals=Totals(agents=usage, tokens=sum(row.tokens for row in usage), wall_time=39.0),
    )


def make_job(contestant: str, judge: str, *, reused: set[str], extra: tuple[str, ...] = ()) -> Job:
    """One job's record; the attempts of the agents in ``reused`` were found in the store."""
    return Job(
        overrides=[f"contestant={contestant}", f"judge={judge}", *extra],
        judge=judge,
        auditor="gate",
        contestants=[contestant],
        examiners=["repro"],
        attempts=[
            JobAttempt(
                task_id=task,
                contestant=agent,
                path=f"attempts/{task}/{agent}.json",
                reused=agent in reused,
            )
            for agent in (contestant, "repro")
            for task in TASKS
        ],
        started=STARTED,
        wall_time=40.0,
    )


def write_job(directory: Path, job: Job | None, report: Report | None) -> None:
    directory.mkdir(parents=True)
    if job is not None:
        (directory / "job.json").write_text(job.model_dump_json(indent=2), encoding="utf-8")
    if report is not None:
        (directory / "report.json").write_text(report.to_json(), encoding="utf-8")


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    """The sweep of the module's docstring."""
    root = tmp_path / ".bugbout" / "sweeps" / "2026-12-02_10-00-00"
    write_job(
        root / "0",
        make_job("a", "majority", reused=set(), extra=(HOSTILE,)),
        make_report("a", "majority", 3, 2, (2, 2)),
    )
    write_job(
        root / "1",
        make_job("a", "strict", reused={"a", "repro"}),
        make_report("a", "strict", 2, 2, (2, 2)),
    )
    write_job(
        root / "2",
        make_job("b", "majority", reused={"repro"}),
        make_report("b", "majority", 3, 1, (3, 1)),
    )
    write_job(
        root / "3",
        make_job("b", "strict", reused={"b", "repro"}),
        make_report("b", "strict", 1, 1, (1, 1)),
    )
    write_job(root / "4", make_job("c", "majority", reused=set()), None)
    (root / "4" / "report.json").write_text('{"schema": "bugbout.report/2", "agen', "utf-8")
    (root / "5").mkdir()
    (root / "multirun.yaml").write_text("hydra: {}\n", encoding="utf-8")
    (root / "notes").mkdir()  # neither a job number nor a job's files: not a job
    return root  # fmt: skip


def test_every_job_side_by_side(sweep: Path) -> None:
    summary = load_sweep(sweep)
    assert summary.sweep == "2026-12-02_10-00-00"
    assert [job.name for job in summary.jobs] == ["0", "1", "2", "3", "4", "5"]
    assert [job.number for job in summary.jobs] == [0, 1, 2, 3, 4, 5]
    assert summary.contestants == ["a", "b"]
    figures = {
        job.name: (
            job.judge,
            {c.contestant: (c.resolved, c.scored, c.resolve_rate) for c in job.contestants},
            job.picks_resolve_rate,
            job.precision,
            job.abstentions,
            job.gate_precision,
            job.tokens,
            job.wall_time,
            job.attempts_run,
            job.attempts_reused,
        )
        for job in summary.jobs
    }
    assert figures == {
        "0": ("majority", {"a": (2, 3, 2 / 3)}, 2 / 3, 2 / 3, 0, 1.0, 3500, 40.0, 6, 0),
        "1": ("strict", {"a": (2, 3, 2 / 3)}, 2 / 3, 1.0, 1, 1.0, 3500, 40.0, 0, 6),
        "2": ("majority", {"b": (1, 3, 1 / 3)}, 1 / 3, 1 / 3, 0, 1 / 3, 1700, 40.0, 3, 3),
        "3": ("strict", {"b": (1, 3, 1 / 3)}, 1 / 3, 1.0, 2, 1.0, 1700, 40.0, 0, 6),
        "4": ("majority", {}, None, None, 0, None, 0, 40.0, 6, 0),
        "5": (None, {}, None, None, 0, None, 0, None, 0, 0),
    }
    assert summary.jobs[0].overrides == ["contestant=a", "judge=majority", HOSTILE]


def test_failed_jobs_are_listed_with_a_one_line_reason(sweep: Path) -> None:
    summary = load_sweep(sweep)
    status = {job.name: (job.status, job.reason) for job in summary.jobs}
    assert {name for name, (state, _) in status.items() if state == "failed"} == {"4", "5"}
    assert status["4"][1] is not None and status["4"][1].startswith("report.json is unreadable (")
    assert status["5"][1] == (
        "no job.json: the job failed or is still running; "
        "no report.json: the job failed or is still running"
    )
    assert all("\n" not in (reason or "") for _, reason in status.values())
    text = render_summary(summary, "markdown")
    assert "| 4 | report.json is unreadable (" in text
    rows = markdown_rows(text, "## Jobs side by side")
    assert rows[6] == ["4 (c, majority) (failed)", "majority", *["-"] * 7, "40.0s", "6/0"]
    assert rows[7] == ["5 (failed)", *["-"] * 10]


def test_an_empty_error_file_still_marks_the_job_failed(sweep: Path) -> None:
    (sweep / "0" / "error.txt").write_text("\n")
    (job,) = [job for job in load_sweep(sweep).jobs if job.name == "0"]
    assert (job.status, job.reason) == ("failed", "the job failed (error.txt is empty)")


def test_totals_count_reused_runs_and_each_run_once(sweep: Path) -> None:
    totals = load_sweep(sweep).totals
    assert (totals.jobs, totals.failed) == (6, 2)
    assert (totals.attempts_run, totals.attempts_reused) == (6 + 0 + 3 + 0 + 6, 0 + 6 + 3 + 6)
    # a's attempts (3000) are shared by jobs 0 and 1, b's (1200) by 2 and 3, repro's by all
    assert totals.tokens == 3000 + 1200 + 500
    assert totals.wall_time == 5 * 40.0
    assert totals.elapsed == 40.0  # jobs 0 to 4 start together; job 5 never said when


def test_elapsed_spans_the_jobs(tmp_path: Path) -> None:
    for number, started in enumerate(("2026-12-02T10:00:00+00:00", "2026-12-02T10:00:30+00:00")):
        job = make_job("a", "majority", reused=set()).model_copy(update={"started": started})
        write_job(tmp_path / str(number), job, make_report("a", "majority", 3, 2, (2, 2)))
    assert load_sweep(tmp_path).totals.elapsed == 70.0


def markdown_rows(text: str, heading: str) -> list[list[str]]:
    """The cells of the first table after ``heading``."""
    lines = text[text.index(heading) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| "))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def test_markdown_puts_every_job_in_one_table(sweep: Path) -> None:
    text = render_sweep(sweep, "markdown")
    assert text.startswith("# bugbout sweep summary\n")
    assert "agent runs: 15 made, 15 reused" in text and "- best: a in job 0 (a, " in text, text
    header, _, *rows = markdown_rows(text, "## Jobs side by side")
    assert header == [
        "job", "judge", "a", "b", "picks", "pick precision", "abstained", "gate precision",
        "tokens", "wall time", "runs made/reused",
    ]  # fmt: skip
    assert rows[1] == [
        "1 (a, strict)", "strict", "67% 2/3 (21-94%)", "-", "67% 2/3",
        "100%", "1", "100%", "3,500", "40.0s", "0/6",
    ]  # fmt: skip
    assert rows[2][:4] == ["2 (b, majority)", "majority", "-", "33% 1/3 (6-79%)"]
    # only the overrides that tell jobs apart label them, a hostile value escaped
    assert rows[0][0].startswith("0 (a, majority, ") and rows[0][0].endswith(r'\| pipe")')
    totals = dict(markdown_rows(text, "## The whole sweep")[2:])
    assert totals["agent runs reused"] == "15"
    assert totals["tokens (each agent run once)"] == "4,700"


class Balance(HTMLParser):
    """Every element opened and closed in order; every tag and attribute."""

    VOID = frozenset({"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "wbr"})

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.problems: list[str] = []
        self.elements: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.open[-1:] or 'nothing'}")
        else:
            self.open.pop()


def test_html_is_well_formed_and_self_contained(sweep: Path) -> None:
    text = render_sweep(sweep, "html")
    assert text.startswith("<!DOCTYPE html>")
    parser = Balance()
    parser.feed(text)
    parser.close()
    assert parser.problems == [] and parser.open == []
    tags = [tag for tag, _ in parser.elements]
    assert not set(tags) & {"script", "link", "img", "iframe", "object", "embed"}
    assert {"style", "table", "svg", "rect", "figure"} <= set(tags)
    assert tags.count("svg") >= 4  # the plots (the legends' keys are small svgs too)
    for tag, attrs in parser.elements:
        assert not {"src", "srcset", "onerror", "onload"} & set(attrs), (tag, attrs)
        assert (attrs.get("href") or "#").startswith("#"), (tag, attrs)
    assert "url(" not in text and "@import" not in text and "http" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; | pipe" in text
    assert "Agent runs per job: made, or reused from the store" in text
    assert "6 jobs, 2 failed; agent runs: 15 made, 15 reused" in text
    assert "report.json is unreadable (" in text


def test_terminal_and_json(sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")  # the width of the terminal the suite runs in
    text = render_sweep(sweep, "terminal")
    assert "agent runs: 15 made, 15 reused" in text
    assert "Jobs side by side" in text and "Failed jobs" in text
    data = json.loads(render_sweep(sweep, "json"))
    assert data["schema"] == SWEEP_SCHEMA_VERSION
    assert SweepSummary.model_validate(data) == load_sweep(sweep)
    # each contestant's resolve rate with its Wilson interval, job by job
    intervals = {
        (job["name"], row["contestant"]): (row["resolved"], row["scored"], row["low"], row["high"])
        for job in data["jobs"]
        for row in job["contestants"]
    }
    assert intervals[("0", "a")] == (
        2,
        3,
        pytest.approx(0.2077, abs=1e-4),
        pytest.approx(0.9385, abs=1e-4),
    )
    assert intervals[("2", "b")] == (
        1,
        3,
        pytest.approx(0.0615, abs=1e-4),
        pytest.approx(0.7923, abs=1e-4),
    )


def test_write_sweep_summary_writes_the_three_files(sweep: Path) -> None:
    summary = write_sweep_summary(sweep)
    assert sorted(p.name for p in sweep.iterdir() if p.is_file()) == sorted(
        ["multirun.yaml", *SUMMARY_FILES.values()]
    )
    stored = SweepSummary.model_validate_json((sweep / "summary.json").read_text("utf-8"))
    assert stored == summary
    assert (sweep / "summary.md").read_text("utf-8") == render_summary(summary, "markdown")
    assert (sweep / "summary.html").read_text("utf-8") == render_summary(summary, "html")
    # the summary files are not jobs: summarising again finds the same jobs
    assert write_sweep_summary(sweep) == summary


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("missing", "is not a directory; pass a sweep's directory"),
        ("empty", "holds no sweep jobs (directories with job.json and report.json)"),
    ],
)
def test_no_sweep_is_a_one_line_error(tmp_path: Path, where: str, message: str) -> None:
    path = tmp_path / where
    if where == "empty":
        path.mkdir()
    with pytest.raises(BugboutError, match=re.escape(message)) as info:
        render_sweep(path, "markdown")
    assert "\n" not in str(info.value)


def test_an_unknown_format_names_the_valid_ones(sweep: Path) -> None:
    with pytest.raises(BugboutError, match="use one of terminal, markdown, json, html"):
        render_sweep(sweep, "pdf")


def test_callback_writes_the_summary_and_says_where(
    sweep: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from omegaconf import OmegaConf

    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(sweep)}}})
    SweepSummaryCallback().on_multirun_end(config)
    out = capsys.readouterr().out
    *table, last = out.splitlines()
    assert last.startswith(f"sweep summary: {sweep / 'summary.html'} (best: a in job 0 (a, ")
    assert last.endswith("67% 2/3 (21-94%); 6 jobs, 2 failed; agent runs: 15 made, 15 reused)")
    assert any("Jobs side by side" in line for line in table)  # the table, printed
    assert all((sweep / name).is_file() for name in SUMMARY_FILES.values())


def test_callback_warns_instead_of_failing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from omegaconf import OmegaConf

    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}})
    SweepSummaryCallback().on_multirun_end(config)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("warning: no sweep summary: ") and captured.err.count("\n") == 1


def test_a_real_multirun_ends_with_the_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sweep of two racers by two policies with a throwaway config (its keys are not
    bugbout's groups, which other tests register in Hydra's ConfigStore) and the callback
    registered as bugbout's base config does; the (b, strict) job dies before its
    report."""
    import hydra
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import DictConfig

    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "config.yaml").write_text(
        "defaults: [base, _self_]\nracer: a\npolicy: majority\n", encoding="utf-8"
    )
    (conf / "base.yaml").write_text(
        "hydra:\n  callbacks:\n    sweep_summary:\n"
        "      _target_: bugbout.config.callbacks.SweepSummaryCallback\n",
        encoding="utf-8",
    )
    ran: set[str] = set()
    picks = {"majority": (3, 2, 0), "strict": (2, 2, 1)}

    @hydra.main(version_base="1.3", config_path=str(conf), config_name="config")
    def job(cfg: DictConfig) -> None:
        out = Path(HydraConfig.get().runtime.output_dir)
        name, judge = str(cfg.racer), str(cfg.policy)
        record = make_job(name, judge, reused={agent for agent in (name, "repro") if agent in ran})
        record = record.model_copy(update={"overrides": list(HydraConfig.get().overrides.task)})
        ran.update({name, "repro"})
        (out / "job.json").write_text(record.model_dump_json(), encoding="utf-8")
        if (name, judge) != ("b", "strict"):
            count, right, _ = picks[judge]
            report = make_report(name, judge, count, right, (right, right))
            (out / "report.json").write_text(report.to_json(), encoding="utf-8")

    sweeps = tmp_path / ".bugbout" / "sweeps"
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr(sys, "argv", [
        "bugbout", "-m", "racer=a,b", "policy=majority,strict",
        f"hydra.sweep.dir={sweeps}/${{now:%Y-%m-%d_%H-%M-%S}}", "hydra.output_subdir=null",
        "hydra.job.chdir=false", "hydra/job_logging=none", "hydra/hydra_logging=none",
    ])  # fmt: skip
    job()

    (sweep_dir,) = sweeps.iterdir()
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("best: a in job 0 (a, majority), 67% 2/3 (21-94%); 4 jobs, 1 failed; "
                           "agent runs: 9 made, 15 reused")  # fmt: skip
    assert out[-1] == (
        f"sweep summary: {sweep_dir / 'summary.html'} (best: a in job 0 (a, majority), "
        "67% 2/3 (21-94%); 4 jobs, 1 failed; agent runs: 9 made, 15 reused)"
    )
    assert any(line.strip().startswith("1 (a, strict)") for line in out), out
    summary = SweepSummary.model_validate_json((sweep_dir / "summary.json").read_text("utf-8"))
    assert [(job.overrides, job.status) for job in summary.jobs] == [
        (["racer=a", "policy=majority"], "ok"),
        (["racer=a", "policy=strict"], "ok"),
        (["racer=b", "policy=majority"], "ok"),
        (["racer=b", "policy=strict"], "failed"),
    ]
    assert summary.jobs[3].reason == "no report.json: the job failed or is still running"
    assert [job.attempts_reused for job in summary.jobs] == [0, 6, 3, 6]
    assert (sweep_dir / "summary.md").is_file() and (sweep_dir / "summary.html").is_file()


def test_job_labels_name_the_key_when_one_value_is_given_to_two_keys() -> None:
    """Jobs are labelled by the overrides that vary, bare values when each is unambiguous,
    ``key=value`` when the same value is given to two keys (``x`` below)."""
    plain = SweepSummary(
        sweep="s",
        jobs=[
            SweepJob(name="0", overrides=["racer=a", "policy=strict", "seed=1"]),
            SweepJob(name="1", overrides=["racer=b", "policy=strict", "seed=1"]),
        ],
    )
    assert job_labels(plain) == {"0": "0 (a)", "1": "1 (b)"}
    clash = SweepSummary(
        sweep="s",
        jobs=[
            SweepJob(name="0", overrides=["racer=x", "policy=y"]),
            SweepJob(name="1", overrides=["racer=y", "policy=x"]),
        ],
    )
    assert job_labels(clash) == {"0": "0 (racer=x, policy=y)", "1": "1 (racer=y, policy=x)"}
