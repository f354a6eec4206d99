"""A one-line fix has few ways to be written: a patch that matches it is measured, never
flagged `recalled` (the recall auditor's `min-lines`, 2 by default)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import bugbout.conf
from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.types import AuditorPlugin
from bugbout.plugins.auditors.recall import RecallOptions, fix_size
from test_recall import diff, recall_request

ONE_LINE = diff(
    "-    return shape / reference", "+    return shape / reference if reference else 0.0"
)
ONE_ADDED = diff("+    assert reference, 'no reference'")
TWO_LINES = diff("+    if reference == 0:", "+        return 0.0")


def test_the_size_of_a_fix_is_the_more_of_its_added_and_removed_lines() -> None:
    assert (fix_size(ONE_LINE), fix_size(ONE_ADDED), fix_size(TWO_LINES)) == (1, 1, 2)


@pytest.mark.parametrize(
    ("fix", "flagged"), [(ONE_LINE, False), (ONE_ADDED, False), (TWO_LINES, True)]
)
def test_the_packaged_recall_auditor_flags_no_copy_of_a_one_line_fix(
    fix: str, flagged: bool
) -> None:
    config = yaml.safe_load(
        (Path(bugbout.conf.__file__).parent / "auditor" / "recall.yaml").read_text()
    )
    config.pop("name")
    auditor = make_plugins().create(AuditorPlugin, "recall", config)
    similarity = auditor.audit(recall_request(fix, fix=fix)).similarity
    assert similarity is not None
    assert similarity.five_gram == 1.0, "the copy is measured as identical"
    assert similarity.recalled is flagged
    assert RecallOptions.model_validate(config).min_lines == 2
