"""The mining benchmark's repository: the generated project streamed into ``git
fast-import``, repacked like a clone, and cached by commit count, seed and generator
version."""

from __future__ import annotations

import io
import json
import random
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from mining_project import (
    AUTHORS,
    FIX_RATE,
    GENERATOR_VERSION,
    MERGE_FIX_SHARE,
    MERGE_RATE,
    NOUNS,
    VERBS,
    Project,
)


class HistoryWriter:
    """Writes a fast-import stream: blobs with marks, then commits referring to them."""

    def __init__(self, out: io.BufferedIOBase) -> None:
        self.out = out
        self.next_mark = 1
        self.when = 1_420_070_400  # 2015-01-01

    def _mark(self) -> int:
        mark = self.next_mark
        self.next_mark += 1
        return mark

    def blob(self, content: bytes) -> int:
        mark = self._mark()
        self.out.write(b"blob\nmark :%d\ndata %d\n" % (mark, len(content)))
        self.out.write(content)
        self.out.write(b"\n")
        return mark

    def commit(  # noqa: PLR0917
        self,
        branch: str,
        message: str,
        author: tuple[str, str],
        files: list[tuple[str, int | None, str | None]],
        parent: int | None = None,
        merge: int | None = None,
        advance: bool = True,
    ) -> int:
        """``files``: (path, blob mark or None to delete, old path for a rename)."""
        if advance:
            self.when += random.Random(self.next_mark).randint(300, 28_800)
        mark = self._mark()
        data = message.encode()
        who = f"{author[0]} <{author[1]}> {self.when} +0000".encode()
        out = [b"commit refs/heads/%s\nmark :%d\n" % (branch.encode(), mark)]
        out.append(b"author %s\ncommitter %s\ndata %d\n" % (who, who, len(data)))
        out.append(data + b"\n")
        if parent is not None:
            out.append(b"from :%d\n" % parent)
        if merge is not None:
            out.append(b"merge :%d\n" % merge)
        for path, blob, old_path in files:
            if old_path is not None:
                out.append(f"R {old_path} {path}\n".encode())
            elif blob is None:
                out.append(f"D {path}\n".encode())
            else:
                out.append(b"M 100644 :%d %s\n" % (blob, path.encode()))
        out.append(b"\n")
        self.out.write(b"".join(out))
        return mark


def generate(repo: Path, commits: int, seed: int) -> dict[str, Any]:
    """Writes a repository with ``commits`` first-parent commits on ``main``."""
    rng = random.Random(seed)
    project = Project(rng, commits)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    process = subprocess.Popen(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "core.compression=1",
            "fast-import",
            "--quiet",
            "--done",
            "--depth=0",
        ],
        stdin=subprocess.PIPE,
    )
    assert process.stdin is not None
    out = io.BufferedWriter(process.stdin, buffer_size=1 << 20)
    writer = HistoryWriter(out)
    author = AUTHORS[0]
    tip = writer.commit("main", "Initial commit", author, _changes(writer, project.initial(), []))
    side_commits = 0
    for index in range(1, commits):
        author = rng.choice(AUTHORS)
        if rng.random() < MERGE_RATE:
            project.count("merge")
            number = project.next_issue()
            if rng.random() < MERGE_FIX_SHARE:
                project.count("merge:fix")
                message, files = project.fix()
                renames: list[tuple[str, str]] = []
                pr_title = message.split("\n", 1)[0]
            else:
                message, files, renames = project.ordinary(index)
                pr_title = message.split("\n", 1)[0]
            changes = _changes(writer, files, renames)
            side = writer.commit("pr", message, author, changes, parent=tip)
            side_commits += 1
            branch = f"{author[1].split('@')[0]}/{rng.choice(VERBS)}-{rng.choice(NOUNS)}"
            merge_message = f"Merge pull request #{number} from {branch}\n\n{pr_title}"
            tip = writer.commit("main", merge_message, AUTHORS[1], changes, merge=side)
        elif rng.random() < FIX_RATE / (1 - MERGE_RATE):
            message, files = project.fix()
            tip = writer.commit("main", message, author, _changes(writer, files, []))
        else:
            message, files, renames = project.ordinary(index)
            tip = writer.commit("main", message, author, _changes(writer, files, renames))
    out.write(b"done\n")
    out.flush()
    process.stdin.close()
    if process.wait() != 0:
        raise SystemExit("git fast-import failed")
    return {"side_commits": side_commits, "mix": dict(sorted(project.stats.items()))}


def _changes(
    writer: HistoryWriter, files: list[tuple[str, bytes]], renames: list[tuple[str, str]]
) -> list[tuple[str, int | None, str | None]]:
    changes: list[tuple[str, int | None, str | None]] = [(new, None, old) for new, old in renames]
    changes += [(path, writer.blob(content), None) for path, content in files]
    return changes


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def prepare(workdir: Path, commits: int, seed: int) -> tuple[Path, dict[str, Any]]:
    """The cached repository for ``commits`` and ``seed``, generated when missing."""
    repo = workdir / f"repo-n{commits}-s{seed}-g{GENERATOR_VERSION}"
    info_path = repo / ".git" / "bench-info.json"
    if info_path.exists():
        info = json.loads(info_path.read_text())
        info["cached"] = True
        return repo, info
    building = repo.with_name(repo.name + ".tmp")
    shutil.rmtree(building, ignore_errors=True)
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"generating {commits} commits into {repo} ...", flush=True)
    started = time.perf_counter()
    info = generate(building, commits, seed)
    imported = time.perf_counter()
    _git(building, "update-ref", "-d", "refs/heads/pr")
    # Like a clone after gc: one delta-compressed pack and a commit-graph.
    _git(building, "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=10")
    _git(building, "commit-graph", "write", "--reachable")
    _git(building, "gc", "--quiet", "--prune=now")
    finished = time.perf_counter()
    counted = int(_git(building, "rev-list", "--first-parent", "--count", "main"))
    if counted != commits:
        raise SystemExit(f"generated {counted} first-parent commits, expected {commits}")
    tree = _git(building, "ls-tree", "-r", "-l", "main").splitlines()
    tests = [int(line.split()[3]) for line in tree if "/test_" in line]
    info.update(
        commits=commits,
        seed=seed,
        generator_version=GENERATOR_VERSION,
        all_commits=int(_git(building, "rev-list", "--count", "--all")),
        files_at_head=len(tree),
        test_modules_at_head=len(tests),
        mean_test_module_bytes_at_head=int(statistics.mean(tests)) if tests else 0,
        pack_bytes=sum(p.stat().st_size for p in (building / ".git/objects/pack").iterdir()),
        fast_import_seconds=round(imported - started, 2),
        repack_seconds=round(finished - imported, 2),
    )
    (building / ".git" / "bench-info.json").write_text(json.dumps(info, indent=2))
    shutil.rmtree(repo, ignore_errors=True)
    building.rename(repo)
    info["cached"] = False
    return repo, info
