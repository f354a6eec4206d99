"""Built-in executors: one module each."""
