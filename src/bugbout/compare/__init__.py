"""``bugbout compare``: two bouts' resolve rates, paired per contestant on the tasks both
scored with the same ground truth, and whether one regressed."""
