"""Records and the store: what passes between stages, and where it is kept."""
