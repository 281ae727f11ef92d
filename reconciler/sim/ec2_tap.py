"""Taps on the simulated EC2 that feed `Metrics`: every call's outcome, and which addresses come and go.

The simulator's observer hook gives action + outcome; address identities (for the flapping figure:
allocate-then-release of the same capacity within 5 minutes) come from wrapping the four calls that
add or remove addresses. Everything else passes straight through to the wrapped `Ec2Api`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reconciler.clock import Clock
from reconciler.ec2 import api
from reconciler.sim.metrics import Metrics


class MetricsObserver:
    """`Ec2CallObserver` that counts calls and throttles per action into `Metrics`."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def observe_call(self, operation: str, response_code: str, duration_seconds: float) -> None:
        self.metrics.ec2_call(operation, response_code)

    def observe_rate_limit(self, operation: str, waited_seconds: float) -> None:
        return None


class AddressTap:
    """An `Ec2Api` that reports addresses (/32s and /28 prefixes, one unit each) to `Metrics`."""

    def __init__(self, inner: api.Ec2Api, metrics: Metrics, clock: Clock) -> None:
        self._inner = inner
        self._metrics = metrics
        self._clock = clock
        self._units: dict[str, set[str]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _add(self, eni_id: str, units: Sequence[str]) -> None:
        if units:
            self._units.setdefault(eni_id, set()).update(units)
            self._metrics.assigned(units, self._clock.now())

    def _drop(self, eni_id: str, units: Sequence[str]) -> None:
        held = self._units.get(eni_id)
        if held is not None:
            held.difference_update(units)
        if units:
            self._metrics.released(units, self._clock.now())

    def create_network_interface(self, request: api.CreateNetworkInterfaceRequest) -> api.NetworkInterface:
        eni = self._inner.create_network_interface(request)
        self._add(eni.id, (*eni.secondary_ips, *eni.ipv4_prefixes))
        return eni

    def assign_private_ip_addresses(
        self,
        network_interface_id: str,
        *,
        secondary_private_ip_count: int | None = None,
        private_ips: Sequence[str] = (),
        ipv4_prefix_count: int | None = None,
        ipv4_prefixes: Sequence[str] = (),
    ) -> api.AssignedAddresses:
        got = self._inner.assign_private_ip_addresses(
            network_interface_id,
            secondary_private_ip_count=secondary_private_ip_count,
            private_ips=private_ips,
            ipv4_prefix_count=ipv4_prefix_count,
            ipv4_prefixes=ipv4_prefixes,
        )
        self._add(network_interface_id, (*got.private_ips, *got.ipv4_prefixes))
        return got

    def unassign_private_ip_addresses(
        self, network_interface_id: str, *, private_ips: Sequence[str] = (), ipv4_prefixes: Sequence[str] = ()
    ) -> None:
        self._inner.unassign_private_ip_addresses(
            network_interface_id, private_ips=private_ips, ipv4_prefixes=ipv4_prefixes
        )
        self._drop(network_interface_id, (*private_ips, *ipv4_prefixes))

    def delete_network_interface(self, network_interface_id: str) -> None:
        self._inner.delete_network_interface(network_interface_id)
        self._drop(network_interface_id, tuple(self._units.pop(network_interface_id, ())))
