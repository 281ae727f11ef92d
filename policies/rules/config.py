"""Policy configuration: one JSON schema per policy, with defaults applied here as well.

The Pulumi CLI fills schema defaults in before it calls the pack, but unit tests (and older CLIs)
call `validate` with partial config, so every rule reads its settings through `effective_config`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import PolicyConfigSchema

CIDR_LIST: dict[str, Any] = {"type": "array", "items": {"type": "string"}, "default": []}

PROPERTIES: dict[str, dict[str, Any]] = {
    "minUsableAddressesPerBlock": {
        "type": "integer",
        "minimum": 1,
        "default": 8,
        "description": "Pod addresses every per-node block must offer after MP-POOL-4 reservations "
        "(8 = Cilium's default pre-allocation).",
    },
    "ipv4MaskSizeMin": {"type": "integer", "minimum": 1, "maximum": 32, "default": 16},
    "ipv4MaskSizeMax": {"type": "integer", "minimum": 1, "maximum": 32, "default": 32},
    "ipv6MaskSizeMin": {"type": "integer", "minimum": 1, "maximum": 128, "default": 64},
    "ipv6MaskSizeMax": {"type": "integer", "minimum": 1, "maximum": 128, "default": 128},
    "ipv6MaxBlockBits": {
        "type": "integer",
        "minimum": 1,
        "maximum": 64,
        "default": 16,
        "description": "Largest maskSize minus CIDR prefix length for IPv6 (Cilium's cidrset limit).",
    },
    "ipv6EniMode": {
        "type": "boolean",
        "default": False,
        "description": "IPv6 is enabled in ENI mode, so every pod subnet must be dual-stack (ENI-V6-4).",
    },
    "releaseExcessIps": {"type": "boolean", "default": False},
    "gcWithDefaultTags": {"type": "boolean", "default": False},
    "instanceTagsFilter": {"type": "boolean", "default": False},
    "staticIp": {"type": "boolean", "default": False},
    "vpcCidrs": CIDR_LIST,
    "serviceCidrs": CIDR_LIST,
    "knownPools": {
        "type": "array",
        "items": {"type": "string"},
        "default": [],
        "description": "Pools that exist outside this stack (e.g. auto-created `default`).",
    },
    "nodeCount": {"type": "integer", "minimum": 0, "default": 3},
    "poolNodeCounts": {
        "type": "object",
        "additionalProperties": {"type": "integer", "minimum": 0},
        "default": {},
        "description": "Nodes drawing from each pool; pools not listed use nodeCount.",
    },
    "podsPerNode": {
        "type": "integer",
        "minimum": 0,
        "default": 0,
        "description": "Pods per node from each pool; 0 means one block per node.",
    },
}


def schema(*names: str) -> PolicyConfigSchema:
    """The config schema of a policy that reads the given settings."""
    return PolicyConfigSchema(properties={name: dict(PROPERTIES[name]) for name in names})


def effective_config(given: Mapping[str, Any] | None, *names: str) -> dict[str, Any]:
    """The settings `names` with schema defaults filled in for anything not given."""
    given = given or {}
    return {name: given[name] if name in given else PROPERTIES[name]["default"] for name in names}
