"""What a project's files declare, read and never run: its metadata, requirement files,
``setup.py``, its dist-info, its pytest options, and the tests a module defines."""
