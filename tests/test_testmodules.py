"""Finding the tests a fix added by parsing the modules before and after."""

from __future__ import annotations

from bugbout.core.plumbing.project.testmodules import (
    added_tests,
    changed_tests,
    defined_tests,
    is_test_module,
)

BEFORE = """
import pytest, unittest

def test_one(): pass

def helper(): pass

class TestGroup:
    def test_a(self): pass
    class TestNested:
        def test_deep(self): pass

class Checks(unittest.TestCase):
    def testLegacy(self): pass

class NotATest:
    def test_hidden(self): pass

@pytest.mark.parametrize("x", [1, 2])
@pytest.mark.parametrize("y", (3,))
def test_grid(x, y): pass

@pytest.mark.parametrize("x", CASES)
def test_dynamic(x): pass

async def test_async(): pass
"""


def test_defined_tests_with_parametrize_counts() -> None:
    assert defined_tests(BEFORE) == {
        "test_one": 1,
        "TestGroup::test_a": 1,
        "TestGroup::TestNested::test_deep": 1,
        "Checks::testLegacy": 1,
        "test_grid": 2,
        "test_dynamic": None,
        "test_async": 1,
    }


def test_added_tests_new_names_and_new_cases() -> None:
    after = BEFORE.replace("[1, 2]", "[1, 2, 5]").replace("def helper", "def test_new")
    assert added_tests(defined_tests(BEFORE), defined_tests(after)) == ["test_new", "test_grid"]


def test_changed_body_or_removed_cases_is_not_an_added_test() -> None:
    after = BEFORE.replace("def test_one(): pass", "def test_one(): assert 1").replace(
        "[1, 2]", "[1]"
    )
    assert added_tests(defined_tests(BEFORE), defined_tests(after)) == []


def test_gaining_a_parametrize_decorator_adds_cases() -> None:
    after = BEFORE.replace("def test_one", '@pytest.mark.parametrize("z", [0, 1])\ndef test_one')
    assert added_tests(defined_tests(BEFORE), defined_tests(after)) == ["test_one"]


def test_unparsable_and_missing_modules_define_nothing() -> None:
    assert defined_tests("print 'python 2'") == {}
    assert defined_tests(None) == {}
    assert added_tests({}, defined_tests("def test_x(): pass")) == ["test_x"]


def test_test_module_names() -> None:
    assert is_test_module("tests/test_a.py")
    assert is_test_module("pkg/a_test.py")
    assert not is_test_module("tests/conftest.py")
    assert not is_test_module("tests/helpers.py")


def test_statement_memo_gives_the_same_tests_as_a_whole_parse() -> None:
    from bugbout.core.plumbing.project.testmodules import defined_tests_memo

    memo: dict[str, dict[str, int | None]] = {}
    tricky = BEFORE + 'DOC = """\ndef test_inside_a_string():\n    pass\n"""\n'
    for source in (BEFORE, tricky, BEFORE.replace("[1, 2]", "[1, 2, 3]")):
        assert defined_tests_memo(source.encode(), memo) == defined_tests(source)
    assert "test_inside_a_string" not in defined_tests_memo(tricky.encode(), memo)
    assert memo  # statements were remembered for the next version


def test_statements_spread_over_lines_are_parsed_once_each() -> None:
    """Multi-line decorators, brackets closed at column 0 and strings holding code keep
    the per-statement memo in use; only the statements a new version changed are parsed."""
    from bugbout.core.plumbing.project.testmodules import defined_tests_memo

    module = (
        'CASES = [\n    1,\n]\nTEXT = """\ndef test_in_text(): pass\n"""\n\n'
        "@pytest.mark.parametrize(\n"
        '    "x",\n    [1, 2],\n)\n@pytest.mark.skip\ndef test_wide(x): pass\n\n'
        "def test_after(): pass\n"
    )
    memo: dict[str, dict[str, int | None]] = {}
    assert defined_tests_memo(module.encode(), memo) == defined_tests(module)
    assert defined_tests(module) == {"test_wide": 2, "test_after": 1}
    assert any(key.startswith("@pytest.mark.parametrize(") for key in memo)
    newer = module.replace("def test_after(): pass", "def test_after(): assert 1")
    remembered = set(memo)
    assert defined_tests_memo(newer.encode(), memo) == defined_tests(newer)
    assert set(memo) - remembered == {"def test_after(): assert 1"}


def test_a_changed_method_is_parsed_without_its_class() -> None:
    """A class is parsed member by member: a new version that changes one method parses
    that method alone; lines less indented than the body (comments, code in a string, a
    clause that does not parse there), nested classes and classes that are not tests give
    what a whole parse gives."""
    from bugbout.core.plumbing.project.testmodules import defined_tests_memo

    big = (
        "class TestBig(Base):\n    'Doc.'\n\n    X = [\n        1,\n    ]\n"
        "    @pytest.mark.parametrize('x', [1, 2])\n    def test_a(self, x): pass\n"
        "# a comment at column 0\n    def test_b(self): pass\n\n"
        "    class TestInner:\n        def test_c(self): pass\n"
        '    def test_e(self, pytester):\n        pytester.makepyfile("""\n'
        'def test_in_a_string(): pass\n""")\n'
        "    def helper(self): pass\n"
    )
    rest = (
        "\nclass Helper:\n    def test_not_collected(self): pass\n\n"
        'class TestText:\n    TEXT = """\ndef test_in_text(): pass\n"""\n'
        "    def test_d(self): pass\n"
    )
    memo: dict[str, dict[str, int | None]] = {}
    assert defined_tests_memo((big + rest).encode(), memo) == defined_tests(big + rest)
    assert list(defined_tests(big + rest)) == [
        "TestBig::test_a", "TestBig::test_b", "TestBig::TestInner::test_c", "TestBig::test_e",
        "TestText::test_d",
    ]  # fmt: skip
    newer = big.replace("def test_b(self): pass", "def test_b(self): assert 1")
    remembered = set(memo)
    assert defined_tests_memo((newer + rest).encode(), memo) == defined_tests(newer + rest)
    assert set(memo) - remembered == {newer.rstrip(), "def test_b(self): assert 1"}
    clause = "class TestC:\n    try:\n        x = 1\n    except E:\n        pass\n"
    clause += "else:\n        pass\n    def test_f(self): pass\n"  # no module: no tests
    assert defined_tests_memo(clause.encode(), memo) == defined_tests(clause) == {}


def test_changed_tests_are_those_whose_code_changed() -> None:
    after = (
        BEFORE.replace("def test_a(self): pass", "def test_a(self):\n        assert 1 == 1")
        .replace('("x", [1, 2])', '("x", [1, 3])')
        .replace("def test_one(): pass", "def test_one():  # a comment\n    pass")
        .replace("def test_async(): pass", "def test_async(): pass\ndef test_new(): pass")
    )
    assert changed_tests(BEFORE.encode(), after.encode()) == ["TestGroup::test_a", "test_grid"]
    shadowed = BEFORE + "\ndef test_one(): assert False\n"  # a second definition wins
    assert changed_tests(BEFORE.encode(), shadowed.encode()) == ["test_one"]
    assert added_tests(defined_tests(BEFORE), defined_tests(shadowed)) == []
    assert changed_tests(None, after.encode()) == changed_tests(b"def (", b"x") == []
