"""EC2's request throttling as the simulator applies it (EC2-SIM-5).

One token bucket per action per account/region, with AWS's published sizes (max tokens / refill per
second). Unfiltered, unpaginated DescribeNetworkInterfaces and DescribeSecurityGroups draw from their
own smaller bucket. A call that finds its bucket empty fails with RequestLimitExceeded.
"""

from __future__ import annotations

from collections.abc import Mapping

from reconciler.clock import Clock
from reconciler.ec2.ratelimit import TokenBucket

DESCRIBE_BUCKET = (100, 20)
UNFILTERED_DESCRIBE_BUCKET = (50, 10)
UNFILTERED_ACTIONS = frozenset({"DescribeNetworkInterfaces", "DescribeSecurityGroups"})

MUTATING_BUCKETS: Mapping[str, tuple[int, int]] = {
    "AssignPrivateIpAddresses": (100, 5),
    "UnassignPrivateIpAddresses": (100, 5),
    "AssignIpv6Addresses": (100, 5),
    "CreateNetworkInterface": (100, 5),
    "DeleteNetworkInterface": (100, 5),
    "ModifyNetworkInterfaceAttribute": (100, 5),
    "CreateTags": (100, 10),
}
OTHER_MUTATING_BUCKET = (50, 5)  # AttachNetworkInterface, DetachNetworkInterface, DeleteTags, ...


def bucket_key(action: str, unfiltered: bool) -> str:
    if unfiltered and action in UNFILTERED_ACTIONS:
        return f"{action}(unfiltered)"
    return action


def bucket_size(key: str) -> tuple[int, int]:
    """(max tokens, refill per second) for a bucket key."""
    if key.endswith("(unfiltered)"):
        return UNFILTERED_DESCRIBE_BUCKET
    if key.startswith("Describe"):
        return DESCRIBE_BUCKET
    return MUTATING_BUCKETS.get(key, OTHER_MUTATING_BUCKET)


class AwsThrottle:
    """The account's buckets, created on first use."""

    def __init__(self, clock: Clock, *, enabled: bool = True) -> None:
        self._clock = clock
        self.enabled = enabled
        self._buckets: dict[str, TokenBucket] = {}

    def admit(self, action: str, *, unfiltered: bool = False, requests: int = 1) -> bool:
        """Take a token per request (page) of `action`; False means RequestLimitExceeded."""
        if not self.enabled:
            return True
        key = bucket_key(action, unfiltered)
        bucket = self._buckets.get(key)
        if bucket is None:
            capacity, rate = bucket_size(key)
            bucket = self._buckets[key] = TokenBucket(capacity, rate, self._clock)
        return bucket.try_take(requests)

    def tokens(self, action: str, *, unfiltered: bool = False) -> float:
        key = bucket_key(action, unfiltered)
        bucket = self._buckets.get(key)
        return bucket.tokens if bucket is not None else float(bucket_size(key)[0])
