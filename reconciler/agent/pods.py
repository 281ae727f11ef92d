"""What the agent library needs to know about a pod and its namespace (pool selection input)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

POOL_ANNOTATION = "ipam.cilium.io/ip-pool"
FAMILY_POOL_ANNOTATION = {4: "ipam.cilium.io/ipv4-pool", 6: "ipam.cilium.io/ipv6-pool"}
REQUIRE_POOL_MATCH_ANNOTATION = "ipam.cilium.io/require-pool-match"
POD_NAMESPACE_LABEL = "io.kubernetes.pod.namespace"
POD_NAME_LABEL = "io.kubernetes.pod.name"


@dataclass(frozen=True)
class PodInfo:
    """A pod as seen at creation time, with its namespace's labels and annotations (MP-SEL-1, MP-SEL-4)."""

    namespace: str
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    namespace_labels: Mapping[str, str] = field(default_factory=dict)
    namespace_annotations: Mapping[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def selector_labels(self) -> dict[str, str]:
        """Pod labels plus the synthetic namespace and name labels Cilium adds."""
        labels = dict(self.labels)
        labels[POD_NAMESPACE_LABEL] = self.namespace
        labels[POD_NAME_LABEL] = self.name
        return labels
