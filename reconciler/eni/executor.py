"""Performs planned actions through `Ec2Api` and keeps the cache in step (the I/O edge of the engine).

Each method does one action, applies its effect to the cache at once (so the next plan sees it before
the next refresh), triggers a cache refresh (ENI-CACHE-2), counts it for ENI-MET-1 and logs one
structured line. EC2 errors propagate to the caller, which turns them into a per-node sentence. In
dry-run mode every method logs what it would do, with the reason, and changes nothing.
"""

from __future__ import annotations

import dataclasses
import logging

from reconciler.clock import Clock
from reconciler.ec2.api import Ec2Api, Ec2Error, InvalidParameter, NetworkInterface
from reconciler.eni.allocate import AssignIps, AssignPrefixes
from reconciler.eni.cache import Ec2Cache
from reconciler.eni.create import CreateEni
from reconciler.eni.ipv6 import AssignIpv6Prefix
from reconciler.eni.log import log_event
from reconciler.eni.release import ReleaseAction
from reconciler.eni.results import Counters, OpTiming
from reconciler.eni.static_ip import AssociateStaticIp
from reconciler.eni.view import NodeError

MAX_ATTACH_TRIES = 3


def _index_conflict(err: Ec2Error) -> bool:
    """EC2 says the device index is taken (InvalidParameterValue mentioning the device index)."""
    return isinstance(err, InvalidParameter) and "device index" in str(err).lower()


class Executor:
    def __init__(self, ec2: Ec2Api, cache: Ec2Cache, clock: Clock, counters: Counters, dry_run: bool) -> None:
        self._ec2 = ec2
        self._cache = cache
        self._clock = clock
        self._counters = counters
        self.dry_run = dry_run

    def _timed(self, kind: str, subnet_id: str, started: float, status: str) -> None:
        self._counters.time(OpTiming(kind, status, subnet_id, self._clock.now() - started))

    def _dry(self, action: str, node: str, reason: str, **fields: object) -> str:
        log_event("dry_run", node=node, action=action, reason=reason, **fields)
        return f"dry-run {action} " + " ".join(f"{k}={v}" for k, v in fields.items()) + f" ({reason})"

    # --- IPv4 ------------------------------------------------------------------------------------
    def assign(self, node: str, action: AssignIps | AssignPrefixes) -> tuple[int, str]:
        """ENI-ALLOC-3/4: returns (addresses added, action line)."""
        prefix = isinstance(action, AssignPrefixes)
        name = "assign_prefixes" if prefix else "assign_ips"
        if self.dry_run:
            return 0, self._dry(
                name, node, action.reason, eni=action.eni_id, subnet=action.subnet_id, count=action.count
            )
        started = self._clock.now()
        kind = "prefix" if prefix else "ip"
        try:
            if prefix:
                got = self._ec2.assign_private_ip_addresses(action.eni_id, ipv4_prefix_count=action.count)
            else:
                got = self._ec2.assign_private_ip_addresses(
                    action.eni_id, secondary_private_ip_count=action.count
                )
        except Ec2Error as err:
            self._timed(kind, action.subnet_id, started, err.code)
            raise
        self._timed(kind, action.subnet_id, started, "success")
        eni = self._cache.eni(action.eni_id)
        if eni is not None:
            self._cache.upsert_eni(
                dataclasses.replace(
                    eni,
                    private_ips=eni.private_ips
                    + tuple(ip for ip in got.private_ips if ip not in eni.private_ips),
                    ipv4_prefixes=eni.ipv4_prefixes
                    + tuple(p for p in got.ipv4_prefixes if p not in eni.ipv4_prefixes),
                )
            )
        added = len(got.private_ips) + 16 * len(got.ipv4_prefixes)
        self._cache.take_subnet_addresses(action.subnet_id, added)
        self._cache.trigger()
        self._counters.add("allocation_ops", action.subnet_id)
        log_event(
            name,
            node=node,
            eni=action.eni_id,
            subnet=action.subnet_id,
            action=name,
            reason=action.reason,
            count=action.count,
            addresses=added,
        )
        return added, f"{name} eni={action.eni_id} count={action.count} ({action.reason})"

    def release(self, node: str, action: ReleaseAction) -> tuple[int, str]:
        """ENI-REL-2: UnassignPrivateIpAddresses with /32s or whole /28 prefixes."""
        fields = {
            "eni": action.eni_id,
            "subnet": action.subnet_id,
            "ips": ",".join(action.private_ips),
            "prefixes": ",".join(action.ipv4_prefixes),
        }
        if self.dry_run:
            return 0, self._dry("release", node, action.reason, **fields)
        started = self._clock.now()
        try:
            self._ec2.unassign_private_ip_addresses(
                action.eni_id, private_ips=action.private_ips, ipv4_prefixes=action.ipv4_prefixes
            )
        except Ec2Error as err:
            self._timed("release", action.subnet_id, started, err.code)
            raise
        self._timed("release", action.subnet_id, started, "success")
        eni = self._cache.eni(action.eni_id)
        if eni is not None:
            self._cache.upsert_eni(
                dataclasses.replace(
                    eni,
                    private_ips=tuple(ip for ip in eni.private_ips if ip not in action.private_ips),
                    ipv4_prefixes=tuple(p for p in eni.ipv4_prefixes if p not in action.ipv4_prefixes),
                )
            )
        self._cache.take_subnet_addresses(action.subnet_id, -action.addresses)
        self._cache.trigger()
        self._counters.add("release_ops", action.subnet_id)
        log_event("release", node=node, action="release", reason=action.reason, **fields)
        described = " ".join(f"{k}={v}" for k, v in fields.items() if v)
        return action.addresses, f"release {described} ({action.reason})"

    # --- IPv6 ------------------------------------------------------------------------------------
    def assign_ipv6(self, node: str, action: AssignIpv6Prefix) -> str:
        """ENI-V6-1: one /80 on an existing ENI."""
        if self.dry_run:
            return self._dry(
                "assign_ipv6_prefix", node, action.reason, eni=action.eni_id, subnet=action.subnet_id
            )
        started = self._clock.now()
        try:
            prefixes = self._ec2.assign_ipv6_prefixes(action.eni_id, 1)
        except Ec2Error as err:
            self._timed("ipv6-prefix", action.subnet_id, started, err.code)
            raise
        self._timed("ipv6-prefix", action.subnet_id, started, "success")
        eni = self._cache.eni(action.eni_id)
        if eni is not None:
            self._cache.upsert_eni(
                dataclasses.replace(eni, ipv6_prefixes=eni.ipv6_prefixes + tuple(prefixes))
            )
        self._cache.trigger()
        self._counters.add("allocation_ops", action.subnet_id)
        log_event(
            "assign_ipv6_prefix",
            node=node,
            eni=action.eni_id,
            subnet=action.subnet_id,
            action="assign_ipv6_prefix",
            reason=action.reason,
            prefixes=",".join(prefixes),
        )
        return f"assign_ipv6_prefix eni={action.eni_id} ({action.reason})"

    # --- ENI creation ----------------------------------------------------------------------------
    def create(self, action: CreateEni) -> tuple[NetworkInterface | None, str]:
        """ENI-CREATE-3/4 + ENI-PARAM-8: create with the allocation, attach, delete-on-termination.

        A failed attach deletes the new ENI (whatever cannot be deleted is left to GC, ENI-GC-1).
        """
        req = action.request
        fields = {
            "subnet": req.subnet_id,
            "index": action.device_index,
            "step": action.subnet_step,
            "ips": req.secondary_private_ip_count,
            "prefixes": req.ipv4_prefix_count,
            "ipv6_prefixes": req.ipv6_prefix_count,
            "token": req.client_token,
        }
        if self.dry_run:
            return None, self._dry("create_eni", action.node, action.reason, **fields)
        started = self._clock.now()
        try:
            eni = self._ec2.create_network_interface(req)
        except Ec2Error as err:
            self._timed("interface", req.subnet_id, started, err.code)
            raise
        if eni.instance_id == action.instance_id and eni.device_index is not None:
            attached = eni  # the ClientToken replayed a create whose attach already happened
        elif eni.instance_id:
            raise NodeError(
                f"ClientToken {req.client_token} returned ENI {eni.id}, "
                f"already attached to {eni.instance_id}; the operator will retry with a new token"
            )
        else:
            self._cache.upsert_eni(eni, created=True)
            attached = self._attach(action, eni)
        self._cache.upsert_eni(attached, created=True)
        self._cache.take_subnet_addresses(
            req.subnet_id, attached.address_slots_used + 15 * len(attached.ipv4_prefixes)
        )
        self._cache.trigger()
        self._timed("interface", req.subnet_id, started, "success")
        self._counters.add("interface_creation_ops", req.subnet_id)
        log_event(
            "create_eni",
            node=action.node,
            eni=attached.id,
            action="create_eni",
            reason=action.reason,
            **{**fields, "index": attached.device_index},
        )
        return (
            attached,
            f"create_eni eni={attached.id} index={attached.device_index} subnet={req.subnet_id} "
            f"step={action.subnet_step} ({action.reason})",
        )

    def _attach(self, action: CreateEni, eni: NetworkInterface) -> NetworkInterface:
        index = action.device_index
        taken = {e.device_index for e in self._cache.enis_of_instance(action.instance_id)}
        for _ in range(MAX_ATTACH_TRIES):
            try:
                attachment = self._ec2.attach_network_interface(eni.id, action.instance_id, index)
                break
            except Ec2Error as err:
                if _index_conflict(err):
                    taken.add(index)
                    while index in taken:
                        index += 1  # ENI-CREATE-2: retry with the next index
                    continue
                self._delete_after_failed_attach(action.node, eni, err)
                raise
        else:
            self._delete_after_failed_attach(action.node, eni, None)
            raise NodeError(
                f"could not attach a new ENI to instance {action.instance_id}: device indexes "
                f"{action.device_index}..{index} were all in use; the operator will retry"
            )
        dot: bool | None = None
        if action.delete_on_termination:
            try:
                self._ec2.set_delete_on_termination(eni.id, attachment, True)
                dot = True
            except Ec2Error as err:
                log_event(
                    "delete_on_termination_failed",
                    logging.WARNING,
                    node=action.node,
                    eni=eni.id,
                    action="modify_attachment",
                    reason=str(err),
                )
        return dataclasses.replace(
            eni,
            instance_id=action.instance_id,
            device_index=index,
            attachment_id=attachment,
            status="in-use",
            delete_on_termination=dot if dot is not None else eni.delete_on_termination,
        )

    def _delete_after_failed_attach(self, node: str, eni: NetworkInterface, err: Ec2Error | None) -> None:
        """ENI-CREATE-4: never leave a created ENI behind when its attach failed."""
        reason = f"attach failed: {err}" if err else "attach failed"
        try:
            self._ec2.delete_network_interface(eni.id)
            self._cache.forget_eni(eni.id)
            log_event("delete_eni", node=node, eni=eni.id, action="delete_eni", reason=reason)
        except Ec2Error as derr:
            log_event(
                "delete_eni_failed",
                logging.WARNING,
                node=node,
                eni=eni.id,
                action="delete_eni",
                reason=f"{reason}; delete failed too ({derr.code}); GC will remove it",
            )

    # --- static IP -------------------------------------------------------------------------------
    def associate(self, node: str, action: AssociateStaticIp) -> str:
        """ENI-PARAM-9."""
        if self.dry_run:
            return self._dry(
                "associate_address", node, action.reason, eni=action.eni_id, allocation=action.allocation_id
            )
        self._ec2.associate_address(action.allocation_id, action.eni_id)
        eni = self._cache.eni(action.eni_id)
        if eni is not None:
            self._cache.upsert_eni(dataclasses.replace(eni, public_ip=action.public_ip))
        log_event(
            "associate_address",
            node=node,
            eni=action.eni_id,
            action="associate_address",
            reason=action.reason,
            allocation=action.allocation_id,
        )
        return f"associate_address eni={action.eni_id} allocation={action.allocation_id} ({action.reason})"
