"""`stacks` is not an installed package (it is the Pulumi programs' directory): make it importable
from the repository root even when pytest is not started as `python -m pytest` from there."""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = str(Path(__file__).resolve().parents[2])
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)
