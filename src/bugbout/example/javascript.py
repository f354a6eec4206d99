"""The JavaScript example behind ``bugbout demo --lang js``: ``tally``, a small ES-module
package tested with ``node --test`` and no npm dependency, so its bout needs no registry;
its history has three fixed bugs, and its ``bugbout.yaml`` is the one ``bugbout init``
writes for it, with scripted agents."""

from __future__ import annotations

import json
from pathlib import Path

from bugbout.core.contract.manager import Plugins
from bugbout.core.plumbing.trees.git import Git
from bugbout.example import demo_settings
from bugbout.onboarding import javascript
from bugbout.testing.repository import RepositoryBuilder

PACKAGE = {
    "name": "tally",
    "version": "1.0.0",
    "description": "Small statistics helpers",
    "type": "module",
    "exports": "./src/index.js",
    "scripts": {"test": "node --test"},
    "engines": {"node": ">=20"},
}

INDEX = """\
export { mean, median } from './stats.js';
export { parseNumber } from './parse.js';
"""

MEDIAN_V1 = "  return ordered[Math.floor(ordered.length / 2)];\n"
MEDIAN_V2 = """\
  const middle = Math.floor(ordered.length / 2);
  if (ordered.length % 2 === 0) {
    return (ordered[middle - 1] + ordered[middle]) / 2;
  }
  return ordered[middle];
"""
MEAN_V1 = "export function mean(values) {\n"
MEAN_V2 = """\
export function mean(values) {
  if (values.length === 0) {
    throw new RangeError('mean() of an empty list');
  }
"""
NEGATIVE = """\
  if (cleaned.startsWith('-')) {
    return Number(cleaned.slice(1));
  }
"""

STATS_V1 = f"""\
/** Small statistics helpers. */

{MEAN_V1}  return values.reduce((sum, value) => sum + value, 0) / values.length;
}}

export function median(values) {{
  const ordered = [...values].sort((a, b) => a - b);
{MEDIAN_V1}}}
"""
STATS_V2 = STATS_V1.replace(MEDIAN_V1, MEDIAN_V2)
STATS_V3 = STATS_V2.replace(MEAN_V1, MEAN_V2)

PARSE_V1 = f"""\
/** Reading numbers from text. */

export function parseNumber(text) {{
  const cleaned = text.trim().replaceAll(',', '');
{NEGATIVE}  return Number(cleaned);
}}
"""
PARSE_V2 = PARSE_V1.replace(NEGATIVE, "")

IMPORTS = "import assert from 'node:assert/strict';\nimport { describe, it } from 'node:test';\n\n"


def it(title: str, body: str) -> str:
    """One ``it`` block of a test file."""
    return f"  it('{title}', () => {{\n    {body}\n  }});\n"


def describe(title: str, *its: str) -> str:
    """A ``describe`` block holding ``its``."""
    return f"describe('{title}', () => {{\n{''.join(its)}}});\n"


MEAN_OF_LIST = it("averages a list", "assert.equal(mean([1, 2, 3]), 2);")
MEAN_OF_NOTHING = it(
    "throws a RangeError for an empty list", "assert.throws(() => mean([]), RangeError);"
)
MEDIAN_ODD = it("takes the middle of an odd-length list", "assert.equal(median([3, 1, 2]), 2);")
MEDIAN_EVEN = it(
    "averages the two middle values of an even-length list",
    "assert.equal(median([4, 1, 3, 2]), 2.5);",
)
PLAIN = it("reads a plain number", "assert.equal(parseNumber('1'), 1);")
THOUSANDS = it("ignores thousands separators", "assert.equal(parseNumber('1,000'), 1000);")
SIGNED = it("keeps the sign of a negative number", "assert.equal(parseNumber('-2.5'), -2.5);")


def stats_tests(mean_its: tuple[str, ...], median_its: tuple[str, ...]) -> str:
    """``test/stats.test.js`` with these tests of ``mean`` and of ``median``."""
    uses = "import { mean, median } from '../src/stats.js';\n\n"
    return f"{IMPORTS}{uses}{describe('mean', *mean_its)}\n{describe('median', *median_its)}"


def parse_tests(*its: str) -> str:
    """``test/parse.test.js`` with these tests of ``parseNumber``."""
    uses = "import { parseNumber } from '../src/parse.js';\n\n"
    return f"{IMPORTS}{uses}{describe('parseNumber', *its)}"


ISSUES = [
    {"number": 3, "title": "median() is wrong for lists of even length",
     "body": "`median([4, 1, 3, 2])` returns 3, but the median is 2.5.\n\n"
             "## Proposed fix\nAverage the two middle values."},
    {"number": 5, "title": "mean([]) returns NaN",
     "body": "Calling `mean([])` returns NaN without a word; it should throw a RangeError "
             "that says the list is empty."},
    {"number": 8, "title": "Negative numbers lose their sign",
     "body": "`parseNumber('-2.5')` returns 2.5.\n<!-- triage: confirmed -->"},
    {"number": 9, "title": "Typo in the README", "body": "'statistcs'"},
]  # fmt: skip


def build_javascript_example(path: Path, plugins: Plugins) -> Path:
    """Build the JavaScript example repository at ``path`` with the ``bugbout.yaml``
    ``bugbout init`` writes for it (asking ``plugins``' ``javascript`` runner), its
    contestants and examiner scripted; returns ``path``."""
    repo = RepositoryBuilder(path)
    repo.commit(
        "Initial version of tally",
        {
            "package.json": json.dumps(PACKAGE, indent=2) + "\n",
            "README.md": "# tally\n\nSmall statistcs helpers.\n",
            ".gitignore": "node_modules\n",
            "src/index.js": INDEX,
            "src/stats.js": STATS_V1,
            "src/parse.js": PARSE_V1,
            "test/stats.test.js": stats_tests((MEAN_OF_LIST,), (MEDIAN_ODD,)),
            "test/parse.test.js": parse_tests(PLAIN, THOUSANDS),
        },
    )
    repo.commit(
        "Fix median of even-length lists (#3)",
        {
            "src/stats.js": STATS_V2,
            "test/stats.test.js": stats_tests((MEAN_OF_LIST,), (MEDIAN_ODD, MEDIAN_EVEN)),
        },
    )
    repo.commit("Add a changelog", {"CHANGELOG.md": "# Changelog\n"})
    repo.commit(
        "Fix the mean of an empty list: throw a RangeError, not NaN\n\nFixes #5",
        {
            "src/stats.js": STATS_V3,
            "test/stats.test.js": stats_tests(
                (MEAN_OF_LIST, MEAN_OF_NOTHING), (MEDIAN_ODD, MEDIAN_EVEN)
            ),
        },
    )
    repo.branch("negative-numbers")
    repo.commit(
        "Keep the sign of negative numbers",
        {"src/parse.js": PARSE_V2, "test/parse.test.js": parse_tests(PLAIN, THOUSANDS, SIGNED)},
    )
    repo.switch("main")
    repo.merge(
        "negative-numbers",
        "Merge pull request #8 from dev/negative-numbers\n\nNegative numbers were parsed wrong",
    )
    repo.commit(
        "Fix typo in the README (#9)", {"README.md": "# tally\n\nSmall statistics helpers.\n"}
    )
    (path / "issues.jsonl").write_text("".join(json.dumps(issue) + "\n" for issue in ISSUES))
    with Git(path) as git:
        listing = git.run("ls-files", "-z").split("\0")
        layout = javascript.find_layout(plugins, git, path, listing)
    config = javascript.render(layout, [], "").replace(
        "# issue-sources:          # asked in order: github, file, commit; `github: null` "
        "removes one\n#   file: {path: issues.jsonl}",
        "issue-sources:\n  file: {path: issues.jsonl}",
    )
    (path / "bugbout.yaml").write_text(config + demo_settings("bugbout.example.javascript_agents"))
    return path
