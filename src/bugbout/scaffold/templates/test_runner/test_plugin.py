from typing import Any, ClassVar

from bugbout.testing.suites import TestRunnerSuite


class Test__TITLE__(TestRunnerSuite):
    plugin = "__NAME__"
    options: ClassVar[dict[str, Any]] = {}  # what the suite builds it with, as in bugbout.yaml
