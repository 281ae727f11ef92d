"""The project's default program: runs the program named by config `cilium-ipam:program`.

One Pulumi project (`Pulumi.yaml` at the repo top) serves every stack; each stack's config file
(`Pulumi.<stack>.yaml`) picks `eni`, `multipool` (the default) or `local`.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root, for `stacks.*`

import pulumi  # noqa: E402

PROGRAMS = ("eni", "multipool", "local")
DEFAULT_PROGRAM = "multipool"

chosen = pulumi.Config("cilium-ipam").get("program") or DEFAULT_PROGRAM
if chosen not in PROGRAMS:
    raise pulumi.RunError(
        f"config cilium-ipam:program is {chosen!r}; set it to one of {', '.join(PROGRAMS)}."
    )
importlib.import_module(f"stacks.{chosen}.program").main()
