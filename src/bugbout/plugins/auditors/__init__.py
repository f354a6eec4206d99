"""Built-in auditors: one module each."""
