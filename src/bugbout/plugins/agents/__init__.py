"""Built-in agent plugins: one adapter per module."""
