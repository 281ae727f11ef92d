"""`SimulatedEc2`: an in-process EC2 behind the `Ec2Api` port that enforces SPEC section 3.

    clock = SimClock()
    sim = SimulatedEc2(clock, seed=7, latency=TYPICAL_LATENCY, sleep=clock.advance)
    world = build_world(sim, azs=("us-east-1a",), instances_per_az=3)   # see world.py

Every port call: takes a token from the action's bucket (EC2-SIM-5, else RequestLimitExceeded),
consults the fault injector (EC2-SIM-6), applies its effect atomically (all checks pass before any
state changes), and is recorded in `sim.calls` with its simulated start and finish times (see
calls.py for how latency reaches the caller). Admin methods (`add_*`, `launch_instance`,
`terminate_instance`, `allocate_address`) build the world; they are not EC2 calls, so they are
neither throttled nor recorded. Thread-safe: one lock around state; `sleep` runs outside it.

Knobs: `seed`; `latency` + `sleep` (calls.py); `visibility_delay` (eventual consistency);
`throttling`; `faults` (faults.py); `paginate_describes` (a token and a latency per 1,000-item page,
as Boto3Ec2 pages); `address_placement` "random" (EC2-like scattering, worst case for /28 prefixes)
or "packed" (best case); `record_calls` (off for very long runs; `call_counts` is always kept).
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar, cast

from reconciler.clock import Clock
from reconciler.ec2 import api
from reconciler.ec2.api import DESCRIBE_PAGE_SIZES, Ec2Error, Filters, make_error
from reconciler.ec2.limits import StaticLimits
from reconciler.ec2.observe import OK, Ec2CallObserver, NullObserver
from reconciler.ec2.sim.addressing import AddressError
from reconciler.ec2.sim.calls import CallRecord, LatencyModel
from reconciler.ec2.sim.faults import FaultInjector, Phase
from reconciler.ec2.sim.filters import check_filters, matches
from reconciler.ec2.sim.resources import SimEni
from reconciler.ec2.sim.state import SimState, not_found
from reconciler.ec2.sim.throttle import AwsThrottle

T = TypeVar("T")


def _fail(code: str, message: str) -> Ec2Error:
    return make_error(code, message)


class SimulatedEc2(SimState):
    """See the module docstring. Construct, build a world, then use it as an `Ec2Api`."""

    def __init__(
        self,
        clock: Clock,
        *,
        seed: int = 0,
        limits: StaticLimits | None = None,
        latency: LatencyModel | None = None,
        sleep: Callable[[float], None] | None = None,
        visibility_delay: float = 0.0,
        throttling: bool = True,
        observer: Ec2CallObserver | None = None,
        record_calls: bool = True,
        paginate_describes: bool = True,
        address_placement: str = "random",
    ) -> None:
        super().__init__(clock, random.Random(seed), limits or StaticLimits(), address_placement)
        self.latency = latency or LatencyModel()
        self.visibility_delay = visibility_delay
        self.faults = FaultInjector(random.Random(seed + 1))
        self.throttle = AwsThrottle(clock, enabled=throttling)
        self.calls: list[CallRecord] = []
        self.call_counts: Counter[tuple[str, str]] = Counter()
        self.record_calls = record_calls
        self._sleep = sleep
        self._observer: Ec2CallObserver = observer or NullObserver()
        self._latency_rng = random.Random(seed + 2)
        self._lock = threading.RLock()
        self._client_tokens: dict[str, tuple[tuple[object, ...], str]] = {}
        self.paginate_describes = paginate_describes
        self._pages = 1  # requests the current call took (set by paginated describes)

    # --- call machinery --------------------------------------------------------------------------
    @property
    def last_call(self) -> CallRecord | None:
        return self.calls[-1] if self.calls else None

    def latency_for(self, action: str) -> float:
        """The nominal latency of `action` (without jitter)."""
        return self.latency.per_action.get(action, self.latency.default)

    def _call(
        self, action: str, params: Mapping[str, object], op: Callable[[], T], *, unfiltered: bool = False
    ) -> T:
        with self._lock:
            start = self._clock.now()
            latency = self.latency.latency_for(action, self._latency_rng)
            outcome = OK
            result: T | None = None
            error: Ec2Error | None = None
            self._pages = 1
            unpaginated = unfiltered and not self.paginate_describes
            try:
                if not self.throttle.admit(action, unfiltered=unpaginated):
                    raise self._throttled(action)
                self._inject(action, "before")
                result = op()
                if self._pages > 1 and not self.throttle.admit(action, requests=self._pages - 1):
                    raise self._throttled(action)  # a later page was throttled
                self._inject(action, "after")
            except AddressError as err:
                error = make_error(err.code, err.message)
            except Ec2Error as err:
                error = err
            if error is not None:
                error.action = action
                outcome = error.code
            latency *= self._pages
            self.call_counts[(action, outcome)] += 1
            if self.record_calls:
                self.calls.append(
                    CallRecord(action, dict(params), outcome, start, start + latency, self._pages)
                )
            self._observer.observe_call(action, outcome, latency)
        if self._sleep is not None and latency > 0:
            self._sleep(latency)
        if error is not None:
            raise error
        return cast(T, result)  # op() returned: any error was raised just above

    def _describe(
        self,
        action: str,
        params: Mapping[str, object],
        op: Callable[[], list[T]],
        *,
        by_ids: bool,
        unfiltered: bool = False,
    ) -> list[T]:
        return self._call(
            action, params, lambda: self._paged(action, op(), by_ids=by_ids), unfiltered=unfiltered
        )

    @staticmethod
    def _throttled(action: str) -> api.Throttled:
        return api.Throttled(
            f"Request limit exceeded for {action}; retry with exponential backoff.",
            code="RequestLimitExceeded",
        )

    def _paged(self, action: str, items: list[T], *, by_ids: bool) -> list[T]:
        """Charge one request per page, as Boto3Ec2's paginated describe does (not for ID lists)."""
        size = DESCRIBE_PAGE_SIZES.get(action)
        if self.paginate_describes and size and not by_ids:
            self._pages = max(1, -(-len(items) // size))
        return items

    def _inject(self, action: str, phase: Phase) -> None:
        code = self.faults.draw(action, phase)
        if code is not None:
            raise make_error(
                code, f"Injected {code} for {action}.", http_status=503 if "Limit" in code else None
            )

    # --- describe --------------------------------------------------------------------------------
    def describe_network_interfaces(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[api.NetworkInterface]:
        def op() -> list[api.NetworkInterface]:
            check_filters("DescribeNetworkInterfaces", filters)
            now = self._clock.now()
            if ids:
                enis = [self._visible_eni(i, now) for i in ids]
            else:
                enis = [e for e in self._eni_candidates(filters) if e.visible_at <= now]
            if not filters:
                return [e.view() for e in enis]
            return [e.view() for e in enis if matches(filters, self._eni_attributes(e), e.tags)]

        return self._describe(
            "DescribeNetworkInterfaces", {"ids": list(ids), "filters": dict(filters or {})}, op,
            by_ids=bool(ids), unfiltered=not ids and not filters,
        )  # fmt: skip

    def describe_subnets(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[api.Subnet]:
        def op() -> list[api.Subnet]:
            check_filters("DescribeSubnets", filters)
            subnets = [self._subnet(i) for i in ids] if ids else list(self.subnets.values())
            return [
                s.view()
                for s in subnets
                if matches(
                    filters,
                    {"subnet-id": [s.id], "vpc-id": [s.vpc_id], "availability-zone": [s.availability_zone]},
                    s.tags,
                )
            ]

        return self._describe(
            "DescribeSubnets", {"ids": list(ids), "filters": dict(filters or {})}, op, by_ids=bool(ids)
        )

    def describe_vpcs(self, *, ids: Sequence[str] = (), filters: Filters | None = None) -> list[api.Vpc]:
        def op() -> list[api.Vpc]:
            check_filters("DescribeVpcs", filters)
            vpcs = [self._vpc(i) for i in ids] if ids else list(self.vpcs.values())
            return [v.view() for v in vpcs if matches(filters, {"vpc-id": [v.id]}, v.tags)]

        return self._describe(
            "DescribeVpcs", {"ids": list(ids), "filters": dict(filters or {})}, op, by_ids=bool(ids)
        )

    def describe_route_tables(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[api.RouteTable]:
        def op() -> list[api.RouteTable]:
            check_filters("DescribeRouteTables", filters)
            tables = [self._route_table(i) for i in ids] if ids else list(self.route_tables.values())
            return [
                t.view()
                for t in tables
                if matches(
                    filters,
                    {
                        "route-table-id": [t.id],
                        "vpc-id": [t.vpc_id],
                        "association.subnet-id": t.subnet_ids,
                        "association.main": ["true" if t.main else "false"],
                    },
                    t.tags,
                )
            ]

        return self._describe(
            "DescribeRouteTables", {"ids": list(ids), "filters": dict(filters or {})}, op, by_ids=bool(ids)
        )

    def describe_security_groups(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[api.SecurityGroup]:
        def op() -> list[api.SecurityGroup]:
            check_filters("DescribeSecurityGroups", filters)
            groups = [self._security_group(i) for i in ids] if ids else list(self.security_groups.values())
            return [
                g.view()
                for g in groups
                if matches(
                    filters, {"group-id": [g.id], "group-name": [g.name], "vpc-id": [g.vpc_id]}, g.tags
                )
            ]

        return self._describe(
            "DescribeSecurityGroups", {"ids": list(ids), "filters": dict(filters or {})}, op,
            by_ids=bool(ids), unfiltered=not ids and not filters,
        )  # fmt: skip

    def describe_instance_types(self, instance_types: Sequence[str] = ()) -> list[api.InstanceTypeLimits]:
        def op() -> list[api.InstanceTypeLimits]:
            return self.limits.select(instance_types)

        return self._describe(
            "DescribeInstanceTypes", {"instance_types": list(instance_types)}, op, by_ids=bool(instance_types)
        )

    def describe_instances(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[api.Instance]:
        def op() -> list[api.Instance]:
            check_filters("DescribeInstances", filters)
            instances = [self._instance(i) for i in ids] if ids else list(self.instances.values())
            return [
                self._instance_view(inst)
                for inst in instances
                if matches(
                    filters,
                    {
                        "instance-id": [inst.id],
                        "instance-type": [inst.instance_type],
                        "vpc-id": [inst.vpc_id],
                        "subnet-id": [inst.subnet_id],
                        "availability-zone": [inst.availability_zone],
                    },
                    inst.tags,
                )
            ]

        return self._describe(
            "DescribeInstances", {"ids": list(ids), "filters": dict(filters or {})}, op, by_ids=bool(ids)
        )

    def describe_tags(self, *, filters: Filters | None = None) -> list[api.TagDescription]:
        def op() -> list[api.TagDescription]:
            check_filters("DescribeTags", filters)
            found = []
            for resource_id, resource_type, tags in self._taggables():
                for key, value in tags.items():
                    attrs = {
                        "resource-id": [resource_id],
                        "resource-type": [resource_type],
                        "key": [key],
                        "value": [value],
                    }
                    if matches(filters, attrs, {}):
                        found.append(api.TagDescription(resource_id, resource_type, key, value))
            return found

        return self._describe("DescribeTags", {"filters": dict(filters or {})}, op, by_ids=False)

    def describe_addresses(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[api.Address]:
        def op() -> list[api.Address]:
            check_filters("DescribeAddresses", filters)
            addresses = [self._address(i) for i in ids] if ids else list(self.addresses.values())
            return [
                a.view()
                for a in addresses
                if matches(
                    filters,
                    {
                        "allocation-id": [a.allocation_id],
                        "public-ip": [a.public_ip],
                        "network-interface-id": [a.eni_id] if a.eni_id else [],
                    },
                    a.tags,
                )
            ]

        return self._describe(
            "DescribeAddresses", {"ids": list(ids), "filters": dict(filters or {})}, op, by_ids=bool(ids)
        )

    # --- ENI lifecycle ---------------------------------------------------------------------------
    def create_network_interface(self, request: api.CreateNetworkInterfaceRequest) -> api.NetworkInterface:
        def op() -> api.NetworkInterface:
            fingerprint = _fingerprint(request)
            if request.client_token:
                known = self._client_tokens.get(request.client_token)
                if known is not None:
                    if known[0] != fingerprint:
                        raise _fail(
                            "IdempotentParameterMismatch",
                            f"Client token {request.client_token!r} was used before with other parameters.",
                        )
                    return self._eni_view_or_gone(known[1])
            eni = self.new_eni(
                request.subnet_id,
                security_group_ids=request.security_group_ids,
                description=request.description,
                secondary_count=request.secondary_private_ip_count or 0,
                prefix_count=request.ipv4_prefix_count or 0,
                ipv6_prefix_count=request.ipv6_prefix_count or 0,
                tags=request.tags,
                visible_at=self._clock.now() + self.visibility_delay,
                exclusive_counts=request.secondary_private_ip_count is not None
                and request.ipv4_prefix_count is not None,
            )
            if request.client_token:
                self._client_tokens[request.client_token] = (fingerprint, eni.id)
            return eni.view()

        return self._call(
            "CreateNetworkInterface",
            {
                "subnet_id": request.subnet_id,
                "secondary_private_ip_count": request.secondary_private_ip_count,
                "ipv4_prefix_count": request.ipv4_prefix_count,
                "ipv6_prefix_count": request.ipv6_prefix_count,
                "client_token": request.client_token,
            },
            op,
        )

    def attach_network_interface(self, network_interface_id: str, instance_id: str, device_index: int) -> str:
        return self._call(
            "AttachNetworkInterface",
            {"eni": network_interface_id, "instance": instance_id, "device_index": device_index},
            lambda: self.attach(network_interface_id, instance_id, device_index),
        )

    def set_delete_on_termination(
        self, network_interface_id: str, attachment_id: str, delete_on_termination: bool
    ) -> None:
        def op() -> None:
            eni = self._eni(network_interface_id)
            if eni.attachment is None or eni.attachment.id != attachment_id:
                raise not_found("InvalidAttachmentID.NotFound", f"Attachment {attachment_id}")
            eni.attachment.delete_on_termination = delete_on_termination
            eni.touch()

        self._call(
            "ModifyNetworkInterfaceAttribute",
            {"eni": network_interface_id, "delete_on_termination": delete_on_termination},
            op,
        )

    def detach_network_interface(self, attachment_id: str, *, force: bool = False) -> None:
        self._call(
            "DetachNetworkInterface", {"attachment": attachment_id}, lambda: self.detach(attachment_id)
        )

    def delete_network_interface(self, network_interface_id: str) -> None:
        self._call(
            "DeleteNetworkInterface",
            {"eni": network_interface_id},
            lambda: self.delete_eni(network_interface_id),
        )

    # --- addresses -------------------------------------------------------------------------------
    def assign_private_ip_addresses(
        self,
        network_interface_id: str,
        *,
        secondary_private_ip_count: int | None = None,
        private_ips: Sequence[str] = (),
        ipv4_prefix_count: int | None = None,
        ipv4_prefixes: Sequence[str] = (),
    ) -> api.AssignedAddresses:
        return self._call(
            "AssignPrivateIpAddresses",
            {
                "eni": network_interface_id,
                "count": secondary_private_ip_count,
                "ips": len(private_ips),
                "prefix_count": ipv4_prefix_count,
                "prefixes": len(ipv4_prefixes),
            },
            lambda: self.assign_ipv4(
                network_interface_id, secondary_private_ip_count, list(private_ips), ipv4_prefix_count,
                list(ipv4_prefixes),
            ),
        )  # fmt: skip

    def unassign_private_ip_addresses(
        self, network_interface_id: str, *, private_ips: Sequence[str] = (), ipv4_prefixes: Sequence[str] = ()
    ) -> None:
        self._call(
            "UnassignPrivateIpAddresses",
            {"eni": network_interface_id, "ips": len(private_ips), "prefixes": len(ipv4_prefixes)},
            lambda: self.unassign_ipv4(network_interface_id, list(private_ips), list(ipv4_prefixes)),
        )

    def assign_ipv6_prefixes(self, network_interface_id: str, count: int = 1) -> tuple[str, ...]:
        return self._call(
            "AssignIpv6Addresses",
            {"eni": network_interface_id, "prefix_count": count},
            lambda: self.assign_ipv6(network_interface_id, count),
        )

    # --- tags and elastic IPs --------------------------------------------------------------------
    def create_tags(self, resource_ids: Sequence[str], tags: api.Tags) -> None:
        def op() -> None:
            targets = [self._tag_target(rid) for rid in resource_ids]
            for tag_map, eni in targets:
                tag_map.update(tags)
                if eni is not None:
                    eni.touch()

        self._call("CreateTags", {"resources": list(resource_ids), "tags": dict(tags)}, op)

    def delete_tags(self, resource_ids: Sequence[str], keys: Sequence[str]) -> None:
        def op() -> None:
            targets = [self._tag_target(rid) for rid in resource_ids]
            for tag_map, eni in targets:
                for key in keys:
                    tag_map.pop(key, None)
                if eni is not None:
                    eni.touch()

        self._call("DeleteTags", {"resources": list(resource_ids), "keys": list(keys)}, op)

    def associate_address(
        self, allocation_id: str, network_interface_id: str, *, private_ip: str | None = None
    ) -> str:
        return self._call(
            "AssociateAddress",
            {"allocation": allocation_id, "eni": network_interface_id},
            lambda: self.associate(allocation_id, network_interface_id, private_ip),
        )

    # --- helpers ---------------------------------------------------------------------------------
    def _eni_candidates(self, filters: Filters | None) -> list[SimEni]:
        """Narrow by instance through the attachment index, so per-node describes stay O(ENIs of
        the node) at thousands of nodes; `matches` still applies every filter afterwards."""
        instance_ids = (filters or {}).get("attachment.instance-id")
        if instance_ids and not any(c in v for v in instance_ids for c in "*?"):
            return [
                self.enis[eni_id]
                for instance_id in dict.fromkeys(instance_ids)
                if instance_id in self.instances
                for eni_id in self.instances[instance_id].enis_by_index.values()
            ]
        return list(self.enis.values())

    def _visible_eni(self, eni_id: str, now: float) -> SimEni:
        eni = self.enis.get(eni_id)
        if eni is None or eni.visible_at > now:
            raise not_found("InvalidNetworkInterfaceID.NotFound", f"Network interface {eni_id}")
        return eni

    def _eni_view_or_gone(self, eni_id: str) -> api.NetworkInterface:
        eni = self.enis.get(eni_id)
        if eni is None:
            raise not_found("InvalidNetworkInterfaceID.NotFound", f"Network interface {eni_id}")
        return eni.view()


def _fingerprint(request: api.CreateNetworkInterfaceRequest) -> tuple[object, ...]:
    return (
        request.subnet_id,
        tuple(sorted(request.security_group_ids)),
        request.description,
        request.secondary_private_ip_count,
        request.ipv4_prefix_count,
        request.ipv6_prefix_count,
        tuple(sorted(request.tags.items())),
    )
