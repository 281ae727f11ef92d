"""Entry point when a project's `main:` points straight at stacks/local."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root, for `stacks.local`

from stacks.local.program import main  # noqa: E402

main()
