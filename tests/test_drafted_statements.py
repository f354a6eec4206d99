"""Statements drafted by a contestant's model (``tasks.statement: drafted``) on a real
history with real pytest runs, the model a scripted server: a clean draft is used and
kept, one that leaks the fix is refused, an unreachable model falls back."""

from __future__ import annotations

import contextlib
import http.server
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import BoutSettings, TasksSettings
from bugbout.core.mine.drafting import DraftingFailed
from bugbout.core.mine.leaks import Secrets, leak
from bugbout.core.mine.statements import tell_statements
from bugbout.core.pipeline import build_contestants, compute_oracles, make_drafter, mine_tasks
from bugbout.core.plumbing.trees.git import Git
from bugbout.core.report.report_build import build_report
from bugbout.core.store.drafts import DRAFTS, Draft, Drafts
from bugbout.core.store.records import Oracle, OracleSet, TaskSet
from bugbout.core.store.store import TASKS, Store
from bugbout.render.html_tasks import task_pages_html
from bugbout.testing import RepositoryBuilder
from bugbout.testing.model_server import INPUT_TOKENS, OUTPUT_TOKENS, ModelServer, Say
from bugbout.testing.model_server.replies import AUXILIARY_TEXT
from history import calc_settings
from report_records import task
from test_mutant_tasks import build
from test_mutant_tasks import settings as mutant_settings

PARSE = "def parse_number(text):\n    return float(text.replace(',', '').lstrip('-'))\n"
FIXED = """\
_SIGNS = {"-": -1.0, "+": 1.0}


def _keep_sign(text, value):
    # numbers below zero keep the minus sign they were written with
    return -value if text.startswith("-") else value


def parse_number(text):
    return _keep_sign(text, float(text.replace(",", "").lstrip("-")))
"""
TESTS = "from calc.parse import parse_number\n\n\ndef test_thousands():\n" + (
    "    assert parse_number('1,000') == 1000.0\n"
)
NEGATIVE = (
    "\n\ndef test_negative_numbers_keep_their_sign():\n    assert parse_number('-2.5') == -2.5\n"
)
CLEAN = (
    "Parsing a negative number such as -2.5 gives a positive result: the minus sign is "
    "lost. test_negative_numbers_keep_their_sign expects -2.5."
)
LEAKY = 'The sign is dropped; keep it with return -value if text.startswith("-") else value'
NAMING = "Negative numbers lose their sign; a helper like _keep_sign would keep it."


def _history(root: Path) -> tuple[Path, str]:
    repo = RepositoryBuilder(root)
    repo.commit(
        "Initial commit",
        {
            "pyproject.toml": '[project]\nname = "calc"\nrequires-python = ">=3.9"\n',
            "src/calc/__init__.py": "",
            "src/calc/parse.py": PARSE,
            "tests/test_parse.py": TESTS,
        },
    )
    fix = repo.commit(
        "Fix negative numbers losing their sign\n\nNumbers below zero came back positive. "
        'A table like {"-": -1.0, "+": 1.0} was missing.',  # code the fix added: not told
        {"src/calc/parse.py": FIXED, "tests/test_parse.py": TESTS + NEGATIVE},
    )
    return repo.path, fix


def _settings(
    repo: Path, statement: str = "drafted", **contestants: dict[str, object]
) -> BoutSettings:
    settings = calc_settings(repo, miner={"tiers": ["fix"]})
    return settings.model_copy(
        update={
            "tasks": TasksSettings(statement=statement, drafter="writer"),  # type: ignore[arg-type]
            "contestants": contestants,
        }
    )


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
def test_a_draft_is_used_kept_and_refused_when_it_leaks(tmp_path: Path) -> None:
    repo, fix = _history(tmp_path / "repo")
    store, plugins = Store(tmp_path / ".bugbout"), make_plugins(entry_points=False)
    with ModelServer([Say(CLEAN)]) as clean, ModelServer([Say(LEAKY)]) as leaky:
        writer = {"agent": "codex", "model": "gpt-w", "base-url": f"{clean.url}/v1"}
        settings = _settings(repo, writer=writer)
        tasks = mine_tasks(settings, plugins, store)
        compute_oracles(settings, plugins, store, tasks)
        task = tasks.get(fix[:12])
        assert task.tier == "fix" and task.scored
        assert task.problem_statement == CLEAN
        assert task.statement_origin == "drafted by writer (gpt-w)"
        [asked] = clean.requests
        assert asked.path == "/v1/chat/completions" and asked.body["model"] == "gpt-w"
        given = asked.body["messages"][1]["content"]
        assert given.startswith(
            "Fix negative numbers losing their sign\n\nNumbers below zero came back positive.\n\n"
        )
        assert "test_negative_numbers_keep_their_sign: AssertionError" in given
        for secret in ("_keep_sign", "startswith", "parse_number('-2.5')", "-value", "1.0"):
            assert secret not in json.dumps(asked.body), secret
        stored = store.read(TASKS, TaskSet)
        assert stored is not None and stored.get(task.id).statement_origin == task.statement_origin
        drafts = store.read(DRAFTS, Drafts)
        assert drafts is not None
        assert drafts.root[task.id].usage == {
            "input_tokens": INPUT_TOKENS,
            "output_tokens": OUTPUT_TOKENS,
        }

        again = mine_tasks(settings, plugins, store)  # resumed: the stored draft, not drafted again
        compute_oracles(settings, plugins, store, again)
        assert again.get(task.id).problem_statement == CLEAN
        moved = {**writer, "base-url": f"{leaky.url}/v1"}  # the same model served elsewhere
        compute_oracles(_settings(repo, writer=moved), plugins, store, again)
        assert again.get(task.id).problem_statement == CLEAN
        assert (len(clean.requests), len(leaky.requests)) == (1, 0)

        codex = {"agent": "codex", "model": "gpt-x", "base-url": f"{leaky.url}/v1"}
        leaking = mine_tasks(settings, plugins, store)  # another model: drafted again
        compute_oracles(_settings(repo, writer=codex), plugins, store, leaking)
        refused = leaking.get(task.id)
        assert [r.path for r in leaky.requests] == ["/v1/chat/completions"]
        assert refused.problem_statement.startswith("Fix negative numbers losing their sign")
        assert "startswith" not in refused.problem_statement
        assert refused.statement_origin == (
            "scrubbed: the draft by writer (gpt-x) is refused: it shows a line the fix added: "
            'return -value if text.startswith("-") else value'
        )

        scrubbed = mine_tasks(settings, plugins, store)
        compute_oracles(_settings(repo, "scrubbed", writer=codex), plugins, store, scrubbed)
        assert scrubbed.get(task.id).statement_origin == "scrubbed"
        assert scrubbed.get(task.id).problem_statement == refused.problem_statement
        assert len(leaky.requests) == 1

    offline = {"agent": "mini-swe-agent", "model": "openai/gpt-z"}
    offline["base-url"] = f"http://127.0.0.1:{_closed_port()}/v1"
    unreached = mine_tasks(settings, plugins, store)
    compute_oracles(_settings(repo, writer=offline), plugins, store, unreached)
    fallen = unreached.get(task.id)
    assert fallen.scored and fallen.problem_statement == refused.problem_statement
    assert fallen.statement_origin.startswith(
        "scrubbed: drafting failed: writer (gpt-z) cannot be reached at http://127.0.0.1:"
    )


def test_a_draft_naming_what_only_the_fix_introduces_is_refused(tmp_path: Path) -> None:
    repo, fix = _history(tmp_path / "repo")
    with Git(repo) as git:
        tasks = mine_tasks(_settings(repo, "scrubbed"), make_plugins(entry_points=False),
                           Store(tmp_path / ".bugbout"))  # fmt: skip
        secrets = Secrets.of(git, tasks.get(fix[:12]))
    reported = "Numbers below zero came back positive.\n\n- tests/test_parse.py::test_x"
    assert secrets.names == {"_SIGNS", "_keep_sign", "startswith", "value"}
    assert leak(CLEAN, reported, secrets) == ""
    assert leak("The value loses its sign.", reported, secrets) == ""  # a word, not a name
    prose = "Numbers below zero should keep the minus sign they were written with."
    assert leak(prose, reported, secrets) == ""  # words of a comment the fix added are not code
    assert leak(NAMING, reported, secrets) == "it names _keep_sign, which only the fix introduces"
    added = "a check: assert parse_number('-2.5') == -2.5 fails"
    assert leak(added, reported, secrets) == (
        "it shows a line the fix added: assert parse_number('-2.5') == -2.5"
    )
    test_line = "as in assert parse_number('1,000') == 1000.0"
    assert leak(test_line, reported, secrets) == (
        "it shows a line of the hidden tests: assert parse_number('1,000') == 1000.0"
    )
    run = "it calls float ( text . replace ( ',' then"
    assert leak(run, reported, secrets) == (
        "it repeats 8 tokens of the fix: float ( text . replace ( ' ,"
    )
    removed = "it does return float(text.replace(',', '').lstrip('-')) and forgets"
    assert leak(removed, reported, secrets).startswith("it shows a line the fix removed:")
    echoed = f"{reported}\n\nreturn float(text)"  # what the reporter saw may be repeated
    assert leak(echoed, reported + "\nreturn float(text)", secrets) == ""


@pytest.mark.parametrize(
    ("agent", "model", "suffix", "path", "said"),
    [  # the scripted Messages and Gemini APIs answer a request that offers no tool "OK"
        ("claude-code", "claude-x", "", "/v1/messages", AUXILIARY_TEXT),
        ("codex", "gpt-x", "/v1", "/v1/chat/completions", CLEAN),
        ("gemini-cli", "gemini-x", "", "/v1beta/models/gemini-x:generateContent", AUXILIARY_TEXT),
        ("mini-swe-agent", "anthropic/claude-x", "", "/v1/messages", AUXILIARY_TEXT),
        ("mini-swe-agent", "hosted_vllm/local-x", "/v1", "/v1/chat/completions", CLEAN),
    ],
)
def test_each_agents_model_is_reached_over_its_own_api(
    tmp_path: Path, agent: str, model: str, suffix: str, *, path: str, said: str
) -> None:
    with ModelServer([Say(CLEAN)]) as server:
        entry = {"agent": agent, "model": model, "base-url": f"{server.url}{suffix}"}
        entry["env"] = {
            "ANTHROPIC_API_KEY": "k-a",
            "OPENAI_API_KEY": "k-o",
            "GEMINI_API_KEY": "k-g",
        }
        drafter = make_drafter(_settings(tmp_path, writer=entry), make_plugins(entry_points=False))
        text, usage = drafter.draft("Numbers below zero came back positive.")
        [asked] = server.requests
    assert (text, asked.path) == (said, path)
    assert asked.body.get("model", model.partition("/")[2] or model) in model
    assert usage == {"input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS}
    assert "Numbers below zero came back positive." in json.dumps(asked.body)
    headers = {name.lower(): value for name, value in asked.headers.items()}
    assert {"k-a", "k-o", "k-g"} & {
        headers.get("x-api-key"),
        headers.get("authorization", "").removeprefix("Bearer "),
        headers.get("x-goog-api-key"),
    }


def test_a_drafter_that_names_no_usable_contestant_fails_in_one_line(tmp_path: Path) -> None:
    plugins = make_plugins(entry_points=False)
    with pytest.raises(ConfigError, match=r"^tasks.drafter: no contestant 'writer'; define"):
        make_drafter(_settings(tmp_path), plugins)
    with pytest.raises(ConfigError, match=r"set contestants.writer.model to draft with it$"):
        make_drafter(_settings(tmp_path, writer={"agent": "claude-code"}), plugins)
    chosen = _settings(tmp_path).model_copy(update={"contestant": {"writer": {"agent": "codex"}}})
    with pytest.raises(ConfigError, match=r"set contestant.writer.model to draft with it$"):
        make_drafter(chosen, plugins)
    unnamed = _settings(tmp_path).model_copy(update={"tasks": TasksSettings(statement="drafted")})
    with pytest.raises(ConfigError, match=r"names no contestant; set tasks.drafter"):
        make_drafter(unnamed, plugins)


def test_a_drafted_statement_keys_the_attempts_and_is_shown_in_the_report(tmp_path: Path) -> None:
    settings = BoutSettings.model_validate(
        {
            "project": {"source": "src"},
            "contestants": {"c": {"agent": "command", "command": ["true"]}},
        }
    )
    [racer] = build_contestants(settings, make_plugins(entry_points=False))
    scrubbed = task("a1b2c3d4e5f6", 0, "2 tests failing", "Failing: test_x")
    scrubbed.statement_origin = "scrubbed"
    drafted = scrubbed.model_copy(
        update={"problem_statement": CLEAN, "statement_origin": "drafted by w (gpt-w)"}
    )
    reworded = drafted.model_copy(update={"problem_statement": CLEAN + " Again."})
    assert racer.key(scrubbed) == racer.key(scrubbed.model_copy(update={"statement_origin": ""}))
    assert len({racer.key(scrubbed), racer.key(drafted), racer.key(reworded)}) == 3
    for shown in (scrubbed, drafted):
        shown.tier = "fix"
    oracles = OracleSet({scrubbed.id: Oracle(task_id=scrubbed.id, status="ok")})
    report = build_report(TaskSet(tasks=[drafted]), oracles, [], [], [], [], [])
    [row] = report.tasks
    assert (row.statement_origin, row.origin()) == ("drafted by w (gpt-w)", "fix, drafted")
    refused = "scrubbed: the draft by w (gpt-w) is refused: it names _keep_sign"
    scrubbed.statement_origin = refused
    [row] = build_report(TaskSet(tasks=[scrubbed]), oracles, [], [], [], [], []).tasks
    assert row.origin() == "fix"
    html = "\n".join(task_pages_html(report.model_copy(update={"tasks": [row]})))
    assert f"problem statement ({refused})" in html


@pytest.mark.slow
def test_an_injected_bug_is_drafted_from_its_failures_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    repo = build(tmp_path / "repo")
    store, plugins = Store(tmp_path / ".bugbout"), make_plugins(entry_points=False)
    with ModelServer([Say("The area of a square comes out wrong.")]) as server:
        writer = {"agent": "codex", "model": "gpt-w", "base-url": f"{server.url}/v1"}
        chosen = mutant_settings(repo.path, limit=2, **{"per-function": 1}).model_copy(
            update={
                "tasks": TasksSettings(reruns=1, statement="drafted", drafter="writer"),
                "contestants": {"writer": writer},
            }
        )
        tasks = mine_tasks(chosen, plugins, store)
        mined = {task.id: task.problem_statement for task in tasks.tasks}
        compute_oracles(chosen, plugins, store, tasks)
        assert len(server.requests) == len(tasks.tasks) == 2
        drafts = store.read(DRAFTS, Drafts)
        assert drafts is not None
        with Git(repo.path) as git:
            for task, asked in zip(tasks.tasks, server.requests, strict=True):
                assert task.tier == "injected" and task.drafted
                assert task.problem_statement == "The area of a square comes out wrong."
                given = asked.body["messages"][1]["content"]
                assert given == mined[task.id] == drafts.root[task.id].reported
                secrets = Secrets.of(git, task)
                for line in (*secrets.added, *secrets.removed, *secrets.tests):
                    assert line not in given, line
        compute_oracles(chosen, plugins, store, tasks)  # its drafted tasks again: kept
        assert len(server.requests) == 2
        assert {task.problem_statement for task in tasks.tasks} == {
            "The area of a square comes out wrong."
        }


class _Answering(http.server.BaseHTTPRequestHandler):
    """A model API that answers every request with the server's ``status`` after
    ``delay`` seconds."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        self.server.asked += 1  # type: ignore[attr-defined]
        time.sleep(self.server.delay)  # type: ignore[attr-defined]
        status, body = self.server.answer  # type: ignore[attr-defined]
        with contextlib.suppress(ConnectionError):  # the client gave up waiting
            self.send_response(status)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize(
    ("answer", "delay", "said"),
    [
        ((429, b"{}"), 0, "writer (gpt-x) answered HTTP 429 Too Many Requests"),
        ((200, b"<html>"), 0, "writer (gpt-x) answered something that is not JSON"),
        ((200, b'{"error": "no"}'), 0, "writer (gpt-x) answered without a statement"),
        (
            (200, b'{"choices": [{"message": {"content": " "}}]}'),
            0,
            "writer (gpt-x) answered no text",
        ),
        ((200, b"{}"), 2, "writer (gpt-x) did not answer in 0.5 s"),
    ],
)
def test_a_model_that_gives_no_statement_fails_in_one_line(
    tmp_path: Path, answer: tuple[int, bytes], delay: float, said: str
) -> None:
    with _answering(answer, delay) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        entry = {"agent": "codex", "model": "gpt-x", "base-url": url}
        drafter = make_drafter(_settings(tmp_path, writer=entry), make_plugins(entry_points=False))
        with pytest.raises(DraftingFailed) as failed:
            replace(drafter, timeout=0.5).draft("Numbers below zero came back positive.")
    assert str(failed.value) == said


@contextlib.contextmanager
def _answering(answer: tuple[int, bytes], delay: float = 0) -> Iterator[http.server.HTTPServer]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answering)
    server.answer, server.delay, server.asked = answer, delay, 0  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_a_failing_model_is_asked_no_more_after_three_failures_in_a_row(tmp_path: Path) -> None:
    repo, fix = _history(tmp_path / "repo")
    store, plugins = Store(tmp_path / ".bugbout"), make_plugins(entry_points=False)
    mined = mine_tasks(_settings(repo, "scrubbed"), plugins, store).get(fix[:12])
    tasks = TaskSet(tasks=[mined.model_copy(update={"id": f"t{n}"}) for n in range(5)])
    test = "tests/test_parse.py::test_negative_numbers_keep_their_sign"
    oracles = OracleSet(
        {task.id: Oracle(task_id=task.id, status="ok", fail_to_pass=[test]) for task in tasks.tasks}
    )
    warned: list[str] = []
    with _answering((503, b"{}")) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        settings = _settings(repo, writer={"agent": "codex", "model": "gpt-x", "base-url": url})
        tell_statements(
            repo, store, tasks, oracles,
            drafter=make_drafter(settings, plugins), jobs=settings.tasks.jobs, warn=warned.append,
        )  # fmt: skip
        assert server.asked == 3
        scrubbed = tasks.tasks[0].problem_statement
        assert scrubbed.endswith(f"- {test}\n\nFind the bug and fix it.")
        key = make_drafter(settings, plugins).key_of(scrubbed)
        kept = Draft(key=key, drafter="writer (gpt-x)", reported=scrubbed, text=CLEAN)
        store.write(DRAFTS, Drafts({"t4": kept}))
        tell_statements(
            repo, store, tasks, oracles,
            drafter=make_drafter(settings, plugins), jobs=settings.tasks.jobs, warn=warned.append,
        )  # fmt: skip
        assert server.asked == 6
    failed = "scrubbed: drafting failed: writer (gpt-x) answered HTTP 503 Service Unavailable"
    assert [task.statement_origin for task in tasks.tasks] == [failed] * 4 + [
        "drafted by writer (gpt-x)"
    ]
    assert tasks.tasks[4].problem_statement == CLEAN
    assert warned[3] == "writer (gpt-x) failed 3 times in a row: no more statements drafted"


def test_statements_are_drafted_tasks_jobs_at_once(tmp_path: Path) -> None:
    repo, fix = _history(tmp_path / "repo")
    store, plugins = Store(tmp_path / ".bugbout"), make_plugins(entry_points=False)
    mined = mine_tasks(_settings(repo, "scrubbed"), plugins, store).get(fix[:12])
    tasks = TaskSet(tasks=[mined.model_copy(update={"id": f"t{n}"}) for n in range(5)])
    oracles = OracleSet({task.id: Oracle(task_id=task.id, status="ok") for task in tasks.tasks})
    with _answering((200, json.dumps(_chat(CLEAN)).encode()), delay=0.5) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        settings = _settings(repo, writer={"agent": "codex", "model": "gpt-x", "base-url": url})
        settings = settings.model_copy(
            update={"tasks": settings.tasks.model_copy(update={"jobs": 5})}
        )
        started = time.monotonic()
        tell_statements(
            repo, store, tasks, oracles,
            drafter=make_drafter(settings, plugins), jobs=settings.tasks.jobs, warn=pytest.fail,
        )  # fmt: skip
        took = time.monotonic() - started
        assert server.asked == 5
    assert {task.problem_statement for task in tasks.tasks} == {CLEAN}
    assert took < 2.0  # five answers of half a second each, at once
    drafts = store.read(DRAFTS, Drafts)
    assert drafts is not None and sorted(drafts.root) == [f"t{n}" for n in range(5)]


def _chat(text: str) -> dict[str, object]:
    return {"choices": [{"message": {"content": text}}], "usage": {"prompt_tokens": 1}}
