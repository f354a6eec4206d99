"""The tests a JavaScript or TypeScript file defines, by parsing: real test files of
Vitest, Jest and Mocha projects (read from their mirrors at pinned commits), and the
forms they use (nested blocks, ``.each`` tables, modifiers, TypeScript, JSX)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bugbout.plugins.test_runners.javascript.titles import defined_tests

MIRRORS = Path("/work/.mirror")


def blob(repository: str, commit: str, path: str) -> bytes:
    """The text of ``path`` at ``commit`` of the mirror of ``repository`` (owner/name)."""
    mirror = MIRRORS / repository.replace("/", "+") / "repo"
    if not mirror.is_dir():
        pytest.fail(f"no mirror at {mirror}: fetch github:{repository}")
    shown = subprocess.run(
        ["git", "--git-dir", str(mirror), "show", f"{commit}:{path}"],
        capture_output=True,
        check=True,
    )
    return shown.stdout


def test_nested_describes_and_each_tables_of_a_vitest_suite() -> None:
    path = "src/index.spec.ts"
    tests = defined_tests(path, blob("pillarjs/path-to-regexp", "cbf30259", path))
    assert tests["path-to-regexp > PathError > should contain original path and debug url"] == 1
    assert tests["path-to-regexp > parse errors > should throw on unbalanced group: %s"] == 3
    assert tests["path-to-regexp > parse errors > should throw on unexpected character %s"] == 8
    # describe.each over an imported table: its tests' cases cannot be told
    assert tests["path-to-regexp > match $path with $options > should match $input"] is None
    assert len(tests) == 27


def test_tests_made_in_a_loop_over_a_table_have_unknown_cases() -> None:
    path = "test/query.test.ts"
    tests = defined_tests(path, blob("unjs/ufo", "11308c0b", path))
    assert tests == {
        'withQuery > t.input.toString() + " with " + JSON.stringify(t.query)': None,
        "filterQuery > t.input.toString() + ' filter \"bar\"'": None,
        "getQuery > t": None,
    }


def test_top_level_jest_tests_are_named_by_their_own_title() -> None:
    path = "test/datetime/create.test.js"
    tests = defined_tests(path, blob("moment/luxon", "20139a300c", path))
    assert tests["DateTime.local works even after time zone change"] == 1
    assert all(" > " not in name for name in tests)
    assert len(tests) == 88  # its lines that start with test(


def test_mocha_describe_and_it_blocks() -> None:
    path = "test/parse.js"
    tests = defined_tests(path, blob("jshttp/cookie", "1cc64ff^", path))
    assert tests["cookie.parse(str) > should throw with no arguments"] == 1
    assert len(tests) == 14
    assert all(name.startswith("cookie.parse(str") for name in tests), list(tests)


def test_mocha_qunit_suites_hold_the_tests_after_them() -> None:
    path = "test/parse.js"
    tests = defined_tests(path, blob("jshttp/cookie", "b15be80b", path))
    assert tests["parse > argument validation"] == 1
    assert all(name.startswith("parse > ") for name in tests), list(tests)
    source = b'suite("a"); test("one", f); suite("b"); test("two", f); test("later");'
    assert defined_tests("q.js", source) == {"a > one": 1, "b > two": 1}


def test_loops_over_literal_lists_name_each_pass_s_tests() -> None:
    path = "test/index.test.js"
    tests = defined_tests(path, blob("ai/nanoid", "07a39d62", path))
    for type in ("node", "browser"):  # for (let type of ['node', 'browser']) describe(type
        assert tests[f"{type} > customAlphabet > has options"] == 1
        assert tests[f"{type} > is ready for 0 size"] == 1
    assert len(tests) == 60
    assert not [name for name in tests if not name.startswith(("node > ", "browser > "))]
    source = b"""
    const cases = load();
    for (const unit of ["ms", "s"]) {
      describe(unit, () => {
        ["a", 'b'].forEach(function (name) { it(`${name} in ${unit}`, () => {}); });
        for (const other of cases) { it(`${unit} to ${other}`, () => {}); }
        for (const again of [1, 2]) { it("same title", () => {}); }
      });
    }
    """
    assert defined_tests("units.test.js", source) == {
        "ms > a in ms": 1,
        "ms > b in ms": 1,
        "ms > ${unit} to ${other}": None,
        "ms > same title": 2,
        "s > a in s": 1,
        "s > b in s": 1,
        "s > ${unit} to ${other}": None,  # a title with a value not known is its source
        "s > same title": 2,
    }


def test_titles_are_the_literals_text_with_escapes_read() -> None:
    source = rb"""
    describe('it\'s "quoted"', () => {
      it("tab\there", () => {});
      test(`template \u00e9`, () => {});
      it(name, () => {});
    });
    """
    assert defined_tests("a.test.js", source) == {
        'it\'s "quoted" > tab\there': 1,
        'it\'s "quoted" > template \u00e9': 1,
        'it\'s "quoted" > name': 1,
    }


def test_modifiers_tables_and_tests_that_never_run() -> None:
    source = b"""
    import { describe, it, test } from "vitest";
    describe.concurrent("math", () => {
      it.only("adds", () => {});
      test.each`
        a    | b    | sum
        ${1} | ${2} | ${3}
        ${2} | ${2} | ${4}
      `("adds $a and $b", ({ a, b, sum }) => {});
      test.for([[1, 1], [2, 2], ...more])("doubles %i", ([a]) => {});
      it.skip("not yet", () => {});
      it.todo("later");
      xit("off", () => {});
      test.skipIf(process.platform === "win32")("posix paths", () => {});
      describe.each([["a"], ["b"]])("case %s", (name) => {
        it.each([1, 2, 3])("item %i", (item) => {});
      });
      xdescribe("disabled", () => { it("inside", () => {}); });
      [1, 2].forEach((n) => { it(`n is ${n}`, () => {}); });
    });
    """
    assert defined_tests("math.test.mjs", source) == {
        "math > adds": 1,
        "math > adds $a and $b": 2,
        "math > doubles %i": None,
        "math > posix paths": 1,
        "math > case %s > item %i": 6,
        "math > n is 1": 1,
        "math > n is 2": 1,
    }


def test_typescript_generics_and_tsx() -> None:
    typescript = b"""
    import { test as base, expect } from "vitest";
    interface Fixtures { page: Page<string> }
    const test = base.extend<Fixtures>({ page: async ({}, use) => use(new Page<string>()) });
    describe<{ db: Db }>("store", () => {
      test("reads", async ({ page }) => {
        const value = <number>(await page.get<number>("x"));
        expect(value satisfies number).toBe(1);
      });
    });
    """
    assert defined_tests("store.test.ts", typescript) == {"store > reads": 1}
    tsx = b"""
    import { render, screen } from "@testing-library/react";
    describe("Button", () => {
      it("renders its label", () => {
        render(<Button<string> label="Go" onClick={() => undefined} />);
        expect(screen.getByText("Go")).toBeTruthy();
      });
    });
    """
    assert defined_tests("Button.test.tsx", tsx) == {"Button > renders its label": 1}
    jsx = b'it("renders", () => { render(<App title="x">{items}</App>); });'
    assert defined_tests("__tests__/App.jsx", jsx) == {"renders": 1}


def test_a_title_defined_twice_counts_both_and_nothing_is_found_in_nothing() -> None:
    source = b'it("same", () => {}); it("same", () => {}); it.each(rows)("same", () => {});'
    assert defined_tests("twice.test.js", source) == {"same": None}
    assert defined_tests("twice.test.js", source.replace(b"it.each(rows)", b"it")) == {"same": 3}
    assert defined_tests("none.test.js", None) == {}
    assert defined_tests("broken.test.js", b"describe(") == {}


def test_type_tests_define_no_test_a_run_runs() -> None:
    """ufo's ``test/types.test-d.ts`` (``expectTypeOf`` under ``describe``/``it``) is checked
    by the compiler; ``vitest run`` runs none of it, so a commit adding only type tests adds
    no test."""
    source = b"describe('query', () => {\n  it('getQuery generic type support', () => {})\n})\n"
    assert defined_tests("test/types.test-d.ts", source) == {}
    assert defined_tests("test/types.test.ts", source) == {
        "query > getQuery generic type support": 1
    }
