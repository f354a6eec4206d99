#!/usr/bin/env python
"""Checkout benchmark: bugbout's checkouts and patches against ``git archive | tar -x``.

Generates (once, cached) a repository whose tree looks like a real project's (about 3000
files and 40 MB: a package, its tests, docs, data, images, scripts, vendored bundles,
symlinks) with a little history, then times, interleaved and repeated:

- the baseline, ``git archive <rev> | tar -x -C <dir>`` (a shell pipeline);
- ``cp -a --reflink=auto`` of an extracted tree (a shell command), for reference;
- ``Checkouts.base()`` cold (the first extraction, into an empty cache);
- ``Checkouts.working_copy()`` from a warm base;
- ``diff_trees`` of the base against an unchanged copy, and against a copy with 3 edited
  files;

and reports each median as a ratio to the baseline's. It is a report, not a test: the exit
code is 0 whatever the numbers.

    python benchmarks/bench_checkout.py [--workdir DIR] [--repeat K]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import random
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from timing import Sample, measure, rotations, summary

HERE = Path(__file__).resolve().parent
DEFAULT_WORKDIR = HERE / ".cache"

# Bump when the generated repository changes, so a cached one is not reused.
GENERATOR_VERSION = 1
SEED = 0

WORDS = [
    "value", "items", "text", "data", "node", "config", "token", "header", "record", "path",
    "range", "entry", "buffer", "schema", "column", "index", "payload", "batch", "window",
    "key", "chunk", "version", "field", "query", "table", "stream", "option", "marker",
    "scope", "result", "count", "limit", "offset", "name", "kind", "state", "cache", "reader",
    "writer", "parser", "the", "a", "of", "to", "in", "is", "for", "on", "with", "as", "by",
    "it", "from", "that", "this", "be", "are", "or", "an", "at",
]  # fmt: skip
KEYWORDS = ["if", "for", "while", "return", "yield", "with", "try", "raise", "assert"]


# --------------------------------------------------------------------------------------
# The generated project.
# --------------------------------------------------------------------------------------


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choices(WORDS, k=count))


def _python(rng: random.Random, name: str, functions: int) -> bytes:
    lines = [f'"""The {name} module."""', "", "from __future__ import annotations", "", ""]
    for number in range(functions):
        arg = rng.choice(WORDS[:12])
        lines.append(f"def {rng.choice(WORDS[:30])}_{number}({arg}, *, limit={number}):")
        lines.append(f'    """{_words(rng, rng.randint(6, 14)).capitalize()}."""')
        for _ in range(rng.randint(4, 14)):
            keyword = rng.choice(KEYWORDS)
            lines.append(f"    {keyword} {arg}.{rng.choice(WORDS[:30])}({rng.randint(0, 999)})")
        lines += ["    return " + arg, "", ""]
    return ("\n".join(lines).rstrip() + "\n").encode()


def _test_module(rng: random.Random, module: str, tests: int) -> bytes:
    lines = [f'"""Tests of {module}."""', "", "import pytest", "", f"import {module}", "", ""]
    for number in range(tests):
        lines.append(f"def test_{rng.choice(WORDS[:30])}_{number}():")
        for _ in range(rng.randint(2, 8)):
            lines.append(f"    assert {module.rsplit('.', 1)[-1]}.f({rng.randint(0, 99)}) == 1")
        lines += ["", ""]
    return ("\n".join(lines).rstrip() + "\n").encode()


def _prose(rng: random.Random, paragraphs: int) -> bytes:
    text = "\n\n".join(_words(rng, rng.randint(30, 120)) for _ in range(paragraphs))
    return (f"# {_words(rng, 3).title()}\n\n{text}\n").encode()


def _json(rng: random.Random, rows: int) -> bytes:
    records = [{w: rng.randint(0, 10**6) for w in rng.sample(WORDS[:30], 6)} for _ in range(rows)]
    return (json.dumps(records, indent=2) + "\n").encode()


def _csv(rng: random.Random, rows: int) -> bytes:
    header = ",".join(WORDS[:8])
    body = "\n".join(",".join(str(rng.randint(0, 10**5)) for _ in range(8)) for _ in range(rows))
    return f"{header}\n{body}\n".encode()


def _binary(rng: random.Random, size: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n\x00\x00" + rng.randbytes(size)


@dataclass
class Entry:
    path: str
    content: bytes
    mode: str = "100644"  # "100755" executable, "120000" symlink (content: the target)


def project_tree(rng: random.Random) -> list[Entry]:
    """About 3000 files and 40 MB, shaped like a mid-sized Python project."""
    tree: list[Entry] = []
    for package in range(40):
        base = f"src/pkg/sub{package:02d}"
        tree.append(Entry(f"{base}/__init__.py", b'"""A subpackage."""\n'))
        for module in range(33):
            name = f"mod{module:02d}"
            tree.append(Entry(f"{base}/{name}.py", _python(rng, name, rng.randint(4, 36))))
        tree.append(Entry(f"{base}/py.typed", b""))
    tree.append(Entry("src/pkg/__init__.py", b'"""pkg."""\n\n__version__ = "1.0"\n'))
    tree.append(Entry("src/pkg/_compat.py", b"import sys\n"))
    tree.append(Entry("src/pkg/compat.py", b"_compat.py", "120000"))
    for package in range(40):
        base = f"tests/sub{package:02d}"
        tree.append(Entry(f"{base}/conftest.py", b"import pytest\n"))
        for module in range(20):
            tree.append(
                Entry(
                    f"{base}/test_mod{module:02d}.py",
                    _test_module(rng, f"pkg.sub{package:02d}.mod{module:02d}", rng.randint(3, 30)),
                )
            )
    tree.append(Entry("tests/conftest.py", b"import pytest\n"))
    for number in range(300):
        section = f"docs/{rng.choice(['guide', 'api', 'howto', 'reference'])}"
        tree.append(Entry(f"{section}/page{number:03d}.md", _prose(rng, rng.randint(3, 20))))
    for number in range(100):
        tree.append(
            Entry(f"docs/_static/img{number:02d}.png", _binary(rng, rng.randint(8, 120) << 10))
        )
    for number in range(300):
        kind = rng.choice(["json", "csv"])
        content = (
            _json(rng, rng.randint(5, 80)) if kind == "json" else _csv(rng, rng.randint(20, 400))
        )
        tree.append(Entry(f"tests/data/case{number:03d}.{kind}", content))
    for number in range(30):
        tree.append(Entry(f"data/blob{number:02d}.bin", _binary(rng, rng.randint(50, 400) << 10)))
    for number in range(5):
        bundle = "\n".join(
            f"var v{i} = {rng.randint(0, 10**9)}; // {_words(rng, 8)}" for i in range(30_000)
        )
        tree.append(Entry(f"docs/_static/vendor{number}.js", bundle.encode()))
    for number in range(20):
        script = f'#!/bin/sh\n# {_words(rng, 10)}\nexec python -m pkg.tool{number} "$@"\n'
        tree.append(Entry(f"scripts/tool{number:02d}", script.encode(), "100755"))
    for number in range(8):
        tree.append(
            Entry(f"docs/links/link{number}.md", f"../guide/page{number:03d}.md".encode(), "120000")
        )
    tree += [
        Entry("README.md", _prose(rng, 12)),
        Entry("CHANGELOG.md", _prose(rng, 60)),
        Entry("LICENSE", b"MIT License\n" + _words(rng, 150).encode() + b"\n"),
        Entry("pyproject.toml", b'[project]\nname = "pkg"\nversion = "1.0"\n'),
        Entry(".gitignore", b"__pycache__/\n*.pyc\n"),
        Entry("docs/changelog.md", b"../CHANGELOG.md", "120000"),
    ]
    return tree


def _fast_import_commit(
    out: io.BufferedWriter, message: str, when: int, entries: list[Entry]
) -> None:
    data = message.encode()
    who = f"Maintainer <maintainer@example.invalid> {when} +0000".encode()
    out.write(b"commit refs/heads/main\n")
    out.write(b"author %s\ncommitter %s\ndata %d\n%s\n" % (who, who, len(data), data))
    for entry in entries:
        out.write(
            b"M %s inline %s\ndata %d\n"
            % (entry.mode.encode(), entry.path.encode(), len(entry.content))
        )
        out.write(entry.content + b"\n")
    out.write(b"\n")


def generate(repo: Path) -> dict[str, Any]:
    """The repository: the tree, then two commits that each change a few hundred files."""
    rng = random.Random(SEED)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    process = subprocess.Popen(
        ["git", "-C", str(repo), "fast-import", "--quiet", "--done"], stdin=subprocess.PIPE
    )
    assert process.stdin is not None
    out = io.BufferedWriter(process.stdin, buffer_size=1 << 20)  # type: ignore[arg-type]
    tree = project_tree(rng)
    _fast_import_commit(out, "Initial commit", 1_700_000_000, tree)
    for number in (1, 2):
        changed = []
        for entry in rng.sample([e for e in tree if e.path.endswith(".py")], 250):
            entry.content += f"\n\ndef added_{number}():\n    return {number}\n".encode()
            changed.append(entry)
        _fast_import_commit(out, f"Change {number}", 1_700_000_000 + number * 3600, changed)
    out.write(b"done\n")
    out.flush()
    process.stdin.close()
    if process.wait():
        raise SystemExit("git fast-import failed")
    _git(repo, "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=10")
    _git(repo, "gc", "--quiet", "--prune=now")
    listing = _git(repo, "ls-tree", "-r", "-l", "main").splitlines()
    return {
        "generator_version": GENERATOR_VERSION,
        "files": len(listing),
        "bytes": sum(int(line.split()[3]) for line in listing if line.split()[3] != "-"),
        "symlinks": sum(1 for line in listing if line.startswith("120000")),
        "executables": sum(1 for line in listing if line.startswith("100755")),
        "commits": int(_git(repo, "rev-list", "--count", "main")),
        "pack_bytes": sum(p.stat().st_size for p in (repo / ".git/objects/pack").iterdir()),
    }


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def prepare(workdir: Path) -> tuple[Path, dict[str, Any]]:
    """The cached repository, generated when missing."""
    repo = workdir / f"repo-checkout-s{SEED}-g{GENERATOR_VERSION}"
    info_path = repo / ".git" / "bench-info.json"
    if info_path.exists():
        return repo, {**json.loads(info_path.read_text()), "cached": True}
    building = repo.with_name(repo.name + ".tmp")
    shutil.rmtree(building, ignore_errors=True)
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"generating {repo} ...", flush=True)
    started = time.perf_counter()
    info = generate(building)
    info["generate_seconds"] = round(time.perf_counter() - started, 2)
    (building / ".git" / "bench-info.json").write_text(json.dumps(info, indent=2))
    shutil.rmtree(repo, ignore_errors=True)
    building.rename(repo)
    return repo, {**info, "cached": False}


# --------------------------------------------------------------------------------------
# Measuring.
# --------------------------------------------------------------------------------------

EDITED = ("src/pkg/sub07/mod03.py", "tests/sub07/test_mod03.py", "docs/guide/page010.md")
"""The files an "attempt" edits before the second ``diff_trees``."""


def _filesystem(path: Path) -> dict[str, Any]:
    """The filesystem's type, and whether it can clone files (reflinks)."""
    kind = subprocess.run(
        ["stat", "--file-system", "--format=%T", str(path)],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    probe, clone = path / ".reflink-probe", path / ".reflink-probe-clone"
    probe.write_bytes(b"probe")
    reflinks = (
        subprocess.run(
            ["cp", "--reflink=always", str(probe), str(clone)], capture_output=True, check=False
        ).returncode
        == 0
    )
    probe.unlink()
    clone.unlink(missing_ok=True)
    return {"type": kind or "unknown", "reflinks": reflinks}


class Scratch:
    """Fresh directories for the timed actions. Nothing is deleted while timing: on some
    filesystems (ext4 mounted with ``discard``) the writes after a large deletion are
    several times slower, which would charge one action for another's cleanup."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0

    def new(self, label: str) -> Path:
        self.count += 1
        return self.root / f"{self.count:03d}-{label}"

    def clear(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        self.root.mkdir(parents=True)
        os.sync()


def main(argv: list[str] | None = None) -> int:  # noqa: PLR0915
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR, metavar="DIR")
    parser.add_argument("--repeat", type=int, default=5, metavar="K")
    parser.add_argument("--output", type=Path, help="default: DIR/results-checkout.json")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    from bugbout.core.checkout import Checkouts
    from bugbout.core.git import Git
    from bugbout.core.patch import diff_trees

    workdir = args.workdir.resolve()
    repo, info = prepare(workdir)
    print(
        f"repository: {repo} ({'cached' if info['cached'] else 'new'}; "
        f"{info['files']} files, {info['bytes'] / 2**20:.1f} MiB at its tip)"
    )
    rev = _git(repo, "rev-parse", "main").strip()
    scratch = Scratch(workdir / "scratch-checkout")
    scratch.clear()
    filesystem = _filesystem(scratch.root)
    git = Git(repo)

    warm = Checkouts(git, scratch.root / "warm-cache")
    base = warm.base(rev)
    unchanged = warm.working_copy(rev, scratch.root / "unchanged")
    edited = warm.working_copy(rev, scratch.root / "edited")
    for path in EDITED:
        with (edited / path).open("a") as handle:
            handle.write("\n# edited by the benchmark\n")

    def baseline() -> None:
        target = scratch.new("archive")
        target.mkdir()
        command = (
            f"git -C {shlex.quote(str(repo))} archive {rev} | tar -x -C {shlex.quote(str(target))}"
        )
        subprocess.run(command, shell=True, check=True)

    def cp_reference() -> None:
        subprocess.run(
            ["cp", "-a", "--reflink=auto", str(base), str(scratch.new("cp"))], check=True
        )

    def git_export() -> None:
        git.export(rev, scratch.new("export"))

    def base_cold() -> Path:
        return Checkouts(git, scratch.new("cold-cache")).base(rev)

    def working_copy() -> Path:
        return warm.working_copy(rev, scratch.new("copy"))

    def diff_unchanged() -> Any:
        return diff_trees(base, unchanged, source="src/pkg", tests="tests")

    def diff_edited() -> Any:
        return diff_trees(base, edited, source="src/pkg", tests="tests")

    actions: dict[str, Callable[[], Any]] = {
        "git archive | tar -x (baseline)": baseline,
        "cp -a --reflink=auto (reference)": cp_reference,
        "Git.export, checkout-index (reference)": git_export,
        "Checkouts.base() cold": base_cold,
        "Checkouts.working_copy()": working_copy,
        "diff_trees, unchanged copy": diff_unchanged,
        "diff_trees, 3 files edited": diff_edited,
    }
    names = list(actions)
    print("warming up (one untimed run of each) ...", flush=True)
    for name in names:
        measure(actions[name], sync=True)
    samples: dict[str, list[Sample]] = {name: [] for name in names}
    results: dict[str, Any] = {}
    for round_index, order in enumerate(rotations(names, args.repeat), start=1):
        for name in order:
            sample, results[name] = measure(actions[name], sync=True)
            samples[name].append(sample)
        print(f"  round {round_index}/{args.repeat} done", flush=True)

    # The copies must be right, not only fast.
    copy_check = Checkouts(git, scratch.root / "warm-cache").working_copy(rev, scratch.new("check"))
    empty, three = results[names[5]], results[names[6]]
    assert empty.empty, "diff_trees found changes in an unchanged copy"
    assert sorted(f.path for f in three.files) == sorted(EDITED), three.files
    assert diff_trees(base, copy_check, source="src/pkg", tests="tests").empty

    summaries = {name: summary(samples[name], children="children") for name in names}
    reference = summaries[names[0]]["median_s"]
    ratios = {name: round(s["median_s"] / reference, 3) for name, s in summaries.items()}

    print()
    print(f"{'measure':<34} {'median':>9} {'min':>9} {'max':>9} {'ratio':>7}")
    for name in names:
        s = summaries[name]
        print(
            f"{name:<34} {s['median_s'] * 1000:>7.1f}ms {s['min_s'] * 1000:>7.1f}ms "
            f"{s['max_s'] * 1000:>7.1f}ms {ratios[name]:>6.2f}x"
        )
    print(
        f"\nfilesystem: {filesystem['type']}, reflinks "
        f"{'supported' if filesystem['reflinks'] else 'not supported: files are copied'}"
    )

    report = {
        "benchmark": "checkout",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "repeat": args.repeat,
        "repository": str(repo),
        "repository_info": info,
        "rev": rev,
        "edited_files": list(EDITED),
        "environment": {
            "python": platform.python_version(),
            "git": _git(repo, "--version").strip(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "filesystem": filesystem,
        },
        "timings": summaries,
        "ratios_to_baseline": ratios,
        "baseline": names[0],
    }
    output = args.output or workdir / "results-checkout.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"results written to {output}")
    print("cleaning up ...", flush=True)
    shutil.rmtree(scratch.root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
