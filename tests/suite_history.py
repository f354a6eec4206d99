"""A synthetic history whose tests moved: the fix's era keeps them in ``test/`` (and one
module at the root), HEAD in ``tests/``, which ``bugbout.yaml`` names.

Two scripted contestants (``correct`` and ``breaking``) read where the tests are from
their prompt and write their regression test there; ``breaking`` also breaks ``double``,
which only the old suite tests.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bugbout.config.layout import render_config
from bugbout.testing import RepositoryBuilder

OPS = "def add(a, b):\n    return a + abs(b)\n\n\ndef double(x):\n    return 2 * x\n"
TEST_DOUBLE = "from calc.ops import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
TEST_ROOT = "from calc.ops import add\n\n\ndef test_add_zero():\n    assert add(1, 0) == 1\n"
TEST_ADD = "from calc.ops import add\n\n\ndef test_negative():\n    assert add(1, -2) == -1\n"
ISSUES = [{"number": 1, "title": "add() loses the sign of negative numbers",
           "body": "`add(1, -2)` returns 3, not -1."}]  # fmt: skip

AGENT = """\
import re, sys
from pathlib import Path
prompt = sys.stdin.read()
tests = re.search(r"under\\s+`([^`]*)/`", prompt).group(1)
ops = Path("src/calc/ops.py")
text = ops.read_text().replace("abs(b)", "b")
if sys.argv[1] == "breaking":
    text = text.replace("2 * x", "2 * x + 1")
ops.write_text(text)
Path(tests).mkdir(parents=True, exist_ok=True)
Path(tests, "test_regression.py").write_text(
    "from calc.ops import add\\n\\n\\ndef test_regression():\\n    assert add(2, -3) == -1\\n"
)
print("fixed add(); regression test in", tests)
"""


def build_moved_tests(path: Path) -> str:
    """The repository with its ``bugbout.yaml``; returns the fix's sha."""
    repo = RepositoryBuilder(path)
    repo.commit(
        "Initial commit",
        {
            "pyproject.toml": '[project]\nname = "calc"\nversion = "1.0"\n',
            "src/calc/__init__.py": "",
            "src/calc/ops.py": OPS,
            "test/test_double.py": TEST_DOUBLE,
            "test_root.py": TEST_ROOT,
        },
    )
    fix = repo.commit(
        "Fix the sign of negative numbers in add() (#1)",
        {"src/calc/ops.py": OPS.replace("abs(b)", "b"), "test/test_add.py": TEST_ADD},
    )
    repo.git("mv", "test", "tests")
    repo.git("mv", "test_root.py", "tests/test_root.py")
    repo.commit("Move the tests to tests/")
    (path / "issues.jsonl").write_text("".join(json.dumps(issue) + "\n" for issue in ISSUES))
    python, agent = json.dumps(sys.executable), json.dumps(AGENT)
    config = (
        render_config(["src/calc"], "tests")
        .replace(
            "# issue-source:\n#   file: {path: issues.jsonl}",
            "issue-source:\n  file: {path: issues.jsonl}",
        )
        .replace("  # - override environment: interpreter", "  - override environment: interpreter")
    )
    config += "\ncontestants:\n" + "".join(
        f"  {role}: {{agent: command, command: [{python}, -c, {agent}, {role}]}}\n"
        for role in ("correct", "breaking")
    )
    (path / "bugbout.yaml").write_text(config)
    return fix
