"""Hypothesis state machine over the simulator: after any sequence of EC2 calls (valid or not)
no address is held twice in a subnet, AvailableIpAddressCount equals the true free count, no ENI or
instance exceeds its type's limits, and prefixes are aligned /28s (/80s) that overlap nothing
(EC2-SIM-1, EC2-SIM-2)."""

from __future__ import annotations

import ipaddress
from collections import Counter

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from reconciler.clock import SimClock
from reconciler.ec2.api import CreateNetworkInterfaceRequest, Ec2Error
from reconciler.ec2.limits import StaticLimits
from reconciler.ec2.sim import SimulatedEc2
from reconciler.ec2.sim.addressing import PLACEMENTS

SUBNETS = (("10.0.0.0/26", "2600:1f18:1:100::/64"), ("10.0.1.0/27", None), ("10.0.2.0/28", None))
TYPES = ("m5.large", "t3.medium", "t2.micro")
LIMITS = StaticLimits()


class SimulatorMachine(RuleBasedStateMachine):
    @initialize(seed=st.integers(0, 2**16), placement=st.sampled_from(PLACEMENTS))
    def build(self, seed: int, placement: str) -> None:
        self.sim = SimulatedEc2(
            SimClock(), seed=seed, throttling=False, record_calls=False, address_placement=placement
        )
        vpc = self.sim.add_vpc("10.0.0.0/16", ipv6_cidr="2600:1f18:1:100::/56")
        self.subnets = [self.sim.add_subnet(vpc, "a", v4, ipv6_cidr=v6) for v4, v6 in SUBNETS]
        self.cidrs = {
            sid: ipaddress.IPv4Network(v4) for sid, (v4, _) in zip(self.subnets, SUBNETS, strict=True)
        }
        self.instances = [self.sim.launch_instance(t, self.subnets[0]) for t in TYPES]
        self.errors: Counter[str] = Counter()

    def _try(self, call: object) -> None:
        try:
            call()  # type: ignore[operator]
        except Ec2Error as err:
            self.errors[err.code] += 1

    def _enis(self) -> list[str]:
        return sorted(self.sim.enis)

    def _detached(self) -> list[str]:
        return sorted(i for i, e in self.sim.enis.items() if e.attachment is None)

    def _secondary(self) -> list[str]:
        """ENIs that are not an instance's primary (device index 0)."""
        return sorted(
            i for i, e in self.sim.enis.items() if e.attachment is None or e.attachment.device_index
        )

    @rule(
        subnet=st.integers(0, 2),
        ips=st.none() | st.integers(0, 12),
        prefixes=st.none() | st.integers(0, 3),
        ipv6=st.none() | st.integers(1, 2),
    )
    def create(self, subnet: int, ips: int | None, prefixes: int | None, ipv6: int | None) -> None:
        request = CreateNetworkInterfaceRequest(
            subnet_id=self.subnets[subnet],
            secondary_private_ip_count=ips,
            ipv4_prefix_count=prefixes,
            ipv6_prefix_count=ipv6,
        )
        self._try(lambda: self.sim.create_network_interface(request))

    @rule(pick=st.integers(0, 10_000), instance=st.integers(0, 2), index=st.integers(1, 4))
    def attach(self, pick: int, instance: int, index: int) -> None:
        enis = self._detached()
        if enis:
            eni = enis[pick % len(enis)]
            self._try(lambda: self.sim.attach_network_interface(eni, self.instances[instance], index))

    @rule(pick=st.integers(0, 10_000))
    def detach_and_delete(self, pick: int) -> None:
        enis = self._secondary()
        if enis:
            eni = self.sim.enis[enis[pick % len(enis)]]
            if eni.attachment is not None:
                self._try(lambda: self.sim.detach_network_interface(eni.attachment.id))  # type: ignore[union-attr]
            self._try(lambda: self.sim.delete_network_interface(eni.id))

    @rule(pick=st.integers(0, 10_000), count=st.integers(1, 12), prefix=st.booleans())
    def assign(self, pick: int, count: int, prefix: bool) -> None:
        enis = self._enis()
        if enis:
            eni = enis[pick % len(enis)]
            if prefix:
                self._try(lambda: self.sim.assign_private_ip_addresses(eni, ipv4_prefix_count=1 + count % 3))
            else:
                self._try(lambda: self.sim.assign_private_ip_addresses(eni, secondary_private_ip_count=count))

    @rule(pick=st.integers(0, 10_000), offset=st.integers(0, 63))
    def assign_explicit(self, pick: int, offset: int) -> None:
        enis = self._enis()
        if enis:
            eni = self.sim.enis[enis[pick % len(enis)]]
            net = self.cidrs[eni.subnet_id]
            ip = str(net[offset % net.num_addresses])
            self._try(lambda: self.sim.assign_private_ip_addresses(eni.id, private_ips=[ip]))

    @rule(pick=st.integers(0, 10_000), which=st.integers(0, 100))
    def unassign(self, pick: int, which: int) -> None:
        enis = self._enis()
        if enis:
            eni = self.sim.enis[enis[pick % len(enis)]]
            if eni.prefixes and which % 2:
                prefix = eni.prefixes[which % len(eni.prefixes)]
                self._try(lambda: self.sim.unassign_private_ip_addresses(eni.id, ipv4_prefixes=[prefix]))
            elif eni.secondary_ips:
                ip = eni.secondary_ips[which % len(eni.secondary_ips)]
                self._try(lambda: self.sim.unassign_private_ip_addresses(eni.id, private_ips=[ip]))

    @rule(pick=st.integers(0, 10_000))
    def ipv6_prefix(self, pick: int) -> None:
        enis = self._enis()
        if enis:
            eni = enis[pick % len(enis)]
            self._try(lambda: self.sim.assign_ipv6_prefixes(eni, 1))

    @invariant()
    def addresses_are_unique_aligned_and_counted(self) -> None:
        if not hasattr(self, "sim"):
            return
        enis = self.sim.describe_network_interfaces()
        for subnet in self.sim.describe_subnets():
            net = self.cidrs[subnet.id]
            mine = [e for e in enis if e.subnet_id == subnet.id]
            ips = [ipaddress.IPv4Address(ip) for e in mine for ip in e.private_ips]
            prefixes = [ipaddress.IPv4Network(p) for e in mine for p in e.ipv4_prefixes]
            covered = ips + [a for p in prefixes for a in p]
            assert len(covered) == len(set(covered)), "an address is held twice"
            assert all(a in net for a in covered)
            reserved = {net[0], net[1], net[2], net[3], net[-1]}
            assert not reserved & set(covered), "a reserved address was handed out"
            assert all(p.prefixlen == 28 and int(p.network_address) % 16 == 0 for p in prefixes)
            assert subnet.available_ip_address_count == net.num_addresses - 5 - len(covered)
            v6 = [ipaddress.IPv6Network(p) for e in mine for p in e.ipv6_prefixes]
            assert len(v6) == len(set(v6)) and all(p.prefixlen == 80 for p in v6)
            if v6:
                assert subnet.ipv6_cidr_blocks
                assert all(p.subnet_of(ipaddress.IPv6Network(subnet.ipv6_cidr_blocks[0])) for p in v6)

    @invariant()
    def limits_hold(self) -> None:
        if not hasattr(self, "sim"):
            return
        enis = self.sim.describe_network_interfaces()
        for instance in self.sim.describe_instances():
            limits = LIMITS.limits_for(instance.instance_type)
            attached = [e for e in enis if e.instance_id == instance.id]
            assert len(attached) <= limits.max_network_interfaces
            assert len({e.device_index for e in attached}) == len(attached)
            for eni in attached:
                assert eni.address_slots_used <= limits.ipv4_per_interface
                assert len(eni.ipv6_prefixes) <= limits.ipv6_per_interface


TestSimulatorMachine = SimulatorMachine.TestCase
TestSimulatorMachine.settings = settings(
    max_examples=60, stateful_step_count=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
