"""Values that may compare equal to anything, for ``bugbout_outcomes``: the classes made
during a pytest run that give their own ``__eq__``, ``__ne__`` or ``__contains__``, kept
from each garbage collection's start to the session's end, and probed there with values
they have never seen, those whose answers could count against the run (not a library's:
see ``bugbout.core.plumbing.tampering.impostors``). A run whose classes are all a
library's starts no probe.

It runs in the project's own environment, as ``bugbout_outcomes`` does (Python 3.6+).
"""

import gc
import itertools
import json
import operator
import os
import select
import signal
import sys
import warnings
import weakref

from bugbout_shared import code_of, inside, python_level, real

PROBED = ("__eq__", "__ne__", "__contains__")
"""What a value that matches anything overrides."""
SAMPLES = (
    (int, 7, 8),
    (float, 7.5, 8.5),
    (complex, 7j, 8j),
    (str, "seven", "eight"),
    (bytes, b"seven", b"eight"),
    (tuple, (7,), (8,)),
    (frozenset, frozenset([7]), frozenset([8])),
    (list, [7], [8]),
    (dict, {7: 7}, {8: 8}),
    (set, {7}, {8}),
)
"""A builtin a class may derive from, a value to make an instance of it with, and
another value of that builtin."""
PROBE_SECONDS = 10
"""How long the probe of one class may take before it is given up."""
_members = type.__dict__["__dict__"].__get__
"""A class's own namespace as the interpreter reads it (type's own ``__dict__``), not
what a metaclass's ``__dict__`` says it is."""
_subclasses, _keys = type.__subclasses__, operator.methodcaller("keys")
_apart_from_probed = operator.methodcaller("isdisjoint", PROBED)
_map, _list, _not, _dict, _zip, _id = map, list, operator.not_, dict, zip, id
_chain, _compress = itertools.chain.from_iterable, itertools.compress
"""What the walks of the classes read them with, held as they were when it was imported
(code under test that replaces ``map`` or ``zip`` does not blind them)."""


class Impostors(object):
    """Classes made during the run whose instances may compare equal to anything, kept
    alive from each garbage collection's start (a class is freed only by the collector)
    to the session's end, when each is probed with values it has never seen. A class
    made and freed between two collections under another class than ``object`` or the
    builtins is missed; one given its comparisons after it was first seen is looked at
    again at the end (so one that drops them before then is missed too)."""

    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.seen = {}  # id -> a weak reference: a class's own __hash__ is not called
        self.suspects = []
        self.roots = [object] + [sample[0] for sample in SAMPLES]
        self.scan(everything=True)

    def scan(self, everything=False):
        """Look at the classes not seen yet: in the whole tree of classes (``everything``,
        where the classes seen before are looked at again: one may have been given its
        comparisons since), else the newest subclasses of ``object`` and of the builtins
        above (a type lists its subclasses in the order they were made) and all below
        them."""
        if everything:
            return self._scan_all()
        stack = []
        for root in self.roots:
            for sub in reversed(_subclasses(root)):
                if self._known(sub):
                    break  # and so is every older one
                stack.append(sub)
        while stack:  # new classes, and below them: classes newer still, or met before
            klass = stack.pop()
            if self._known(klass):
                continue  # a class with two parents, met under the other
            self.seen[id(klass)] = weakref.ref(klass)
            self._consider(klass)
            stack.extend(_subclasses(klass))

    def _known(self, klass):
        """Whether ``klass`` was seen: the very class (an id may be a freed one's)."""
        known = self.seen.get(id(klass))
        return known is not None and known() is klass

    def _scan_all(self):
        """The roots and every class below them, a generation of subclasses at a time,
        each once (by identity: a class with two parents is not walked twice, nor all
        below it), marked seen; those naming a comparison are considered. The walk and
        the look at each namespace's names run in C: a session has thousands of classes,
        and few name a comparison."""
        visited = _dict(_zip(_map(_id, self.roots), self.roots))
        level = self.roots
        while level:
            below = _list(_chain(_map(_subclasses, level)))
            fresh = _dict(_zip(_map(_id, below), below))
            for known in visited.keys() & fresh.keys():
                del fresh[known]
            visited.update(fresh)
            level = _list(fresh.values())
        found = _list(visited.values())  # the roots too: their comparisons are C
        self.seen.update(_zip(visited, _map(weakref.ref, found)))
        names = _map(_keys, _map(_members, found))
        for klass in _compress(found, _map(_not, _map(_apart_from_probed, names))):
            self._consider(klass)

    def _consider(self, klass):
        """Keep ``klass`` when it gives its own comparisons (most classes name none)."""
        try:
            members = _members(klass)
            if members.keys().isdisjoint(PROBED):
                return
            if any(python_level(members.get(name)) for name in PROBED):
                self.suspects.append(klass)
        except Exception:  # a class's own lookups failed: keep it
            self.suspects.append(klass)

    def on_collection(self, phase, info):
        """Scan at a collection's start, unless the stack is deep: a scan reaching the
        recursion limit inside the collector has its error swallowed, and before Python
        3.9 the recursion then goes on past the limit and aborts the interpreter. A call
        through a class's slots counts thrice toward the limit, so a quarter of it is
        deep; the next collection scans."""
        if phase != "start":
            return
        try:
            sys._getframe(sys.getrecursionlimit() // 4)
        except ValueError:
            self.scan()

    def probed(self):
        """The suspects worth a probe: those whose records could count against the run,
        as they are now (the session's end), once each."""
        kept = dict((id(klass), klass) for klass in self.suspects).values()
        return [klass for klass in kept if self._could_count(klass)]

    def _could_count(self, klass):
        """Whether a record of ``klass`` could count against the run: bugbout counts a
        class whose module's file, or a comparison's code, lies in the rootdir, or one
        its module does not hold by name whose comparison has no file
        (``bugbout.core.plumbing.tampering.impostors``). A library's class (its files
        outside the rootdir, comparisons made from a string as dataclasses and attrs
        make them included) never can, and is not probed."""
        try:
            own = _members(klass)
            members = [own.get(name) for name in PROBED if name in own]
            codes = [getattr(code_of(member), "co_filename", None) for member in members]
            module = getattr(sys.modules.get(klass.__module__), "__file__", None)
            if any(_local(self._where(path)) for path in [module] + codes):
                return True
            return not _named(klass) and not all(path and os.path.isfile(path) for path in codes)
        except Exception:  # a class's own lookups failed: probe it
            return True

    def found(self):
        """The suspects that answer as nothing honest does, one record each."""
        self.scan(everything=True)
        left = self.probed()
        records = []
        while left:
            answers = _apart(left, self._records)
            for answer in answers:
                records.extend(answer)
            left = left[len(answers) + 1 :]  # the one after: its probe never answered
        return records

    def _records(self, klass):
        module = sys.modules.get(klass.__module__)
        records = []
        for name, why in _probe(klass):
            code = code_of(_members(klass).get(name))
            records.append(
                {
                    "class": "%s.%s" % (klass.__module__, klass.__qualname__),
                    "qualname": klass.__qualname__,
                    "named": _named(klass),
                    "method": name,
                    "why": why,
                    "file": self._where(getattr(module, "__file__", None)),
                    "code": self._where(getattr(code, "co_filename", None)),
                    "filed": os.path.isfile(getattr(code, "co_filename", None) or ""),
                }
            )
        return records

    def _where(self, path):
        """``path`` relative to the rootdir when it lies there (links resolved), else as
        it is; ``None`` for what is not a path (a module's ``__file__`` may be anything)."""
        if type(path) is not str or not path:
            return None
        if inside(path, self.root):
            return real(path)[len(self.root) :].lstrip(os.sep).replace(os.sep, "/") or "."
        return path


def _apart(suspects, records):
    """``records(klass)`` of the suspects in turn, made in a child process, until one
    kills it or runs past ``PROBE_SECONDS``: an instance made without its class's code
    may recurse without end (a ``__getattr__`` reading a slot never set), which can
    abort the interpreter, and no probe may end the run. Made here when no child can
    be started."""
    reading, writing = os.pipe()
    try:
        with warnings.catch_warnings():  # Python 3.12+ warns of a fork with threads
            warnings.simplefilter("ignore")
            pid = os.fork()
    except OSError:
        os.close(reading)
        os.close(writing)
        return [records(klass) for klass in suspects]
    if pid == 0:
        os.close(reading)
        gc.disable()  # no collector callbacks deep in a probe's recursion
        silent = os.open(os.devnull, os.O_WRONLY)
        for stream in (1, 2):  # an abort's report is not the run's output
            os.dup2(silent, stream)
        try:
            for klass in suspects:
                line = (json.dumps(records(klass)) + "\n").encode()
                while line:
                    line = line[os.write(writing, line) :]
        finally:
            os._exit(0)
    os.close(writing)
    return _answers(pid, reading, len(suspects))


def _answers(pid, reading, expected):
    """The lines the child ``pid`` writes on ``reading``, each within ``PROBE_SECONDS``
    of the last; the child is killed when it falls silent."""
    answers, pending = [], b""
    try:
        while len(answers) < expected and select.select([reading], [], [], PROBE_SECONDS)[0]:
            chunk = os.read(reading, 1 << 16)
            if not chunk:
                break
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            answers.extend(json.loads(line.decode()) for line in lines)
    finally:
        os.close(reading)
        if len(answers) < expected:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return answers


def _local(where):
    """Whether a path as ``_where`` gives it is a file of the rootdir, as bugbout reads
    the records: relative, not going up, not a ``<string>``."""
    if not where or os.path.isabs(where) or where.startswith("<"):
        return False
    return ".." not in where.replace(os.sep, "/").split("/")


def _named(klass):
    """Whether ``klass``'s module holds it under its qualified name, or holds there a
    class with the very same comparisons (a dataclass made with ``slots=True`` is a copy
    of the class first made, which shares its methods and is left unnamed)."""
    found = sys.modules.get(getattr(klass, "__module__", None) or "")
    try:
        for part in klass.__qualname__.split("."):
            found = getattr(found, part, None)
    except Exception:
        return False
    if found is klass or not isinstance(found, type):
        return found is klass
    own, held = _members(klass), _members(found)
    compared = [name for name in PROBED if name in own]
    return bool(compared) and all(held.get(name) is own[name] for name in compared)


def _instance(klass):
    """An instance of ``klass`` made without its own code (raises when there is no such
    way)."""
    for base, value, _ in SAMPLES:
        if issubclass(klass, base):
            made = base.__new__(klass) if base in (list, dict, set) else base.__new__(klass, value)
            if base in (list, dict, set):
                base.__init__(made, value)
            return made
    solid = next(b for b in klass.__mro__ if b.__module__ == "builtins")
    return solid.__new__(klass)


def _give_attributes(made, klass):
    """Set every name the probed methods read on ``made`` to an object of its own, so
    that ``getattr(self, "key", None) == getattr(other, "key", None)`` is not ``None ==
    None`` on an instance made without its ``__init__``."""
    try:
        attributes = vars(made)
    except TypeError:
        return  # no __dict__ (slots, or a builtin's value)
    for name in PROBED:
        code = code_of(_members(klass).get(name))
        if code is None:
            continue
        names = list(code.co_names) + [c for c in code.co_consts if isinstance(c, str)]
        for word in names:
            if word.isidentifier() and not word.startswith("__"):
                attributes.setdefault(word, object())


def _probe(klass):
    """``(method, why)`` for each comparison of ``klass`` that answers as nothing honest
    does: equal to a fresh object or to a value of a builtin it is not made from (every
    sample's other value), not unequal to one, or holding one."""
    fresh = type("bugbout_probe_%x" % id(klass), (object,), {})()
    try:
        made = _instance(klass)
        _give_attributes(made, klass)
    except Exception:
        return []
    found = []
    members = _members(klass)
    for stranger in [fresh] + [other for _, _, other in SAMPLES]:
        checks = (
            ("__eq__", True, "equals %r" % type(stranger).__name__),
            ("__ne__", False, "is not unequal to %r" % type(stranger).__name__),
            ("__contains__", True, "holds %r" % type(stranger).__name__),
        )
        for name, answer, why in checks:
            if name not in members or any(n == name for n, _ in found):
                continue
            try:
                if getattr(klass, name)(made, stranger) is answer:
                    found.append((name, why))
            except Exception:
                continue
    return found
