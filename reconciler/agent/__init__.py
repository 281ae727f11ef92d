"""The agent-side library: what a Cilium 1.20 agent does for IPAM, in multi-pool and ENI mode.

Entry point: `agent.Agent` (one per simulated node). Building blocks: `selection.select_pool`
(MP-SEL-1..4), `demand` (MP-PRE-1, ENI-ARCH-5), `localpool.LocalPool` (MP-POOL-4, ENI-REL-1),
`eni.eni_cidrs` (ENI-ARCH-4), `masquerade` (MP-MASQ-1), `nodespec.resolve_node_spec` (ENI-ARCH-2).
"""
