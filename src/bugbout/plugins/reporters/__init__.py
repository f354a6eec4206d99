"""Built-in reporters: one module each. Each renders a :class:`~bugbout.reporters.Report` to
text; ``filename`` names the file it is written to (``None``: printed)."""
