"""The one place where the toolchain's versions are pinned (issue 2).

k8s.io/kubernetes v1.35.4 builds with go1.26; its staging modules are published as v0.35.4.
etcd 3.6 is the line kube-apiserver 1.35 is released against. The pulumi CLI and the sdk whose
proto/exec script our language host uses are always the same version.
"""

from __future__ import annotations

KUBERNETES = "v1.35.4"
ETCD = "v3.6.16"
PULUMI = "v3.274.1"


def kubernetes_staging_version(kubernetes: str = KUBERNETES) -> str:
    """The published version of k8s.io/* staging modules for a release: v1.35.4 -> v0.35.4."""
    major, minor, patch = kubernetes.removeprefix("v").split(".")
    if major != "1":
        raise ValueError(f"unexpected Kubernetes version {kubernetes}: expected v1.X.Y")
    return f"v0.{minor}.{patch}"
