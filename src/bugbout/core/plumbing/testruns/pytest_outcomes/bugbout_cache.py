"""``config.cache`` for a test run whose pytest cache plugin is off.

bugbout's runs pass ``-p no:cacheprovider``: a run writes no cache of its own, in the
tree or anywhere (the plugin's files would also fail on a test id that is not valid
text). A plugin that reads or writes the cache as it configures (pytest-randomly 3.5
keeps its seed there) still finds one: this one, kept in memory for the run, its
folders made under the run's private ``TMPDIR``.

It runs in the project's own environment, as ``bugbout_outcomes`` does (Python 3.6+,
pytest 2.7+).
"""

import os
import tempfile


class MemoryCache:
    """What plugins use of pytest's ``Cache``: values by key, and folders by name."""

    def __init__(self):
        self._values = {}
        self._folder = None

    def get(self, key, default):
        return self._values.get(key, default)

    def set(self, key, value):
        self._values[key] = value

    def mkdir(self, name):
        """A folder for ``name`` (pytest 7.0 and later), as a ``pathlib`` path."""
        import pathlib

        return pathlib.Path(self._make(name))

    def makedir(self, name):
        """A folder for ``name``, as a ``py.path`` (the older pytests' call)."""
        import py

        return py.path.local(self._make(name))

    def _make(self, name):
        if self._folder is None:
            self._folder = tempfile.mkdtemp(prefix="bugbout-cache-")
        path = os.path.join(self._folder, os.path.basename(str(name)) or "d")
        os.makedirs(path, exist_ok=True)
        return path


def give_cache(config):
    """Give ``config`` a cache when pytest's own plugin is off."""
    if getattr(config, "cache", None) is None:
        config.cache = MemoryCache()
