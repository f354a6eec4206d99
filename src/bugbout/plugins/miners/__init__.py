"""Built-in miners plugins."""
