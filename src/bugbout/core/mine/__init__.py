"""Mining: fix commits out of the history, and the issues they name."""
