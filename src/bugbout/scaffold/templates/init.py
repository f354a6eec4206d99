"""__DIST__: __SUMMARY__ (a __KIND__ plugin for bugbout)."""

__version__ = "0.1.0"
