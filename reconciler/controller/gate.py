"""Only the leader talks to EC2 (ENI-ARCH-1): a proxy that refuses every call once leadership is lost.

The engine checks nothing itself; it gets this proxy instead of the real `Ec2Api`. A lost lease
therefore stops EC2 traffic at the very next call, even in the middle of an allocation pass; the
engine turns the refusal into a per-node error that is never written (we are no longer leader).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reconciler.ec2.api import Ec2Error


class NotLeader(Ec2Error):
    default_code = "NotLeader"


class LeaderGatedEc2:
    def __init__(self, ec2: Any, is_leader: Callable[[], bool]) -> None:
        self._ec2 = ec2
        self._is_leader = is_leader

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._ec2, name)
        if name.startswith("_") or not callable(attr):
            return attr

        def gated(*args: Any, **kwargs: Any) -> Any:
            if not self._is_leader():
                raise NotLeader(f"refusing EC2 {name}: this operator is not the leader", action=name)
            return attr(*args, **kwargs)

        return gated
