"""ENI mode: turn `status.eni.enis` into multi-pool CIDRs of pool `default` (ENI-ARCH-4).

Each secondary IPv4 address becomes a `/32`, each IPv4 prefix stays a `/28`, each IPv6 prefix stays a
`/80`. ENIs below `first-interface-index` (ENI-PARAM-2) and ENIs whose tags match
`exclude-interface-tags` (ENI-PARAM-5) give no pod addresses. The ENI's primary address is used only
with `use-primary-address` (ENI-PARAM-6). Every address of these CIDRs is a real EC2 address, so the
agent's local pools allow the first and last address (a /28 gives 16 pod IPs).
"""

from __future__ import annotations

from reconciler.cidr import CidrError, IPNetwork, parse_cidr
from reconciler.model import CiliumNode, EniStatus

ENI_POOL = "default"


def _excluded(eni: EniStatus, node: CiliumNode) -> bool:
    tags = node.eni.exclude_interface_tags
    return bool(tags) and all(eni.tags.get(k) == v for k, v in tags.items())


def eni_cidrs(node: CiliumNode) -> tuple[dict[int, list[IPNetwork]], list[str]]:
    """({4: [...], 6: [...]}, problems): the CIDRs the agent publishes in `allocated`, ENI order."""
    cidrs: dict[int, list[IPNetwork]] = {4: [], 6: []}
    problems: list[str] = []
    enis = sorted(node.enis.values(), key=lambda e: (e.number, e.id))
    for eni in enis:
        if eni.number < node.eni.first_interface_index or _excluded(eni, node):
            continue
        entries: list[tuple[str, int, int]] = []
        for addr in eni.addresses:
            if addr == eni.ip and not node.eni.use_primary_address:
                continue
            entries.append((f"{addr}/32" if "/" not in addr else addr, 4, 32))
        entries += [(p, 4, 28) for p in eni.prefixes]
        entries += [(p, 6, 80) for p in eni.ipv6_prefixes]
        for text, family, length in entries:
            try:
                net = parse_cidr(text, f"address of ENI {eni.id} on node {node.name}", family)
            except CidrError as exc:
                problems.append(str(exc))
                continue
            if net.prefixlen != length:
                problems.append(
                    f"ENI {eni.id} on node {node.name} lists {net}, expected a /{length}; it is ignored."
                )
                continue
            if net not in cidrs[family]:
                cidrs[family].append(net)
    return cidrs, problems
