from typing import Any, ClassVar

from bugbout.testing.suites import AssignmentSuite


class Test__TITLE__(AssignmentSuite):
    plugin = "__NAME__"
    options: ClassVar[dict[str, Any]] = {}  # what the suite builds it with, as in bugbout.yaml
