"""``python -m bugbout.testing.model_server``: serve a script until killed."""

import sys

from bugbout.testing.model_server.server import main

if __name__ == "__main__":
    sys.exit(main())
