"""Built-in reporters: one module each. Each renders a :class:`~bugbout.core.report.report.Report`
to text; ``filename`` names the file it is written to (``None``: printed)."""
