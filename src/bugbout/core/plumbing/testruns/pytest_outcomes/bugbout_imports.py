"""How ``bugbout_coverage`` has the package's modules imported: what a module runs while
it is imported is said as such (its effects outlast the test that imported it), and,
before Python 3.12, the module's functions are rewritten to mark themselves.

A finder put first on ``sys.meta_path`` gives each module of the package (a source file
under one of the source directories) a loader of its own. Before 3.12, where a profile
or trace function would make the suite run two times slower, that loader compiles the
module from its source rewritten: every ``def`` and ``lambda`` sets its byte in a shared
``bytearray`` when it starts, and again after each ``yield`` and ``await`` (a generator
resumed in another test runs there too), and so does each generator expression's
element. The rewrite adds statements and nothing else: line numbers, names and values
stay. The array is reached as a builtin (``__bugbout_marks__``), so no module's
namespace changes. A function is numbered by its file and its first line (its first
decorator's), as ``co_firstlineno`` counts it.

Stdlib only, and Python 3.6+, like the plugin.
"""

import ast
import builtins
from importlib import machinery

MARKS = "__bugbout_marks__"


def first_line(node):
    """The line ``co_firstlineno`` gives a function: its first decorator's, else its own."""
    lines = [decorator.lineno for decorator in getattr(node, "decorator_list", ())]
    return min(lines + [node.lineno])


def _located(tree, anchor):
    """``tree``, every node of it placed where ``anchor`` is."""
    for node in ast.walk(tree):
        for name in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if name in node._attributes and hasattr(anchor, name):
                setattr(node, name, getattr(anchor, name))
    return tree


def _template(text, anchor, *values):
    """The expression ``text`` placed at ``anchor``, its ``_`` names replaced by ``values``
    in order (which keep their own places)."""
    tree = _located(ast.parse(text, mode="eval").body, anchor)
    holes = [node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "_"]
    replaced = {id(hole): values[n] for n, hole in enumerate(holes)}
    for node in list(ast.walk(tree)):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                setattr(node, field, [replaced.get(id(item), item) for item in value])
            elif id(value) in replaced:
                setattr(node, field, replaced[id(value)])
    return tree


class _Marker(ast.NodeTransformer):
    """Marks every function of one module; ``number(line)`` gives a function's number."""

    def __init__(self, number):
        self.number = number
        self.enclosing = []

    def _mark(self, number, anchor):
        return _template("%s.__setitem__(%d, 1)" % (MARKS, number), anchor)

    def visit_FunctionDef(self, node):
        number = self.number(first_line(node))
        self.enclosing.append(number)
        self.generic_visit(node)
        self.enclosing.pop()
        at = 1 if ast.get_docstring(node, clean=False) is not None else 0
        anchor = node.body[min(at, len(node.body) - 1)]
        statement = ast.parse("%s[%d] = 1" % (MARKS, number)).body[0]
        node.body.insert(at, _located(statement, anchor))
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        number = self.number(node.lineno)
        self.enclosing.append(number)
        self.generic_visit(node)
        self.enclosing.pop()
        node.body = _template("_ or _", node.body, self._mark(number, node), node.body)
        return node

    def visit_GeneratorExp(self, node):
        self.generic_visit(node)
        if self.enclosing:
            mark = self._mark(self.enclosing[-1], node.elt)
            node.elt = _template("_ or _", node.elt, mark, node.elt)
        return node

    def _resumed(self, node):
        """``node`` (a ``yield`` or an ``await``), marking its function once it resumes."""
        self.generic_visit(node)
        if not self.enclosing:
            return node
        return _template("(_, _)[0]", node, node, self._mark(self.enclosing[-1], node))

    visit_Yield = visit_YieldFrom = visit_Await = _resumed


def marked(source, filename, number):
    """The code of module ``source`` with its functions marked (``number(line)``)."""
    tree = _Marker(number).visit(ast.parse(source, filename))
    return compile(tree, filename, "exec", dont_inherit=True)


class Finder(object):
    """Finds the package's modules (``owns(path)``) first, to load them with a
    :class:`Loader`: ``enter`` and ``leave`` are called around each module's import;
    with ``number(path, line)``, the module's functions are marked."""

    def __init__(self, owns, enter, leave, number=None):
        self.owns, self.enter, self.leave, self.number = owns, enter, leave, number
        self.loaded = set()
        """The files loaded by a :class:`Loader`."""

    def find_spec(self, name, path=None, target=None):
        spec = machinery.PathFinder.find_spec(name, path, target)
        loader = getattr(spec, "loader", None)
        if type(loader) is not machinery.SourceFileLoader or not self.owns(spec.origin):
            return None
        spec.loader = Loader(loader.name, loader.path)
        spec.loader.finder = self
        return spec

    def install(self):
        import sys

        sys.meta_path.insert(0, self)
        if self.number is not None:
            setattr(builtins, MARKS, bytearray())


class Loader(machinery.SourceFileLoader):
    """A module of the package: imported in the finder's import context, its functions
    marked when the finder numbers them."""

    finder = None

    def get_code(self, fullname):
        number = self.finder.number
        if number is None:
            return super(Loader, self).get_code(fullname)
        source = self.get_data(self.path)
        return marked(source, self.path, lambda line: number(self.path, line))

    def exec_module(self, module):
        self.finder.loaded.add(self.path)
        self.finder.enter()
        try:
            super(Loader, self).exec_module(module)
        finally:
            self.finder.leave()
