"""The judge: one patch per task, or none, from the executed evidence."""
