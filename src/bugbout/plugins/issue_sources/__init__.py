"""Built-in issue sources plugins."""
