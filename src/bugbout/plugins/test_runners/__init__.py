"""Built-in test runner plugins."""
