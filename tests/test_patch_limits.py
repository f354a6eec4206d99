"""Patch limits: the patch size and the file count stop the walk, read nothing past them."""

from __future__ import annotations

import os
import shutil
import tracemalloc
from pathlib import Path

import pytest

from bugbout.core.contract.settings import LimitsSettings
from bugbout.core.plumbing.confinement.limits import LimitExceeded
from bugbout.core.plumbing.trees import treewalk
from bugbout.core.plumbing.trees.patch import diff_trees
from bugbout.core.store.race_records import Patch
from patch_trees import SOURCE, TESTS, diff


def limited(base: Path, work: Path, **limits: int) -> Patch:
    return diff_trees(base, work, source=SOURCE, tests=TESTS, limits=LimitsSettings(**limits))


def test_a_file_past_the_patch_size_is_never_read(trees: tuple[Path, Path]) -> None:
    base, work = trees
    with (work / "huge.bin").open("wb") as handle:
        handle.truncate(1_000_000_000)  # sparse: a gigabyte to read, none on disk
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceeded) as raised:
            diff(base, work)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(raised.value) == (
        "patch too large (1,000 MB > 10 MB limit; setting limits.patch-size)"
    )
    assert peak < 5_000_000


def test_the_patch_size_counts_the_diff_not_the_files(
    trees: tuple[Path, Path], tmp_path: Path
) -> None:
    base, work = trees
    lines = "".join(f"LINE_{n} = {n}\n" for n in range(200_000))
    (work / "src/pkg/util.py").write_text(lines)
    assert len(limited(base, work, patch_size=10_000_000).source) > 2_000_000
    # The same 3 MB file changed by one line: a small diff, within a small limit.
    bigger_base = shutil.copytree(work, tmp_path / "bigger-base", symlinks=True)
    (work / "src/pkg/util.py").write_text(lines.replace("LINE_7 = 7", "LINE_7 = 8"))
    small = limited(bigger_base, work, patch_size=10_000)
    assert [change.path for change in small.files] == ["src/pkg/util.py"]
    assert len(small.source) < 1000


def test_many_small_diffs_add_up_past_the_patch_size(trees: tuple[Path, Path]) -> None:
    base, work = trees
    for number in range(5):
        (work / f"notes-{number}.txt").write_text("note\n" * 60_000)  # 300 kB each
    with pytest.raises(LimitExceeded, match=r"patch too large \(\d MB > 1 MB limit"):
        limited(base, work, patch_size=1_000_000)


def test_the_walk_stops_at_the_file_limit_even_inside_one_directory(
    trees: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, work = trees
    (work / "junk").mkdir()
    for number in range(3000):
        (work / "junk" / str(number)).touch()
    seen = 0
    real = treewalk._entry

    def counted(entry: os.DirEntry[str] | None, theirs: str | None = None) -> treewalk.Entry | None:
        nonlocal seen
        seen += 1
        return real(entry, theirs=theirs)

    monkeypatch.setattr(treewalk, "_entry", counted)
    with pytest.raises(LimitExceeded) as raised:
        limited(base, work, files=100)
    assert str(raised.value) == "too many files (101 > 100 limit; setting limits.files)"
    assert seen < 100  # stopped while listing, before looking at the added files


def test_added_directories_count_toward_the_file_limit(trees: tuple[Path, Path]) -> None:
    base, work = trees
    folder = work
    for depth in range(60):
        folder = folder / f"d{depth}"
        folder.mkdir()
        (folder / "f").touch()
    with pytest.raises(LimitExceeded, match="too many files"):
        limited(base, work, files=100)
    assert len(limited(base, work, files=120).files) == 60
