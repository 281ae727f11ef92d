"""Instance-type network limits (EC2-SIM-1, ENI-CACHE-1).

Two sources with one interface (`limits_for(instance_type) -> InstanceTypeLimits`):

- `StaticLimits`: the bundled table `data/instance_types.json` (regenerate with
  `python -m reconciler.ec2.gen_limits`); the simulator and offline planning use it.
- `InstanceLimitsCache`: reads DescribeInstanceTypes through any `Ec2Api`, caches the answers and
  asks again only for a type it has not seen (lazy refresh), as Cilium's operator does.

A type EC2 does not know raises `UnknownInstanceType` with a one-sentence message.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import Any

from reconciler.ec2.api import Ec2Api, InstanceTypeLimits, UnknownInstanceType


def limits_from_record(instance_type: str, record: Mapping[str, Any]) -> InstanceTypeLimits:
    return InstanceTypeLimits(
        instance_type=instance_type,
        max_network_interfaces=int(record["MaximumNetworkInterfaces"]),
        ipv4_per_interface=int(record["Ipv4AddressesPerInterface"]),
        ipv6_per_interface=int(record.get("Ipv6AddressesPerInterface", 0)),
        hypervisor=str(record.get("Hypervisor") or ""),
        bare_metal=bool(record.get("BareMetal", False)),
    )


@cache
def bundled_limits() -> Mapping[str, InstanceTypeLimits]:
    """The bundled instance-type table, parsed once."""
    text = resources.files("reconciler.ec2").joinpath("data/instance_types.json").read_text()
    table = json.loads(text)["instance_types"]
    return {name: limits_from_record(name, rec) for name, rec in table.items()}


def unknown_type_error(instance_type: str) -> UnknownInstanceType:
    return UnknownInstanceType(
        f"Instance type {instance_type!r} is not known to EC2; check spec.eni.instance-type "
        "of the CiliumNode (e.g. m5.large)."
    )


class StaticLimits:
    """Limits from a fixed table (the bundled one unless given)."""

    def __init__(self, table: Mapping[str, InstanceTypeLimits] | None = None) -> None:
        self._table = dict(bundled_limits() if table is None else table)

    def limits_for(self, instance_type: str) -> InstanceTypeLimits:
        try:
            return self._table[instance_type]
        except KeyError:
            raise unknown_type_error(instance_type) from None

    def known_types(self) -> list[str]:
        return sorted(self._table)

    def select(self, instance_types: Iterable[str]) -> list[InstanceTypeLimits]:
        """Limits for each name (all when empty); raises for the first unknown name."""
        names = list(instance_types)
        if not names:
            return [self._table[name] for name in sorted(self._table)]
        return [self.limits_for(name) for name in names]


class InstanceLimitsCache:
    """DescribeInstanceTypes answers, cached; an unseen type triggers one lookup (thread-safe)."""

    def __init__(self, ec2: Ec2Api) -> None:
        self._ec2 = ec2
        self._cache: dict[str, InstanceTypeLimits] = {}
        self._lock = threading.Lock()

    def refresh(self, instance_types: Iterable[str] = ()) -> None:
        """Load the named types (every type EC2 knows when empty) into the cache."""
        found = self._ec2.describe_instance_types(list(instance_types))
        with self._lock:
            self._cache.update({item.instance_type: item for item in found})

    def limits_for(self, instance_type: str) -> InstanceTypeLimits:
        with self._lock:
            cached = self._cache.get(instance_type)
        if cached is not None:
            return cached
        try:
            self.refresh([instance_type])
        except UnknownInstanceType:
            raise unknown_type_error(instance_type) from None
        with self._lock:
            cached = self._cache.get(instance_type)
        if cached is None:
            raise unknown_type_error(instance_type)
        return cached

    def cached_types(self) -> list[str]:
        with self._lock:
            return sorted(self._cache)
