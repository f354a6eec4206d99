from typing import Any, ClassVar

from bugbout.testing.suites import MinerSuite


class Test__TITLE__(MinerSuite):
    plugin = "__NAME__"
    options: ClassVar[dict[str, Any]] = {}  # what the suite builds it with, as in bugbout.yaml
