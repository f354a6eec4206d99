"""What the models cost and what they know: prices, the budget a run may spend on them,
and their knowledge cutoffs."""
