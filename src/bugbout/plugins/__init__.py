"""bugbout's built-in plugins: one module per plugin, under a folder per kind.

The core registers them by name (``bugbout.core.contract.manager.BUILTIN_PLUGINS``), as it does
entry-point plugins: it never imports this package directly."""
