"""Print the README's set-up commands, one per line, exactly as a new user would type them.

They are the lines of the first ``bash`` block under the heading "Install, test, run" (comments
after ``#`` removed).  ``.ci/run`` runs these lines in a fresh virtual environment, and
``tests/test_setup_commands.py`` checks what they install against what the test command needs,
so the README, CI and the test suite cannot drift apart.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
HEADING = "## Install, test, run"


def setup_commands(readme: Path = README) -> list[str]:
    """The commands of the README's first ``bash`` block after :data:`HEADING`."""
    text = readme.read_text(encoding="utf-8")
    start = text.find(HEADING)
    if start < 0:
        raise SystemExit(f"{readme}: no heading {HEADING!r}")
    block = re.search(r"```bash\n(.*?)```", text[start:], flags=re.S)
    if block is None:
        raise SystemExit(f"{readme}: no ```bash block after {HEADING!r}")
    commands = []
    for line in block.group(1).splitlines():
        # a '#' starts a comment unless it is inside quotes (none of the commands quote a '#')
        command = line.split(" #", 1)[0].strip()
        if command and not command.startswith("#"):
            commands.append(command)
    return commands


if __name__ == "__main__":
    sys.stdout.write("\n".join(setup_commands()) + "\n")
