"""The sandboxes' filesystem, attacked for real (bubblewrap, and seatbelt on macOS): a control
reads every secret without masks, then the attacks on what the masks hide and keep."""

from __future__ import annotations

import os
from pathlib import Path

from bugbout.plugins.sandboxes.bubblewrap import Bubblewrap
from bugbout.plugins.sandboxes.seatbelt import Seatbelt
from sandbox_world import World, _sh, run


def survivors(world: World) -> list[Path]:
    """Files under the world that a test run must not have left behind."""
    return sorted(path for path in world.root.rglob("*") if "probe" in path.name)


def test_control_without_masks_the_same_commands_read_every_secret(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    """Without masks, the sandbox reads the secrets: the attacks below can fail."""
    exposed = world.confinement(masked=(), readable=())
    result = run(sandbox, exposed, f"grep -rh {world.marker} {_sh(str(world.root))}")
    found = set(result.stdout.split())
    for name in ("repo", "fix", "store", "other-agent", "credentials", "ssh-key", "netrc"):
        assert world.secret(name) in found, result


def test_no_secret_anywhere_in_the_world_is_readable(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    """A recursive search of the whole world finds no secret, and the checkout, the
    readable environment and the rest of the machine are still there."""
    script = (
        f"grep -rh {world.marker} {_sh(str(world.root))}; "
        f"cat {_sh(str(world.workdir / 'calc.py'))} {_sh(str(world.test_env / 'lib.txt'))} "
        f"{_sh(str(world.outside / 'plain.txt'))}"
    )
    result = run(sandbox, world.confinement(), script)
    assert world.marker not in result.stdout + result.stderr
    assert result.stdout.split() == ["checkout", "environment", "visible"], result


def test_the_original_repository_is_hidden(sandbox: Bubblewrap | Seatbelt, world: World) -> None:
    git = world.repo / ".git"
    for script in (
        f"cat {_sh(str(git / 'secret'))}",
        f"cat {_sh(str(git / 'objects' / 'fix'))}",
        f"ls -A {_sh(str(git))}",
        f"cd {_sh(str(world.repo))} && git log --all --oneline",
    ):
        result = run(sandbox, world.confinement(), script)
        assert world.marker not in result.stdout, script
        assert "secret" not in result.stdout and "objects" not in result.stdout, script
    assert run(sandbox, world.confinement(), f"cat {_sh(str(git / 'secret'))}").returncode != 0


def test_the_store_cannot_be_listed_or_read(sandbox: Bubblewrap | Seatbelt, world: World) -> None:
    listing = run(sandbox, world.confinement(), f"ls -A {_sh(str(world.store))}")
    assert "tasks.json" not in listing.stdout
    reading = run(sandbox, world.confinement(), f"cat {_sh(str(world.store / 'tasks.json'))}")
    assert reading.returncode != 0
    assert world.marker not in reading.stdout


def test_bugbout_home_shows_only_the_way_to_what_is_exposed(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    """Other attempts and credentials in BUGBOUT_HOME are out of reach; the checkout,
    which lives inside it, is not."""
    for path in (world.other_attempt / "patch.diff", world.credentials / "token"):
        result = run(sandbox, world.confinement(), f"cat {_sh(str(path))}")
        assert result.returncode != 0 and world.marker not in result.stdout, path
    listing = run(
        sandbox,
        world.confinement(),
        f"ls -A {_sh(str(world.bugbout_home))} {_sh(str(world.workdir.parent.parent))}",
    )
    assert "credentials" not in listing.stdout and "agent-b" not in listing.stdout
    checkout = run(sandbox, world.confinement(), "cat calc.py && pwd")
    assert checkout.stdout.split() == ["checkout", os.path.realpath(world.workdir)], checkout


def test_home_and_a_masked_file_are_hidden(sandbox: Bubblewrap | Seatbelt, world: World) -> None:
    key = run(sandbox, world.confinement(), f"cat {_sh(str(world.home / '.ssh' / 'id_ed25519'))}")
    assert key.returncode != 0 and world.marker not in key.stdout
    netrc = run(sandbox, world.confinement(), f"cat {_sh(str(world.netrc))}")
    assert world.marker not in netrc.stdout  # empty (bubblewrap) or unreadable (seatbelt)


def test_a_link_in_the_checkout_does_not_reach_a_masked_file(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    secret = world.repo / ".git" / "secret"
    (world.workdir / "link").symlink_to(secret)
    (world.workdir / "dir-link").symlink_to(world.repo)
    result = run(sandbox, world.confinement(), "cat link; cat dir-link/.git/secret; ls -A dir-link")
    assert world.marker not in result.stdout
    assert ".git" not in result.stdout


def test_the_readable_environment_can_be_read_not_changed(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    env = _sh(str(world.test_env))
    result = run(
        sandbox,
        world.confinement(),
        f"cat {env}/lib.txt; touch {env}/probe; echo changed >> {env}/lib.txt; "
        f"rm -f {env}/lib.txt; mv {env}/lib.txt {env}/probe-moved; echo done",
    )
    assert result.stdout.split() == ["environment", "done"], result
    assert (world.test_env / "lib.txt").read_text() == "environment\n"
    assert survivors(world) == []


def test_the_checkout_and_the_logs_are_writable(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    logs = _sh(str(world.logs))
    result = run(
        sandbox,
        world.confinement(),
        f"echo fixed > calc.py && mkdir -p pkg && echo new > pkg/mod.py && "
        f"echo log > {logs}/run.log",
    )
    assert result.returncode == 0, result
    assert (world.workdir / "calc.py").read_text() == "fixed\n"
    assert (world.workdir / "pkg" / "mod.py").read_text() == "new\n"
    assert (world.logs / "run.log").read_text() == "log\n"


def test_writes_anywhere_else_fail_and_leave_nothing(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    targets = [
        Path("/etc/bugbout-probe"),
        Path("/usr/bugbout-probe"),
        Path.home() / "bugbout-probe",
        Path("/root/bugbout-probe"),
        world.root / "probe",
        world.outside / "probe",
        world.repo / "probe",
        world.repo / ".git" / "probe",
        world.store / "probe",
        world.bugbout_home / "probe",
        world.other_attempt / "probe",
        world.home / "probe",
        world.workdir.parent / "probe",
    ]
    script = "; ".join(
        f"(echo x > {_sh(str(t))}) 2>/dev/null && echo WROTE {_sh(str(t))}; "
        f"mkdir {_sh(str(t) + '-dir')} 2>/dev/null && echo MADE {_sh(str(t))}"
        for t in targets
    )
    outside = _sh(str(world.outside))
    script += (
        f"; rm -f {outside}/plain.txt; mv {outside}/plain.txt {outside}/probe-moved;"
        f" chmod 777 {outside}/plain.txt; echo ok > still-writable"
    )
    result = run(sandbox, world.confinement(), script)
    assert "WROTE" not in result.stdout and "MADE" not in result.stdout, result
    assert (world.workdir / "still-writable").read_text() == "ok\n", result  # not just broken
    for target in targets:
        assert not target.exists() and not Path(f"{target}-dir").exists(), target
    assert (world.outside / "plain.txt").read_text() == "visible\n"
    assert (world.outside / "plain.txt").stat().st_mode & 0o777 != 0o777
    assert survivors(world) == []


def test_symlinked_paths_are_resolved(sandbox: Bubblewrap | Seatbelt, world: World) -> None:
    """A confinement given through symbolic links confines the real paths."""
    (world.root / "repo-link").symlink_to(world.repo)
    (world.root / "work-link").symlink_to(world.workdir)
    confinement = world.confinement(
        workdir=world.root / "work-link",
        masked=(world.root / "repo-link", world.bugbout_home),
    )
    secret = world.repo / ".git" / "secret"
    result = run(sandbox, confinement, f"cat {_sh(str(secret))}; pwd; echo x > written")
    assert world.marker not in result.stdout
    assert os.path.realpath(world.workdir) in result.stdout.split(), result
    assert (world.workdir / "written").exists()


def test_a_masked_directory_inside_the_checkout_stays_hidden(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    """The most specific path wins: a masked ``.git`` inside a writable checkout, a
    readable ``.venv`` inside it."""
    git, venv = world.workdir / ".git", world.workdir / ".venv"
    (git / "objects").mkdir(parents=True)
    (git / "objects" / "fix").write_text(world.secret("checkout-git"))
    venv.mkdir()
    (venv / "site.py").write_text("venv\n")
    confinement = world.confinement(
        masked=(*world.confinement().masked, git), readable=(world.test_env, venv)
    )
    result = run(
        sandbox,
        confinement,
        "cat .git/objects/fix; echo x > .git/probe; cat .venv/site.py; echo x > .venv/probe; "
        "mv .git probe-git; mv .venv probe-venv; cat probe-git/objects/fix; echo x > ok",
    )
    assert world.marker not in result.stdout
    assert "venv" in result.stdout.split()
    assert (world.workdir / "ok").exists(), result
    assert survivors(world) == []
    assert git.is_dir() and venv.is_dir()
