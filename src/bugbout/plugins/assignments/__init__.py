"""Built-in assignments, what an examiner is asked for: one module each."""
