"""Entry point the Pulumi engine runs for `--policy-pack policies`: serve the pack over gRPC.

All logic lives in `policies.rules` so it can be imported and tested; this file only starts the
server (the PolicyPack constructor blocks until the engine is done).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo root, for `policies.rules`

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

from policies.rules.pack import PACK_NAME, POLICIES  # noqa: E402

PolicyPack(
    name=PACK_NAME,
    policies=list(POLICIES),
    enforcement_level=EnforcementLevel.MANDATORY,
    description="Validates Cilium AWS ENI and multi-pool IPAM configuration before it reaches a cluster.",
)
