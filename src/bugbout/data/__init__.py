"""Data files shipped with bugbout, read with :mod:`importlib.resources`."""
