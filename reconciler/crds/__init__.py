"""The Cilium CRDs this project ships, so stacks and tests can install them where Cilium has not."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import yaml

CRD_FILES = ("ciliumnodes.yaml", "ciliumpodippools.yaml", "ciliumnodeconfigs.yaml")


def crd_paths() -> list[Path]:
    """Paths of the CRD YAML files, in install order."""
    package = resources.files(__name__)
    return [Path(str(package.joinpath(name))) for name in CRD_FILES]


def load_crds() -> list[dict[str, Any]]:
    """The CRDs as plain dicts (apiextensions.k8s.io/v1 CustomResourceDefinition)."""
    return [yaml.safe_load(path.read_text()) for path in crd_paths()]


def crd_names() -> list[str]:
    """metadata.name of each shipped CRD, e.g. `ciliumnodes.cilium.io`."""
    return [crd["metadata"]["name"] for crd in load_crds()]
