"""Built-in judge policies: one module each."""
