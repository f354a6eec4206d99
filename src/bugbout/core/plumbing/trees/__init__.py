"""Git and the trees made from it: cached checkouts and working copies, a test run's
tree, an attempt's patch and the walk that finds it, and files written into a tree."""
