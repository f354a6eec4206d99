"""What wrapping a test run in bubblewrap costs bugbout's own process: the options every
sandbox has (the machine's folders it looks at) are worked out once per network setting
and size, and every run still gets all of them, in a list of its own."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bugbout.sandbox.confinement import Confinement
from sandbox_world import _make

MACHINE = ("/proc", "/sys", "/tmp", "/var/tmp", "/run", "/var/run", "/etc")


def test_a_second_run_looks_at_none_of_the_machine_s_folders_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = _make("bubblewrap")
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    before = sandbox.wrap(["true"], Confinement(workdir=first, tmp_size=3_000_000))
    looked: list[str] = []
    for name in ("is_dir", "exists", "is_file"):
        real = getattr(Path, name)
        monkeypatch.setattr(
            Path, name, lambda self, real=real: looked.append(str(self)) or real(self)
        )

    after = sandbox.wrap(["true"], Confinement(workdir=second, tmp_size=3_000_000))
    monkeypatch.undo()

    seen = [p for p in looked if p.startswith(MACHINE) and not Path(p).is_relative_to(tmp_path)]
    assert seen == [], f"looked again at {seen}"
    assert after == [str(second) if arg == str(first) else arg for arg in before]
    assert subprocess.run(after, check=False, timeout=60).returncode == 0


def test_each_network_setting_and_size_keeps_its_own_options(tmp_path: Path) -> None:
    sandbox = _make("bubblewrap")
    offline = sandbox.wrap(["true"], Confinement(workdir=tmp_path, tmp_size=3_000_000))
    online = sandbox.wrap(["true"], Confinement(workdir=tmp_path, network=True, tmp_size=3_000_000))
    sized = sandbox.wrap(["true"], Confinement(workdir=tmp_path, tmp_size=4_000_000))
    offline[offline.index("--chdir")] = "changed by its caller"

    again = sandbox.wrap(["true"], Confinement(workdir=tmp_path, tmp_size=3_000_000))

    assert "--unshare-net" in again and "--unshare-net" not in online
    assert "--chdir" in again
    assert "3000000" in again and "3000000" not in sized and "4000000" in sized


def test_a_confined_user_gets_a_way_into_every_folder_made_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = _make("bubblewrap")
    monkeypatch.setattr(sandbox, "owner", (65534, 65534))
    empty = [Path("/a"), Path("/a/b/c")]
    made: set[Path] = {Path("/a/b/c/d")}

    options = sandbox._enterable(Path("/a/b/c/d/e/f"), empty, made)

    assert options == [
        "--perms", "0755", "--dir", "/a/b",
        "--perms", "0755", "--dir", "/a/b/c",
        "--perms", "0755", "--dir", "/a/b/c/d/e",
    ]  # fmt: skip
    assert made == {Path("/a/b"), Path("/a/b/c"), Path("/a/b/c/d"), Path("/a/b/c/d/e")}
