"""The example plugin packages under ``examples/plugins/``, as their users meet them:
installed with pip into a virtual environment, their own tests run there, and each used
in a real bout on the example repository.

- ``bugbout-tinyagent``: ``tinyagent``, a small CLI agent, raced as a contestant through
  bugbout's sandbox, its model the scripted model server;
- ``bugbout-consensus``: the ``consensus`` judge policy, chosen with ``judge=consensus``.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from bugbout.example import STATS_V2, build_example
from bugbout.testing.model_server import ModelServer, Say, Script, Shell
from test_scaffold import PluginEnvironment, copy_package, listing_row

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "plugins"
PACKAGES = ("bugbout-tinyagent", "bugbout-consensus")


def test_each_example_is_a_package_with_a_bugbout_entry_point() -> None:
    for name in PACKAGES:
        project = tomllib.loads((EXAMPLES / name / "pyproject.toml").read_text())
        assert project["project"]["name"] == name
        assert project["project"]["entry-points"]["bugbout"]
        for part in ("README.md", "tests/conftest.py", "tests/test_plugin.py"):
            assert (EXAMPLES / name / part).is_file(), f"{name} has no {part}"


@pytest.fixture(scope="module")
def plugin_environment(tmp_path_factory: pytest.TempPathFactory) -> PluginEnvironment:
    """A virtual environment with both examples installed (from copies of their sources)."""
    root = tmp_path_factory.mktemp("examples")
    environment = PluginEnvironment.create(root / "venv")
    environment.install(*(copy_package(EXAMPLES / name, root / name) for name in PACKAGES))
    return environment


@pytest.mark.slow
@pytest.mark.parametrize("name", PACKAGES)
def test_an_example_passes_its_own_tests(
    plugin_environment: PluginEnvironment, tmp_path: Path, name: str
) -> None:
    package = copy_package(EXAMPLES / name, tmp_path / name)
    tests = plugin_environment.pytest(package)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert " passed" in tests.stdout
    assert " skipped" not in tests.stdout


@pytest.mark.slow
def test_the_examples_are_listed_with_their_distributions(
    plugin_environment: PluginEnvironment,
) -> None:
    listing = plugin_environment.output("-m", "bugbout", "plugins")
    assert listing_row(listing, "agent", "tinyagent")[2:] == ["bugbout-tinyagent", "0.1.0"]
    assert listing_row(listing, "judge", "consensus")[2:] == ["bugbout-consensus", "0.1.0"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.slow
def test_tinyagent_fixes_the_median_bug_in_a_bout(
    plugin_environment: PluginEnvironment, tmp_path: Path
) -> None:
    repo = build_example(tmp_path / "tally")
    # The newest task is the negative-numbers merge (#8); walking from the median fix
    # (#3) with `miner.limit=1` makes the median bug the only task.
    median_fix = git(repo, "log", "--format=%H", "--grep=Fix median")
    script = Script(
        [
            Shell(f"ls -a {repo}"),  # the original repository: hidden inside the sandbox
            Shell("cat src/tally/stats.py"),
            Shell(f"cat > src/tally/stats.py <<'EOF'\n{STATS_V2}EOF"),
            Say("Fixed median(): lists of even length now average the two middle values."),
        ]
    )
    with ModelServer(script) as server:
        config = repo / "bugbout.yaml"
        config.write_text(
            config.read_text().replace(
                "contestants:\n",
                f'contestants:\n  tiny: {{agent: tinyagent, base-url: "{server.url}/v1"}}\n',
                1,
            )
        )
        bout = plugin_environment.run(
            "-m", "bugbout", "run", "contestant=[tiny]", "miner.limit=1",
            f"miner.ref={median_fix}", cwd=repo,
        )  # fmt: skip
        assert bout.returncode == 0, bout.stderr
        requests = server.scripted_requests
    store = repo / ".bugbout"
    (task_id,) = json.loads((store / "resolutions.json").read_text())
    assert task_id == median_fix[:12]
    (record,) = (store / "attempts" / task_id / "tiny").glob("*.json")
    attempt = json.loads(record.read_text())
    assert attempt["status"] == "finished", attempt["error"]
    assert attempt["agent"] == "tinyagent"
    assert attempt["summary"].startswith("Fixed median()")
    assert attempt["usage"]["input_tokens"] > 0
    assert [change["path"] for change in attempt["patch"]["files"]] == ["src/tally/stats.py"]
    changed = [
        line
        for line in attempt["patch"]["source"].splitlines()
        if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]
    assert changed == [
        "-    return ordered[len(ordered) // 2]",
        "+    middle = len(ordered) // 2",
        "+    if len(ordered) % 2 == 0:",
        "+        return (ordered[middle - 1] + ordered[middle]) / 2",
        "+    return ordered[middle]",
    ]
    assert [request.step for request in requests] == [0, 1, 2, 3]
    listed = requests[1].body["messages"][-1]["content"]
    assert "bugbout.yaml" not in listed, "the agent saw the original repository"
    resolutions = json.loads((store / "resolutions.json").read_text())[task_id]
    assert resolutions["patches"]["tiny"]["score"] == "resolved"
    verdict = json.loads((store / "verdicts.json").read_text())[task_id]["majority"]
    assert verdict["pick"] == "tiny", verdict["reason"]


@pytest.mark.slow
def test_consensus_judges_a_bout(plugin_environment: PluginEnvironment, tmp_path: Path) -> None:
    repo = build_example(tmp_path / "tally")
    bout = plugin_environment.run("-m", "bugbout", "run", "judge=consensus", "miner.limit=1",
                                  cwd=repo)  # fmt: skip
    assert bout.returncode == 0, bout.stderr
    verdicts = json.loads((repo / ".bugbout" / "verdicts.json").read_text())
    assert verdicts
    for by_policy in verdicts.values():
        verdict = by_policy["consensus"]
        assert verdict["policy"] == "consensus"
        # `correct` passes the reproductions of both `breaking` and the examiner;
        # `breaking` breaks a repository test the others keep, `wrong` fixes nothing.
        assert verdict["pick"] == "correct", verdict["reason"]
        assert verdict["approved"] == ["correct"]
    picks = json.loads((repo / ".bugbout" / "resolutions.json").read_text())
    assert all(task["picks"] == {"consensus": "resolved"} for task in picks.values())
