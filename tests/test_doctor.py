"""``bugbout doctor``: the machine checks, each contestant's CLI (found, version, flags), and
``--dry-run``, which races the real CLIs against the scripted model server."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import components
from bugbout import doctor
from bugbout.core.contract.manager import Plugins
from bugbout.core.contract.settings import BoutSettings, PluginChoice, ProjectSettings
from bugbout.core.race.agents import VENDOR_KEYS
from bugbout.doctor import DUMMY_KEY, KNOWN_AGENTS, SECRET_VARIABLE, Check
from bugbout.doctor.clis import build_contestant, listed
from bugbout.doctor.known_agents import dry_entry
from bugbout.testing import RepositoryBuilder
from bugbout.testing import model_server as model_server_module
from python_mirror import downloads_json, hide

SECRETS = {
    "OPENAI_API_KEY": "sk-user-openai-secret",
    "ANTHROPIC_API_KEY": "sk-user-anthropic-secret",
    "GEMINI_API_KEY": "user-gemini-secret",
    "GOOGLE_API_KEY": "user-google-secret",
    "CODEX_API_KEY": "user-codex-secret",
}


def bugbout(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", "doctor", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=900,
        check=False,
    )


def lines(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """The report's lines by check name: ``{"git": "ok    git: 2.39.5 (/usr/bin/git)"}``."""
    found = {}
    for line in result.stdout.splitlines():
        status, _, rest = line.partition("  ")
        assert status.strip() in ("ok", "FAIL"), line
        found[rest.strip().split(":", 1)[0]] = line
    return found


def configured_repo(path: Path, **config: Any) -> Path:
    """A small repository with a ``bugbout.yaml`` (``config`` merged in)."""
    repo = RepositoryBuilder(path)
    repo.commit(
        "Initial",
        {
            "src/calc/__init__.py": "",
            "src/calc/core.py": "def add(a, b):\n    return a + b\n",
            "tests/test_core.py": "def test_nothing():\n    pass\n",
        },
    )
    settings = {
        "defaults": ["base", "_self_"],
        "project": {"source": "src/calc", "tests": "tests"},
        **config,
    }
    (path / "bugbout.yaml").write_text(json.dumps(settings))
    return path


def executable(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip())
    path.chmod(0o755)
    return path


# --------------------------------------------------------------------------------------------
# The machine


def test_machine_checks_pass_here(tmp_path: Path) -> None:
    repo = configured_repo(tmp_path / "repo")
    result = bugbout(cwd=repo / "src")
    assert result.returncode == 0, result.stdout + result.stderr
    found = lines(result)
    assert list(found) == [
        "git", "uv", "python", "sandbox", "guard", "checkouts", "podman", "repository",
        "project.source", "project.tests",
    ]  # fmt: skip
    assert all(line.startswith("ok    ") for line in found.values()), result.stdout
    assert f"{sys.version_info[0]}.{sys.version_info[1]}" in found["python"]
    assert "no contestants to check" in result.stderr


def test_without_a_config_the_machine_is_still_checked(tmp_path: Path) -> None:
    result = bugbout(cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert list(lines(result)) == [
        "git", "uv", "python", "sandbox", "guard", "checkouts", "podman",
    ]  # fmt: skip
    assert f"no bugbout.yaml in {tmp_path}" in result.stderr


def test_the_python_line_says_which_eras_the_machine_can_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bugbout.core.contract.manager import make_plugins
    from bugbout.doctor.eras import python_check

    hide(monkeypatch, tmp_path / "pyenv", "3.7", "3.8")
    listing = tmp_path / "downloads.json"  # uv offers 3.8 only (never fetched here)
    offered = downloads_json("3.8", 18, "http://127.0.0.1:9/x.tar.gz", "0" * 64)
    listing.write_text(json.dumps(offered))
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS_JSON_URL", str(listing))
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "home"))
    plugins = make_plugins(entry_points=False)

    def line(downloads: str, python: str | None = None) -> str:
        settings = BoutSettings(
            project=ProjectSettings(source="src/calc", python=python),
            environment=PluginChoice(name="uv", **{"python-downloads": downloads}),
        )
        return python_check(settings, plugins).line

    automatic = line("automatic")
    assert automatic.startswith("ok    python: eras found here: ")
    assert "; downloadable by uv: 3.8; neither: 3.7" in automatic
    assert automatic.endswith("(environment.python-downloads=automatic)")
    never = line("never")
    assert "; neither: 3.7, 3.8" in never and "downloadable" not in never
    assert never.endswith("(environment.python-downloads=never)")
    assert line("never", python="3.8").startswith(
        "FAIL  python: project.python is 3.8 but Python 3.8 is neither installed nor downloadable"
    )
    assert line("never", python="3.8").endswith("or set environment.python-downloads=automatic")
    assert line("automatic", python="3.8").startswith("ok    python: eras found here: ")


def test_the_guard_line_says_which_guard_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bugbout.doctor.machine import guard_check

    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "without"))
    monkeypatch.setenv("CC", str(tmp_path / "no-cc"))
    assert guard_check().line.startswith(
        f"ok    guard: guard.py, in Python (no C compiler ({tmp_path / 'no-cc'})); "
        "a C compiler would start each attempt"
    )
    monkeypatch.setenv("CC", "/bin/false")
    assert guard_check().line.startswith(
        "ok    guard: guard.py, in Python (/bin/false exited with 1"
    )
    monkeypatch.delenv("CC")
    if not components.FOUND["compiler"]():
        components.missing("compiler", "no C compiler (cc) to compile the guard")
    monkeypatch.setenv("BUGBOUT_HOME", str(tmp_path / "with"))
    line = guard_check().line
    assert line.startswith(f"ok    guard: compiled ({tmp_path / 'with' / 'guard' / 'guard-'}")
    assert len(list((tmp_path / "with" / "guard").iterdir())) == 1


@pytest.mark.slow
def test_the_checkout_method_is_named_and_a_forced_one_that_fails_is_a_failure(
    tmp_path: Path,
) -> None:
    from bugbout.sandbox.overlay import overlay_problem

    best = "overlay" if overlay_problem(tmp_path.resolve()) is None else "copy"
    assert lines(bugbout(cwd=tmp_path))["checkouts"].startswith(f"ok    checkouts: {best}")
    copied = lines(bugbout("run.checkouts=copy", cwd=tmp_path))["checkouts"]
    assert copied == "ok    checkouts: copy (full copies, no reflinks here; run.checkouts)"
    forced = bugbout("run.checkouts=reflink", cwd=tmp_path)
    if lines(forced)["checkouts"].startswith("ok"):
        pytest.skip("this filesystem clones files: a forced reflink works")
    assert forced.returncode != 0
    assert lines(forced)["checkouts"].startswith("FAIL  checkouts: run.checkouts is reflink but")


@pytest.mark.requires("podman")
def test_podman_runs_containers_here(tmp_path: Path) -> None:
    # Every key the podman errors name can be overridden without a `+`.
    keys = (
        "environment.driver=overlay",
        "environment.suite=null",
        "environment.mirror=null",
        "environment.cache=null",
    )
    result = bugbout(
        "environment=podman",
        "environment.storage=/var/tmp/bugbout-podman-tests",
        *keys,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines(result)["podman"].startswith("ok    podman: "), result.stdout
    assert "runs containers" in lines(result)["podman"]


def test_podman_problems_name_the_cause_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = ProjectSettings(source="src/calc")
    chosen = BoutSettings(project=project, environment=PluginChoice(name="podman"), root=tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    missing = doctor.podman_check(chosen)
    assert not missing.ok
    assert missing.line == (
        "FAIL  podman: environment=podman: podman is not installed: apt-get install -y podman runc "
        "conmon fuse-overlayfs uidmap slirp4netns debootstrap"
    )
    unused = doctor.podman_check(BoutSettings(project=project, root=tmp_path))
    assert unused.ok
    assert unused.detail.startswith("not used (environment=podman, sandbox=podman): podman is not")
    podman = shutil.which("podman", path=os.defpath + ":/usr/sbin:/usr/bin")
    if podman is None:
        return
    (tmp_path / "podman").symlink_to(podman)  # podman without runc: crun would be used
    without_runc = doctor.podman_check(chosen)
    assert not without_runc.ok
    assert "crun refuses cgroup v1 'hybrid' hosts" in without_runc.line
    assert without_runc.line.endswith("apt-get install -y runc")


@pytest.mark.requires("podman")
def test_podman_is_checked_with_the_chosen_plugins_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without debootstrap: the podman sandbox needs no base image, and environment=podman finds
    the root filesystem in its own environment.cache."""
    from bugbout.sandbox.podman import Podman

    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("podman", "runc", "conmon"):
        found = shutil.which(tool, path=os.environ["PATH"] + ":/usr/sbin:/sbin")
        assert found is not None, tool
        (tools / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(tools))
    cache = tmp_path / "cache"
    cache.mkdir()
    storage = {"storage": "/var/tmp/bugbout-podman-tests"}
    project = ProjectSettings(source="src/calc")
    sandbox = PluginChoice.model_validate({"name": "podman", **storage})
    env = PluginChoice.model_validate({"name": "podman", **storage, "cache": str(cache)})
    if os.geteuid() != 0:  # as root debootstrap's absence is what stops the base image
        monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert not doctor.podman_check(BoutSettings(project=project, environment=env, root=tmp_path)).ok
    check = doctor.podman_check(BoutSettings(project=project, sandbox=sandbox, root=tmp_path))
    assert check.ok, check.line
    (cache / Podman(tmp_path)._rootfs_name()).write_bytes(b"")
    check = doctor.podman_check(BoutSettings(project=project, environment=env, root=tmp_path))
    assert check.ok, check.line


def test_a_wrong_project_fails_with_the_fix(tmp_path: Path) -> None:
    repo = configured_repo(tmp_path / "repo", project={"source": "src/gone", "tests": "tests"})
    result = bugbout("sandbox=none", cwd=repo)
    assert result.returncode == 1, result.stdout + result.stderr
    found = lines(result)
    assert found["project.source"] == (
        f"FAIL  project.source: src/gone is not a directory of {repo}; fix: set "
        "project.source in bugbout.yaml (`bugbout init --force` detects it)"
    )
    assert found["project.tests"].startswith("ok    project.tests")
    assert found["sandbox"] == (
        "ok    sandbox: none: agents and tests run unconfined, with the network"
    )


def test_usage_errors_stay_exit_2(tmp_path: Path) -> None:
    repo = configured_repo(tmp_path / "repo")
    result = bugbout("contestant=nobody", cwd=repo)
    assert result.returncode == 2
    assert "contestant=nobody: no such contestant" in result.stderr
    assert bugbout("--help", cwd=repo).returncode == 0


# --------------------------------------------------------------------------------------------
# The contestants' CLIs


@pytest.mark.slow
def test_missing_agents_fail_with_how_to_install_them(tmp_path: Path) -> None:
    repo = configured_repo(
        tmp_path / "repo",
        contestants={"ghost": {"agent": "command", "command": ["/nonexistent/agent"]}},
    )
    result = bugbout("--dry-run", cwd=repo)
    assert result.returncode == 1, result.stdout + result.stderr
    found = lines(result)
    hint = "install '/nonexistent/agent', or correct contestant.ghost's command"
    assert found["ghost"] == (
        f"FAIL  ghost: '/nonexistent/agent' is not installed (not on PATH); fix: {hint}"
    )
    assert found["ghost dry run"] == (
        f"FAIL  ghost dry run: '/nonexistent/agent' is not installed; fix: {hint}"
    )


@pytest.mark.slow
def test_examiners_are_checked_beside_the_contestants(tmp_path: Path) -> None:
    """An `examiners:` section is valid configuration: each examiner's program is checked
    like a contestant's, and no check fails for doctor's own reasons."""
    repo = configured_repo(
        tmp_path / "repo",
        contestants={"fixer": {"agent": "command", "command": ["/bin/true"]}},
        examiners={"prober": {"agent": "command", "command": ["/nonexistent/examiner"]}},
    )
    result = bugbout(cwd=repo)
    assert result.returncode == 1, result.stdout + result.stderr
    found = lines(result)
    assert found["fixer"].startswith("ok    fixer"), result.stdout
    assert found["prober"] == (
        "FAIL  prober: '/nonexistent/examiner' is not installed (not on PATH); fix: install "
        "'/nonexistent/examiner', or correct examiner.prober's command"
    )
    assert "settings" not in " ".join(found), result.stdout


@pytest.mark.slow
def test_packaged_agents_missing_from_path(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    result = bugbout(
        "contestant=[claude-code,codex,gemini-cli,mini-swe-agent]",
        "contestant.mini-swe-agent.model=openai/gpt-5",
        cwd=configured_repo(tmp_path / "repo"),
        env={"PATH": str(bin_dir)},
    )
    assert result.returncode == 1, result.stdout + result.stderr
    found = lines(result)
    for name, program in (
        ("claude-code", "claude"), ("codex", "codex"), ("gemini-cli", "gemini"),
        ("mini-swe-agent", "mini"),
    ):  # fmt: skip
        assert found[name] == (
            f"FAIL  {name}: {program!r} is not installed (not on PATH); "
            f"fix: {KNOWN_AGENTS[name].install}"
        )
    assert "npm install -g @openai/codex" in found["codex"]
    assert "npm install -g @anthropic-ai/claude-code" in found["claude-code"]
    assert "npm install -g @google/gemini-cli" in found["gemini-cli"]
    assert "pip install mini-swe-agent" in found["mini-swe-agent"]
    assert found["git"].startswith("ok    git")


FAKE_CLI = """
    #!/bin/sh
    # A CLI whose help lists --known and, for its `run` subcommand, --sub-only.
    case "$1 $2" in
      "--version "*) printf '%s|%s\\n' "$HOME" "${{OPENAI_API_KEY:-no key}}" > {proof}
                    echo "fakecli version 1.2.3" ;;
      "--help "*) echo "usage: fakecli [--known] [--verbose] COMMAND" ;;
      "run --help") echo "usage: fakecli run [--sub-only]" ;;
      *) echo "fakecli was run for real: $*" > {ran} ;;
    esac
"""


@pytest.mark.slow
def test_flags_are_checked_against_the_cli_help(tmp_path: Path) -> None:
    proof, ran = tmp_path / "version-env.txt", tmp_path / "ran.txt"
    fake = executable(tmp_path / "fakecli", FAKE_CLI.format(proof=proof, ran=ran))
    script = tmp_path / "agent.py"
    script.write_text("print('an agent script')\n")
    contestants = {
        "stale": {"agent": "command", "vendor": "openai",
                  "command": [str(fake), "--known", "--missing=1", "--gone", "{prompt}"]},
        "fresh": {"agent": "command", "command": [str(fake), "run", "--sub-only", "--known"]},
        "script": {"agent": "command", "command": [sys.executable, str(script), "--model", "x"]},
        "bare": {"agent": "command", "command": [str(fake)]},
    }  # fmt: skip
    repo = configured_repo(tmp_path / "repo", contestants=contestants)
    result = bugbout(cwd=repo, env=SECRETS)
    assert result.returncode == 1, result.stdout + result.stderr
    found = lines(result)
    assert found["stale"] == f"ok    stale: fakecli 1.2.3 at {fake}"
    assert found["stale flags"] == (
        "FAIL  stale flags: `fakecli --help` does not list --gone, --missing, which bugbout "
        "passes; fix: update the CLI or its command"
    )
    assert found["fresh flags"] == (
        "ok    fresh flags: the 2 --flags bugbout passes are all in `fakecli --help` and "
        "`fakecli run --help`"
    )
    assert found["script flags"] == (
        f"ok    script flags: not checked: they are {script}'s, not {Path(sys.executable).name}'s"
    )
    assert found["bare flags"] == "ok    bare flags: passes no --flags"
    assert not ran.exists()  # only --version and --help were run
    home, key = proof.read_text().strip().split("|")
    assert key == "no key"  # the user's keys never reach a probed CLI
    assert Path(home) != Path.home()
    assert not Path(home).exists()  # a private, temporary HOME


@pytest.mark.slow
def test_dry_run_with_a_command_contestant(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text("print('done')\n")
    repo = configured_repo(
        tmp_path / "repo",
        contestants={"mine": {"agent": "command", "command": [sys.executable, str(script)]}},
    )
    result = bugbout("--dry-run", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    found = lines(result)
    assert found["mine"].startswith("ok    mine: python")
    assert found["mine dry run"] == (
        "ok    mine dry run: command cannot be scripted; its program exists"
    )


@pytest.mark.slow
def test_a_failed_dry_run_keeps_its_logs_and_no_key_of_the_user(tmp_path: Path) -> None:
    """A stand-in ``claude`` that fails: the report names its error and its logs, which show
    it got the scripted server's URL and a dummy key, not the user's."""
    stand_ins = tmp_path / "bin"
    stand_ins.mkdir()
    executable(
        stand_ins / "claude",
        """
        #!/bin/sh
        [ "$1" = --version ] && echo "9.9.9 (Claude Code)" && exit 0
        env
        echo "Error: scripted failure" >&2
        exit 1
        """,
    )
    result = bugbout(
        "--dry-run",
        "contestant=claude-code",
        cwd=tmp_path,
        env={**SECRETS, "PATH": f"{stand_ins}{os.pathsep}{os.environ['PATH']}"},
    )
    assert result.returncode == 1, result.stdout + result.stderr
    found = lines(result)
    assert found["claude-code"] == f"ok    claude-code: claude 9.9.9 at {stand_ins / 'claude'}"
    line = found["claude-code dry run"]
    assert line.startswith(
        "FAIL  claude-code dry run: ended agent-error (Error: scripted failure) after "
    ), line
    logs = Path(line.split("; logs in ")[1])
    (kept,) = [path for path in logs.parents if path.name.startswith("bugbout-doctor-")]
    try:
        printed = (logs / "stdout.log").read_text().splitlines()
        env = dict(entry.split("=", 1) for entry in printed if "=" in entry)
        assert env["ANTHROPIC_API_KEY"] == DUMMY_KEY
        assert env["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")
        assert not set(SECRETS.values()) & set(env.values())
    finally:
        shutil.rmtree(kept)


# --------------------------------------------------------------------------------------------
# The pieces


def test_check_lines() -> None:
    assert Check("git", True, "2.39.5").line == "ok    git: 2.39.5"
    assert Check("uv", False, "missing", "pip install uv").line == (
        "FAIL  uv: missing; fix: pip install uv"
    )


def test_flags_are_matched_whole() -> None:
    text = "  --model-class <str>\n  --yolo, -y\n  --disallowedTools, --disallowed-tools"
    assert listed("--yolo", text)
    assert listed("--disallowedTools", text)
    assert not listed("--model", text)
    assert not listed("--disallowed", text)


def test_every_vendor_key_is_kept_from_probes_and_dry_runs() -> None:
    for variable in [*(v for keys in VENDOR_KEYS.values() for v in keys), *SECRETS]:
        assert SECRET_VARIABLE.search(variable), variable
    for known in KNOWN_AGENTS.values():
        for variable in known.keys:
            assert SECRET_VARIABLE.search(variable), variable


@pytest.mark.parametrize("agent", sorted(KNOWN_AGENTS))
def test_a_dry_run_points_each_adapter_at_the_server(
    agent: str, plugins: Plugins, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The URL suffix, model and dummy key of :data:`KNOWN_AGENTS` fit each adapter."""
    stand_ins = tmp_path / "bin"
    stand_ins.mkdir()
    for program in ("claude", "codex", "gemini", "mini"):
        executable(stand_ins / program, "#!/bin/sh\nexit 0\n")
    monkeypatch.setenv("PATH", f"{stand_ins}{os.pathsep}{os.environ['PATH']}")
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    url = "http://127.0.0.1:4321"
    entry = dry_entry({"agent": agent, "env": {"MY_TOKEN": "t", "X": "1"}}, url)
    settings = BoutSettings(project=ProjectSettings(source="src/calc"), root=tmp_path)
    contestant, problem = build_contestant(settings, plugins, "contestant", agent, entry)
    assert contestant is not None, problem
    session = doctor.dummy_session(tmp_path)
    invocation = contestant.agent.invocation(session)
    assert invocation.endpoints == (url,)
    env = {**contestant.agent.environment(session), **invocation.env}
    assert contestant.agent.model == KNOWN_AGENTS[agent].model
    for variable in KNOWN_AGENTS[agent].keys:
        assert env[variable] == DUMMY_KEY
    assert env["X"] == "1"
    assert "MY_TOKEN" not in env
    # Each adapter gets the API base it expects: OpenAI-style ones end in /v1.
    text = json.dumps([invocation.argv, env]) + "".join(
        path.read_text() for path in session.logdir.glob("*.yaml")
    )
    suffix = KNOWN_AGENTS[agent].url_suffix
    assert f"{url}{suffix}" in text
    if not suffix:
        assert f"{url}/v1" not in text


# --------------------------------------------------------------------------------------------
# The real CLIs, raced against the scripted model server (installed by CI)

MODULES = {
    "claude-code": ("bugbout.plugins.agents.claude_code", "claude"),
    "codex": ("bugbout.plugins.agents.codex", "codex"),
    "gemini-cli": ("bugbout.plugins.agents.gemini_cli", "gemini"),
    "mini-swe-agent": ("bugbout.plugins.agents.mini_swe_agent", "mini"),
}


def real_cli(agent: str) -> dict[str, Any]:
    """The contestant entry for ``agent``'s real CLI; skips when it or its adapter is missing."""
    module, program = MODULES[agent]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"the {agent} adapter ({module}) is not there yet")
    entry: dict[str, Any] = {"agent": agent}
    if agent == "mini-swe-agent":
        mini = os.environ.get("BUGBOUT_MINI") or shutil.which("mini")
        if not mini or not os.access(mini, os.X_OK):
            components.missing(
                "agent-clis", "mini is not on PATH and BUGBOUT_MINI does not name it"
            )
        entry.update(executable=mini, model="openai/gpt-5")
    elif shutil.which(program) is None:
        components.missing("agent-clis", f"{program} is not on PATH")
    return entry


@pytest.mark.slow
@pytest.mark.parametrize("agent", sorted(MODULES))
def test_dry_run_with_the_real_cli(
    agent: str, plugins: Plugins, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = real_cli(agent)
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    servers: list[Any] = []

    class RecordingServer(model_server_module.ModelServer):
        def start(self) -> Any:
            servers.append(self)
            return super().start()

    monkeypatch.setattr(model_server_module, "ModelServer", RecordingServer)
    settings = BoutSettings(
        project=ProjectSettings(source="src/calc"), contestant={agent: entry}, root=tmp_path
    )
    before = dict(os.environ)
    (check,) = doctor.dry_run_checks(settings, plugins)
    assert check.ok, check.line
    assert check.line.startswith(f"ok    {agent} dry run: fixed the bug in ")
    assert dict(os.environ) == before  # BUGBOUT_HOME and the keys are back
    (server,) = servers
    assert server.scripted_requests
    seen = json.dumps([[r.headers, r.body, r.path] for r in server.requests])
    for secret in SECRETS.values():
        assert secret not in seen
    assert DUMMY_KEY in seen


@pytest.mark.slow
def test_dry_run_of_every_installed_cli_from_the_command_line(tmp_path: Path) -> None:
    available = {}
    for agent in sorted(MODULES):
        try:
            available[agent] = real_cli(agent)
        except components.Missing:
            continue
    if not available:
        components.missing("agent-clis", "no agent CLI is installed")
    overrides = [f"contestant=[{','.join(available)}]"]
    mini = available.get("mini-swe-agent")
    if mini:
        overrides += [
            f"contestant.mini-swe-agent.executable={mini['executable']}",
            f"contestant.mini-swe-agent.model={mini['model']}",
        ]
    result = bugbout("--dry-run", *overrides, cwd=tmp_path, env=SECRETS)
    assert result.returncode == 0, result.stdout + result.stderr
    found = lines(result)
    for agent in available:
        assert found[f"{agent} dry run"].startswith(f"ok    {agent} dry run: fixed the bug"), (
            result.stdout
        )
    assert not list(tmp_path.iterdir())  # nothing written where it ran
