"""Built-in sandbox plugins."""
