"""Client-side EC2 rate limiting for the simulated operator, and the proxy that applies it.

Two limiters are compared (issue 7):
- `GlobalLimiter`: Cilium's `--limit-ipam-api-qps` / `--limit-ipam-api-burst` -- one token bucket for
  every call (reconciler.ec2.ratelimit.ClientRateLimiter; qps 4 / burst 20 are Cilium's defaults).
- `reconciler.ec2.aws_buckets_limiter.AwsBucketsLimiter`: our default, the very limiter the operator
  ships (`--ec2-api-rate-limiter=aws-buckets`) -- one client bucket per action with AWS's own sizes
  (EC2-SIM-5), so the operator spends exactly the account's budget and never waits for a token AWS
  would give it, nor sends a call AWS would throttle.

`LimitedEc2` takes a token before every call (sleeping on the worker clock if needed), lets the
simulated EC2 apply the call's latency on the same worker clock, and tells the limiter about
throttles (adaptive limiters back off).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from reconciler.clock import Clock
from reconciler.ec2 import api
from reconciler.ec2.ratelimit import ClientRateLimiter

ACTION_OF_METHOD: dict[str, str] = {
    "describe_network_interfaces": "DescribeNetworkInterfaces",
    "describe_subnets": "DescribeSubnets",
    "describe_vpcs": "DescribeVpcs",
    "describe_route_tables": "DescribeRouteTables",
    "describe_security_groups": "DescribeSecurityGroups",
    "describe_instance_types": "DescribeInstanceTypes",
    "describe_instances": "DescribeInstances",
    "describe_tags": "DescribeTags",
    "describe_addresses": "DescribeAddresses",
    "create_network_interface": "CreateNetworkInterface",
    "attach_network_interface": "AttachNetworkInterface",
    "set_delete_on_termination": "ModifyNetworkInterfaceAttribute",
    "detach_network_interface": "DetachNetworkInterface",
    "delete_network_interface": "DeleteNetworkInterface",
    "assign_private_ip_addresses": "AssignPrivateIpAddresses",
    "unassign_private_ip_addresses": "UnassignPrivateIpAddresses",
    "assign_ipv6_prefixes": "AssignIpv6Addresses",
    "create_tags": "CreateTags",
    "delete_tags": "DeleteTags",
    "associate_address": "AssociateAddress",
}


class Limiter(Protocol):
    def acquire(self, action: str) -> float: ...

    def on_throttled(self, action: str) -> None: ...

    def on_success(self, action: str) -> None: ...


class GlobalLimiter:
    """One bucket for all calls (Cilium's limiter)."""

    def __init__(
        self, clock: Clock, sleep: Callable[[float], None], qps: float, burst: int, adaptive: bool
    ) -> None:
        self._limiter = ClientRateLimiter(clock, sleep, qps=qps, burst=burst, adaptive=adaptive)

    def acquire(self, action: str) -> float:
        return self._limiter.acquire()

    def on_throttled(self, action: str) -> None:
        self._limiter.on_throttled()

    def on_success(self, action: str) -> None:
        self._limiter.on_success()


class LimitedEc2:
    """An `Ec2Api` proxy: a client token before each call, throttle feedback after it."""

    def __init__(self, inner: api.Ec2Api, limiter: Limiter) -> None:
        self._inner = inner
        self._limiter = limiter

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._inner, name)
        action = ACTION_OF_METHOD.get(name)
        if action is None or not callable(target):
            return target
        limiter = self._limiter

        def call(*args: Any, **kwargs: Any) -> Any:
            limiter.acquire(action)
            try:
                result = target(*args, **kwargs)
            except api.Throttled:
                limiter.on_throttled(action)
                raise
            limiter.on_success(action)
            return result

        return call
