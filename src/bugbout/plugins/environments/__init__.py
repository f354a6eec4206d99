"""Built-in environments plugins."""
