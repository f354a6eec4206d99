"""What the patch walk cannot read: in the working copy it is the agent's doing
(``WorkTreeError``, naming the path there), in the base tree it is bugbout's (``WalkError``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bugbout.core.plumbing.trees.treewalk import WalkError, WorkTreeError
from deep_trees import nest, remove_tree
from patch_trees import diff


def test_a_working_copy_too_deep_to_list_is_the_agents_doing(trees: tuple[Path, Path]) -> None:
    base, work = trees
    (work / "deep").mkdir()
    nest(work / "deep", 3000)
    try:
        with pytest.raises(WorkTreeError) as raised:
            diff(base, work)
    finally:
        remove_tree(work / "deep")
    message = str(raised.value)
    assert message.startswith("cannot list 'deep/d/d/d/")
    assert message.endswith("bytes)' in the working copy: File name too long")
    assert str(base) not in message and str(work) not in message


def test_a_base_tree_that_cannot_be_read_is_not(trees: tuple[Path, Path]) -> None:
    base, work = trees
    nest(base / "src", 3000)  # as if bugbout's own tree held it
    try:
        with pytest.raises(WalkError) as raised:
            diff(base, work)
    finally:
        remove_tree(base / "src" / "d")
    assert not isinstance(raised.value, WorkTreeError)
