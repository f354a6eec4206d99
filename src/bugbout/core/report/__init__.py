"""The report model: what a bout found, computed from its records alone."""
