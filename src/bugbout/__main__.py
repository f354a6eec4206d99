"""``python -m bugbout``: the same as the ``bugbout`` command."""

import sys

from bugbout.cli import main

sys.exit(main())
