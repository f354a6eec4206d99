"""Built-in examiner assignments: one module each."""
