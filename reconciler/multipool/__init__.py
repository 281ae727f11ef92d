"""Multi-pool IPAM, operator side (SPEC section 2).

Entry points: `operator.MultiPoolOperator` / `operator.plan_allocations` (block hand-out),
`autocreate.parse_auto_create` (MP-CFG-1), `migrate.plan_migration` / `migrate.render_migration`
(MP-MIG-1), `pools` (CiliumPodIPPool / CiliumNodeConfig views and validation).
"""
