"""Per-pod masquerade decision in multi-pool mode (MP-MASQ-1).

`--only-masquerade-default-pool` (needs eBPF masquerading) turns masquerading off for every pool but
the node's default pool; the pool annotation `ipam.cilium.io/skip-masquerade: "true"` turns it off for
one pool. The decision is taken when the pod gets its IP and kept for the pod's lifetime: changing the
flag or the annotation affects a pod only once it is rescheduled. iptables masquerading with
multi-pool needs `egressMasqueradeInterfaces`.
"""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.multipool.pools import SKIP_MASQUERADE_ANNOTATION, CiliumPodIPPool


@dataclass(frozen=True)
class MasqueradeConfig:
    enable_masquerade: bool = True
    bpf_masquerade: bool = True
    only_masquerade_default_pool: bool = False
    egress_masquerade_interfaces: str = ""

    def problems(self) -> list[str]:
        """Configuration errors, one sentence each (checked at agent start)."""
        out: list[str] = []
        if self.only_masquerade_default_pool and not self.bpf_masquerade:
            out.append(
                "--only-masquerade-default-pool needs eBPF masquerading; "
                "set bpf.masquerade=true or drop the flag."
            )
        if self.enable_masquerade and not self.bpf_masquerade and not self.egress_masquerade_interfaces:
            out.append(
                "iptables masquerading in multi-pool mode needs egressMasqueradeInterfaces; set it or enable "
                "eBPF masquerading."
            )
        return out


def masquerade_decision(
    pool_name: str, pool: CiliumPodIPPool | None, default_pool: str, config: MasqueradeConfig
) -> tuple[bool, str]:
    """(masquerade?, why) for a pod whose address comes from `pool_name`."""
    if not config.enable_masquerade:
        return False, "masquerading is disabled"
    if config.only_masquerade_default_pool and pool_name != default_pool:
        return (
            False,
            f"--only-masquerade-default-pool and pool {pool_name} is not the default pool {default_pool}",
        )
    if pool is not None and pool.skip_masquerade:
        return False, f"pool {pool_name} has {SKIP_MASQUERADE_ANNOTATION}=true"
    return True, f"pool {pool_name} is masqueraded"
