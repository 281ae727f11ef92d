"""The operator's EC2 cache (ENI-CACHE-1/2) with the operator-level filters of ENI-CFG-1.

One full refresh reads every ENI, subnet, VPC, route table and security group (all pages) and swaps
them in at once. Refreshes happen every `cache_refresh_interval` (60 s) and, when a mutation asked for
one with `trigger()`, at most once per `triggered_refresh_min_interval` (1 s). A refresh that fails
marks the cache unstable: `stable` is False and callers must not mutate EC2 until a refresh succeeds.

Mutations the executor performs are applied locally at once (`upsert_eni`, `forget_eni`,
`take_subnet_addresses`) so the next plan sees them before the next refresh. New ENIs stay in the
cache even when a refresh does not list them yet, and deleted ones stay hidden, for
`visibility_grace` seconds: EC2's Describe is eventually consistent (EC2-SIM-6).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable, Mapping
from typing import Protocol

from reconciler.clock import Clock
from reconciler.ec2.api import (
    Ec2Api,
    Ec2Error,
    InstanceTypeLimits,
    NetworkInterface,
    RouteTable,
    SecurityGroup,
    Subnet,
    Vpc,
)
from reconciler.ec2.limits import InstanceLimitsCache, StaticLimits
from reconciler.eni.config import EniOperatorConfig
from reconciler.eni.log import log_event


class LimitsSource(Protocol):
    def limits_for(self, instance_type: str) -> InstanceTypeLimits: ...


def tags_match(tags: Mapping[str, str], wanted: Mapping[str, str]) -> bool:
    """True when every wanted tag is present with its value (an empty `wanted` matches all)."""
    return all(tags.get(k) == v for k, v in wanted.items())


class Ec2Cache:
    """Cached EC2 state for planning; thread-safe for the executor's local updates."""

    def __init__(
        self,
        ec2: Ec2Api,
        clock: Clock,
        config: EniOperatorConfig,
        limits: LimitsSource | None = None,
        visibility_grace: float = 300.0,
    ) -> None:
        self._ec2 = ec2
        self._clock = clock
        self._config = config
        if limits is None:
            limits = InstanceLimitsCache(ec2) if config.update_ec2_adapter_limit_via_api else StaticLimits()
        self._limits = limits
        self._grace = visibility_grace
        self._lock = threading.RLock()
        self._enis: dict[str, NetworkInterface] = {}
        self._by_instance: dict[str, set[str]] = {}
        self._subnets: dict[str, Subnet] = {}
        self._vpcs: dict[str, Vpc] = {}
        self._route_tables: list[RouteTable] = []
        self._security_groups: dict[str, SecurityGroup] = {}
        self._managed_instances: set[str] | None = None
        self._created: dict[str, float] = {}
        self._deleted: dict[str, float] = {}
        self._last_attempt: float | None = None
        self._last_success: float | None = None
        self._triggered = False
        self.stable = False
        self.last_error = ""
        self.refresh_count = 0

    # --- refresh ---------------------------------------------------------------------------------
    def trigger(self) -> None:
        """Ask for a refresh after a mutation (ENI-CACHE-2); honoured at most once per second."""
        self._triggered = True

    def refresh_due(self) -> bool:
        now = self._clock.now()
        if self._last_attempt is None:
            return True
        since = now - self._last_attempt
        if not self.stable or self._triggered:
            return since >= self._config.triggered_refresh_min_interval
        return since >= self._config.cache_refresh_interval

    def maybe_refresh(self) -> bool:
        """Refresh when due; returns True when a refresh ran and succeeded."""
        return self.refresh() if self.refresh_due() else False

    def refresh(self) -> bool:
        """Re-read everything; on failure keep the old data but mark the cache unstable."""
        now = self._clock.now()
        self._last_attempt = now
        self._triggered = False
        try:
            subnets = [s for s in self._ec2.describe_subnets() if self._subnet_allowed(s)]
            vpcs = self._ec2.describe_vpcs()
            route_tables = self._ec2.describe_route_tables()
            groups = self._ec2.describe_security_groups()
            enis = self._ec2.describe_network_interfaces()
            managed: set[str] | None = None
            if self._config.instance_tags_filter:
                filters = {f"tag:{k}": [v] for k, v in self._config.instance_tags_filter.items()}
                managed = {i.id for i in self._ec2.describe_instances(filters=filters)}
        except Ec2Error as err:
            self.stable = False
            self.last_error = f"EC2 cache refresh failed ({err.code}): {err}"
            log_event("cache_refresh_failed", action="refresh", reason=self.last_error)
            return False
        with self._lock:
            listed = {e.id: e for e in enis}
            self._created = {
                k: t for k, t in self._created.items() if now - t < self._grace and k not in listed
            }
            self._deleted = {k: t for k, t in self._deleted.items() if now - t < self._grace and k in listed}
            kept = {k: self._enis[k] for k in self._created if k in self._enis}
            self._enis = {k: v for k, v in listed.items() if k not in self._deleted} | kept
            self._reindex()
            self._subnets = {s.id: s for s in subnets}
            self._vpcs = {v.id: v for v in vpcs}
            self._route_tables = list(route_tables)
            self._security_groups = {g.id: g for g in groups}
            self._managed_instances = managed
            self._last_success = now
            self.stable = True
            self.last_error = ""
            self.refresh_count += 1
        return True

    def _subnet_allowed(self, subnet: Subnet) -> bool:
        """ENI-CFG-1 `--subnet-ids-filter` / `--subnet-tags-filter` restrict the subnets we may use."""
        if self._config.subnet_ids_filter and subnet.id not in self._config.subnet_ids_filter:
            return False
        return tags_match(subnet.tags, self._config.subnet_tags_filter)

    # --- reads -----------------------------------------------------------------------------------
    def manages_instance(self, instance_id: str) -> bool:
        """ENI-CFG-1 `--instance-tags-filter`: only matching instances are managed."""
        managed = self._managed_instances
        return managed is None or instance_id in managed

    def enis_of_instance(self, instance_id: str) -> list[NetworkInterface]:
        """Attached ENIs of an instance, by device index."""
        with self._lock:
            found = [self._enis[k] for k in self._by_instance.get(instance_id, ())]
        return sorted(found, key=lambda e: (e.device_index if e.device_index is not None else 1 << 30, e.id))

    def eni(self, eni_id: str) -> NetworkInterface | None:
        return self._enis.get(eni_id)

    def all_enis(self) -> list[NetworkInterface]:
        with self._lock:
            return list(self._enis.values())

    def subnet(self, subnet_id: str) -> Subnet | None:
        return self._subnets.get(subnet_id)

    def subnets(self) -> list[Subnet]:
        return list(self._subnets.values())

    def subnet_map(self) -> dict[str, Subnet]:
        with self._lock:
            return dict(self._subnets)

    def vpc_map(self) -> dict[str, Vpc]:
        return dict(self._vpcs)

    def vpc(self, vpc_id: str) -> Vpc | None:
        return self._vpcs.get(vpc_id)

    def route_tables(self) -> list[RouteTable]:
        return list(self._route_tables)

    def security_groups(self) -> list[SecurityGroup]:
        return list(self._security_groups.values())

    def limits_for(self, instance_type: str) -> InstanceTypeLimits:
        """ENI-CACHE-1 instance limits; `--aws-instance-limit-mapping` overrides the numbers."""
        override = self._config.limit_override(instance_type)
        if override is None:
            return self._limits.limits_for(instance_type)
        try:
            base = self._limits.limits_for(instance_type)
            hypervisor, bare_metal = base.hypervisor, base.bare_metal
        except Ec2Error:
            hypervisor, bare_metal = "", False
        adapters, v4, v6 = override
        return InstanceTypeLimits(instance_type, adapters, v4, v6, hypervisor, bare_metal)

    # --- local updates after mutations -----------------------------------------------------------
    def _reindex(self) -> None:
        self._by_instance = {}
        for eni in self._enis.values():
            if eni.instance_id:
                self._by_instance.setdefault(eni.instance_id, set()).add(eni.id)

    def _unindex(self, eni_id: str) -> None:
        old = self._enis.get(eni_id)
        if old is not None and old.instance_id:
            self._by_instance.get(old.instance_id, set()).discard(eni_id)

    def upsert_eni(self, eni: NetworkInterface, *, created: bool = False) -> None:
        with self._lock:
            self._unindex(eni.id)
            self._enis[eni.id] = eni
            if eni.instance_id:
                self._by_instance.setdefault(eni.instance_id, set()).add(eni.id)
            if created:
                self._created[eni.id] = self._clock.now()

    def forget_eni(self, eni_id: str) -> None:
        with self._lock:
            self._unindex(eni_id)
            self._enis.pop(eni_id, None)
            self._created.pop(eni_id, None)
            self._deleted[eni_id] = self._clock.now()

    def take_subnet_addresses(self, subnet_id: str, count: int) -> None:
        """Adjust AvailableIpAddressCount locally (negative `count` gives addresses back)."""
        with self._lock:
            subnet = self._subnets.get(subnet_id)
            if subnet is not None:
                free = max(subnet.available_ip_address_count - count, 0)
                self._subnets[subnet_id] = dataclasses.replace(subnet, available_ip_address_count=free)

    def seed(
        self,
        *,
        enis: Iterable[NetworkInterface] = (),
        subnets: Iterable[Subnet] = (),
        vpcs: Iterable[Vpc] = (),
        route_tables: Iterable[RouteTable] = (),
        security_groups: Iterable[SecurityGroup] = (),
    ) -> None:
        """Load state directly (planning tests and offline tools); marks the cache stable."""
        with self._lock:
            self._enis = {e.id: e for e in enis}
            self._reindex()
            self._subnets = {s.id: s for s in subnets if self._subnet_allowed(s)}
            self._vpcs = {v.id: v for v in vpcs}
            self._route_tables = list(route_tables)
            self._security_groups = {g.id: g for g in security_groups}
            self._last_attempt = self._last_success = self._clock.now()
            self.stable = True
