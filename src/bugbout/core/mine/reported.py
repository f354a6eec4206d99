"""What a reporter would have seen: problem statements for tasks that name no issue.

A statement is made of the failing tests by name, each with its first error line, and,
for a fix from the history, its commit message with the solution scrubbed: no code, no
name that only the fix introduces, no "by doing X" clause, no sentence that says what
was changed. Nothing in it shows a line the fix added, to the code or to the tests.
"""

from __future__ import annotations

import ast
import bisect
import builtins
import io
import keyword
import re
import tokenize
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field

from bugbout.core.plumbing.trees.git import Git, TreeEntry
from bugbout.core.store.records import HISTORY_TIERS, Oracle, Task

SHOWN = 8
"""The most failing tests a problem statement names."""
_LEADS = {
    "feature": (
        "Tests written for the change asked for fail on the code as it is:",
        "Change the code so that they pass.",
    ),
}
_FIX_LEAD = (
    "Tests written for this bug fail on the code as it is:",
    "Find the bug and fix it.",
)
_CODE = re.compile(r"```.*?```|``[^\n]*?``|`[^`\n]*`", re.DOTALL)
_REFERENCE = re.compile(
    r"\(?(?:https?://\S+|[\w.-]+/[\w.-]+#\d+|#\d+|gh-\d+)\)?|"
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|see|refs?)\b:?\s*(?=\(?#|\(?gh-)",
    re.IGNORECASE,
)
_CLAUSE = re.compile(
    r"[,;:]?\s*\b(?:by\s+\w+ing|instead\s+of|using|via|so\s+that|which|because)\b[^.!?\n]*",
    re.IGNORECASE,
)
"""A clause that says how the fix works: cut to the end of its sentence."""
_SOLUTION = re.compile(
    r"\b(?:now|this\s+(?:commit|change|patch|pr)|adds?|added|adding|removes?|removed|"
    r"replaces?|replaced|changes?|changed|uses?|used|refactor\w*|renames?|renamed|moves?|"
    r"moved|switch\w*|makes?|made|ensures?|ensured|updates?|updated|implement\w*|"
    r"introduc\w*|instead|should\s+now)\b",
    re.IGNORECASE,
)
"""A word of a sentence that says what was done rather than what went wrong."""
_TRAILER = re.compile(r"^[\w-]+(?:-by)?:\s|^merge\s+(?:pull\s+request|branch)\b", re.IGNORECASE)
_CALL = re.compile(r"\b[\w.]+\([^)]*\)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_HUNK = re.compile(r"^@@ -\S+ \+(\d+)")
_DEFINES = ("def ", "async def ", "class ", "@")
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
"""What a whole word is made of, as ``git grep -w`` reads it."""
"""How a line that starts a top-level definition begins."""
_STRING_OR_COMMENT = re.compile(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"|#.*$")


def statement(failing: dict[str, str], *, withheld: Iterable[str], lead: str, close: str) -> str:
    """``lead``, the failing tests by name, each with its first error line unless it
    shows any of ``withheld`` (code the agent must not see), then ``close``."""
    hidden = [line for line in withheld if line]
    lines = [lead, ""]
    for test, message in list(failing.items())[:SHOWN]:
        shown = message.strip()
        if shown and not _leaks(shown, hidden):
            lines.append(f"- {test}: {shown}")
        else:
            lines.append(f"- {test}")
    if len(failing) > SHOWN:
        lines.append(f"- and {len(failing) - SHOWN} more")
    lines += ["", close]
    return "\n".join(lines)


def source_lines(texts: Iterable[str]) -> list[str]:
    """The non-blank lines of ``texts``, stripped: what a statement must not show."""
    return [line.strip() for text in texts for line in text.splitlines() if line.strip()]


def _leaks(message: str, withheld: list[str]) -> bool:
    """Whether ``message`` shows a line of ``withheld``, or is one's text."""
    return any(
        (len(line) >= 3 and line in message) or (len(message) >= 3 and message in line)
        for line in withheld
    )


def is_told_by_failures(task: Task) -> bool:
    """Whether ``task`` is a history's that names no issue, or one no issue source knew
    (its text would be the fix's own message): its statement is its scrubbed message
    and, once ground truth ran, its failures."""
    unknown = not task.issue.number or task.issue.source == "commit"
    return task.tier in HISTORY_TIERS and unknown


def told(
    git: Git,
    task: Task,
    oracle: Oracle | None = None,
    *,
    leaks: Callable[[str], bool] = lambda sentence: False,
    fix: tuple[list[str], set[str]] | None = None,
    parents: Parents | None = None,
) -> str:
    """The statement of a task that names no issue: its commit message scrubbed (without
    a sentence that ``leaks`` the fix), then, when ``oracle`` found fail-to-pass tests,
    those tests with what they said before the fix. ``fix``: :func:`fix_only`'s answer,
    when known; else it is found for the names the message shows only (through
    ``parents``, given for the fixes of one history)."""
    message = git.message(task.sha)
    added, names = fix or fix_only(git, task, parents, among=named(message))
    report = _without(scrubbed(message, names), leaks)
    failing = failures_before(oracle) if oracle is not None else {}
    if not failing:
        return _text(report)
    lead, close = _LEADS.get(task.tier, _FIX_LEAD)
    told_failures = statement(failing, withheld=added, lead=lead, close=close)
    return _text(f"{report}\n\n{told_failures}" if report else told_failures)


def _without(report: str, leaks: Callable[[str], bool]) -> str:
    """``report`` without the sentences that ``leaks``."""
    parts = [
        " ".join(sentence for sentence in _SENTENCE.split(part) if not leaks(sentence))
        for part in report.split("\n\n")
    ]
    return "\n\n".join(part for part in parts if part)


def _text(told: str) -> str:
    """``told`` as text: a byte a file name or a message held that is not UTF-8 (kept
    as a lone surrogate, which no record can hold) is written as ``\\xff``."""
    try:
        raw = told.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no undecodable byte makes
        raw = told.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "backslashreplace")


def failures_before(oracle: Oracle) -> dict[str, str]:
    """The fail-to-pass tests of ``oracle``, each with the first line of its error in
    the first run before the fix (its module's, when that failed to collect)."""
    before = next((run for run in oracle.runs if run.label.startswith("before")), None)
    if before is None:
        return dict.fromkeys(oracle.fail_to_pass, "")
    found: dict[str, str] = {}
    for test in oracle.fail_to_pass:
        message = before.failures.get(test)
        if message is None:
            message = before.collection_errors.get(test.split("::", 1)[0], "")
        found[test] = message
    return found


def scrubbed(message: str, names: Iterable[str] = ()) -> str:
    """``message`` with the solution taken out: code, references, names in ``names``
    (those only the fix introduces), how-clauses, and sentences that say what was done.
    The title (a merge's: its pull request's) stays, scrubbed the same way."""
    hidden = {name for name in names if len(name) >= 3}
    title, paragraphs = _sentences(message)
    kept_title = _scrub_sentence(title, hidden, keep_solution=True)
    kept: list[str] = []
    for sentences in paragraphs:
        scrubbed_sentences = [_scrub_sentence(sentence, hidden) for sentence in sentences]
        if joined := " ".join(sentence for sentence in scrubbed_sentences if sentence):
            kept.append(joined)
    return "\n\n".join(part for part in [kept_title, *kept] if part)


def named(message: str) -> set[str]:
    """The names :func:`scrubbed` looks for in ``message``: of the names it is given,
    only these change what it keeps."""
    title, paragraphs = _sentences(message)
    sentences = [title, *(sentence for sentences in paragraphs for sentence in sentences)]
    return {name for sentence in sentences for name in _NAME.findall(_stripped(sentence))}


def _sentences(message: str) -> tuple[str, list[list[str]]]:
    """The title of ``message`` (a merge's: its pull request's) and the sentences of each
    paragraph of its body, without code blocks and trailers."""
    lines = message.strip().splitlines()
    while lines and (not lines[0].strip() or _TRAILER.match(lines[0].strip())):
        lines.pop(0)  # a merge's own title: its pull request's is the next line
    title, body = (lines[0], "\n".join(lines[1:])) if lines else ("", "")
    paragraphs: list[list[str]] = []
    for paragraph in re.split(r"\n\s*\n", _CODE.sub(" ", body)):
        lines = [line for line in paragraph.splitlines() if not _TRAILER.match(line.strip())]
        text = " ".join(line.strip().lstrip("-*").strip() for line in lines if line.strip())
        paragraphs.append([sentence for sentence in _SENTENCE.split(text) if sentence.strip()])
    return title, paragraphs


def _stripped(sentence: str) -> str:
    """``sentence`` without code, calls, references and how-clauses."""
    text = _CALL.sub(" ", _CODE.sub(" ", sentence))
    return _CLAUSE.sub("", _REFERENCE.sub(" ", text))


def _scrub_sentence(sentence: str, hidden: set[str], *, keep_solution: bool = False) -> str:
    """``sentence`` without code, references and how-clauses; empty when it shows a
    hidden name or (unless ``keep_solution``) says what was done."""
    text = _stripped(sentence)
    if any(name in hidden for name in _NAME.findall(text)):
        if not keep_solution:
            return ""
        text = " ".join(word for word in text.split() if not set(_NAME.findall(word)) & hidden)
    if not keep_solution and _SOLUTION.search(text):
        return ""
    text = re.sub(r"\s+([,.;:!?)])", r"\1", re.sub(r"\s+", " ", text)).strip(" ,;:-(")
    return text if _NAME.search(text) else ""


def fix_only(
    git: Git, task: Task, parents: Parents | None = None, *, among: Collection[str] | None = None
) -> tuple[list[str], set[str]]:
    """The lines the fix added (to its code and its tests), and the names in the code it
    added to its source files (not in their comments or strings) that neither Python's
    builtins nor a Python file of the repository held before it (read through
    ``parents``, given for the fixes of one history); with ``among``, only those of its
    names (the others are not looked for in the repository)."""
    paths = [*task.source_files, *task.changed_test_files]
    diff = git.run(
        "diff", "--no-color", "--no-ext-diff", "-U0", task.parent, task.sha, "--", *paths
    )
    added: list[str] = []
    numbers: dict[str, set[int]] = {}
    current, number = "", 0
    for line in diff.splitlines():
        if line.startswith("+++ "):
            current = line[6:] if line.startswith("+++ b/") else ""
        elif hunk := _HUNK.match(line):
            number = int(hunk[1])
        elif line.startswith("+"):
            added.append(line[1:])
            if current in task.source_files:
                numbers.setdefault(current, set()).add(number)
            number += 1
    names: set[str] = set()
    for path, lines in numbers.items():
        found = git.blob(task.sha, path)
        if found is not None:
            names |= _code_names(found[1].decode("utf-8", "replace"), lines)
    names -= set(dir(builtins))
    if among is not None:
        names &= set(among)
    return source_lines(added), names - _held(parents or Parents(git), task, names)


def _code_names(text: str, lines: set[int]) -> set[str]:
    """The names on ``lines`` of the module ``text`` that are code: not in a comment or
    a string. Read from the syntax tree of the top-level definitions holding them
    (Python's own parser: a tokenizer in Python took a tenth of a second a module, and
    parsing a whole module most of a task's statement), else of the whole module, else
    its tokens, else each line alone without its strings and comments."""
    for first, piece in (_definitions(text, lines), (1, text)):
        try:
            return _tree_names(ast.parse(piece), {line - first + 1 for line in lines})
        except (SyntaxError, ValueError, RecursionError):
            continue
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        rows = text.splitlines()
        return {
            name
            for number in lines
            if number <= len(rows)
            for name in _NAME.findall(_STRING_OR_COMMENT.sub(" ", rows[number - 1]))
        }
    return {
        token.string
        for token in tokens
        if token.type == tokenize.NAME and token.start[0] in lines
        and not keyword.iskeyword(token.string)
    }  # fmt: skip


def _definitions(text: str, lines: set[int]) -> tuple[int, str]:
    """The first line and the text of the top-level definitions (``def``, ``class`` or a
    decorator at the start of a line) of ``text`` that hold ``lines``, with what lies
    between them; the whole of ``text`` when its line ends are not all ``\\n`` (the
    parser would number its lines otherwise)."""
    if "\r" in text or not lines:
        return 1, text
    rows = text.split("\n")
    starts = [number for number, row in enumerate(rows, start=1) if row.startswith(_DEFINES)]
    first = max((start for start in starts if start <= min(lines)), default=1)
    end = min((start for start in starts if start > max(lines)), default=len(rows) + 1)
    return first, "\n".join(rows[first - 1 : end - 1])


def _tree_names(tree: ast.AST, lines: set[int]) -> set[str]:
    """The identifiers of ``tree`` written on ``lines``: names, attributes, what a
    ``def``, ``class``, parameter, keyword argument or import defines."""
    found: set[str] = set()
    for node in _walk_within(tree, sorted(lines)):
        if isinstance(node, ast.Name):
            named = [(node.id, node.lineno)]
        elif isinstance(node, ast.Attribute):
            named = [(node.attr, node.end_lineno or node.lineno)]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            named = [(node.name, node.lineno)]
        elif isinstance(node, ast.arg | ast.keyword) and node.arg:
            named = [(node.arg, node.lineno)]
        elif isinstance(node, ast.alias):
            named = [(part, node.lineno) for part in (node.asname or node.name).split(".")]
        else:
            continue
        found.update(name for name, line in named if line in lines)
    return found


def _walk_within(tree: ast.AST, lines: list[int]) -> Iterator[ast.AST]:
    """The nodes of ``tree`` whose lines may hold one of ``lines`` (sorted): a node
    none of whose lines is one of them is not entered."""
    stack = [tree]
    while stack:
        node = stack.pop()
        start = getattr(node, "lineno", None)
        end = getattr(node, "end_lineno", None) or start
        decorators = getattr(node, "decorator_list", [])  # written above its first line
        start = min([start, *(d.lineno for d in decorators)]) if decorators else start
        if start is not None and end is not None:
            after = bisect.bisect_left(lines, start)  # the first of lines from its start
            if after == len(lines) or lines[after] > end:
                continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _held(parents: Parents, task: Task, names: set[str]) -> set[str]:
    """Which of ``names`` a Python file of the fix's parent holds, as a whole word: the
    files the fix changed are read first, the rest of its tree only for the names left
    (read through ``cat-file``: a ``git grep`` of the tree cost most of a statement)."""
    if not names:
        return set()
    left = {name.encode("utf-8", "surrogateescape"): name for name in names}
    read: set[str] = set()
    for path in (*task.source_files, *task.changed_test_files):
        found = parents.git.blob(task.parent, path) if path.endswith(".py") else None
        if found is not None:
            read.add(found[0])
            _take_words(found[1], left)
    if left:
        for blob, content in parents.python_files(task.parent).items():
            if not left:
                break
            if content is not None and blob not in read:
                _take_words(content, left)
    return names - set(left.values())


@dataclass
class Parents:
    """The Python files of fixes' parents, read through ``git``. Those of the parent read
    last are kept, and not read again: a history's fixes, newest first, share most of
    their parents' files. Trees are kept by id with the Python files under them, so a
    folder unchanged since a parent read before is not listed again."""

    git: Git
    kept: dict[str, bytes | None] = field(default_factory=dict)
    trees: dict[str, tuple[TreeEntry, ...]] = field(default_factory=dict)
    modules: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def python_files(self, commit: str) -> dict[str, bytes | None]:
        """The content of each Python file of ``commit``, by blob id."""
        root = self.git.tree(commit)
        blobs = self._modules(root) if root is not None else ()
        found = {blob: self.kept[blob] for blob in blobs if blob in self.kept}
        found.update(self.git.contents(blob for blob in blobs if blob not in found))
        self.kept = found
        return found

    def _modules(self, root: str) -> tuple[str, ...]:
        """The blob ids of the Python files under tree ``root``: the trees not read
        before are asked of ``cat-file``, a level at a time."""
        pending = [root]
        while pending := [tree for tree in pending if tree not in self.trees]:
            self.trees.update(self.git.trees(pending))
            pending = [entry.object_id for tree in pending for entry in self.trees[tree]
                       if entry.is_tree]  # fmt: skip
        return self._under(root)

    def _under(self, tree: str) -> tuple[str, ...]:
        found = self.modules.get(tree)
        if found is None:
            entries = self.trees[tree]
            here = [
                entry.object_id
                for entry in entries
                if entry.is_blob and entry.name.endswith(b".py")
            ]
            below = [
                blob for entry in entries if entry.is_tree for blob in self._under(entry.object_id)
            ]
            found = self.modules[tree] = (*here, *below)
        return found


def _take_words(content: bytes, left: dict[bytes, str]) -> None:
    """Remove from ``left`` the names ``content`` holds as a whole word (bounded by
    bytes that are not ASCII letters, digits or ``_``, as ``git grep -w`` reads it)."""
    for word in [word for word in left if word in content]:
        start = content.find(word)
        while start >= 0:
            end = start + len(word)
            before = content[start - 1] if start else None
            after = content[end] if end < len(content) else None
            if before not in _WORD_BYTES and after not in _WORD_BYTES:
                del left[word]
                break
            start = content.find(word, start + 1)
