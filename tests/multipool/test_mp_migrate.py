"""MP-MIG-1: the `cilium-ipam pools migrate` plan (dry-run by default)."""

from __future__ import annotations

from reconciler.model import CiliumNode, IpamSpec, PoolAllocation
from reconciler.multipool.migrate import PodAddress, plan_migration, render_migration
from reconciler.multipool.pools import CiliumPodIPPool, PoolFamily

ZONE = "topology.kubernetes.io/zone"


def cn(name: str, zone: str, cidrs: tuple[str, ...]) -> CiliumNode:
    return CiliumNode(
        name=name,
        labels={ZONE: zone},
        ipam=IpamSpec(allocated=(PoolAllocation("default", cidrs),)),
    )


CURRENT = CiliumPodIPPool("default", ipv4=PoolFamily(("10.10.0.0/16",), 24))
NODES = [
    cn("kind-worker", "z1", ("10.10.1.0/24",)),
    cn("kind-control-plane", "z2", ("10.10.0.0/24",)),
    cn("fresh", "z2", ("10.20.0.0/24",)),
]
PODS = [
    PodAddress("default", "nginx-9t4cp", "kind-worker", ("10.10.1.191",)),
    PodAddress("default", "nginx-jnvrx", "kind-control-plane", ("10.10.0.77",)),
    PodAddress("default", "new", "fresh", ("10.20.0.5",)),
]


def test_mp_mig_1_documented_steps_per_node_group() -> None:
    plan = plan_migration(CURRENT, {4: ["10.20.0.0/16"]}, NODES, PODS)
    assert plan.ok and plan.dry_run
    assert plan.removed_cidrs == ("10.10.0.0/16",) and plan.added_cidrs == ("10.20.0.0/16",)
    assert dict(plan.groups) == {"z1": ("kind-worker",), "z2": ("kind-control-plane",)}
    kinds = [s.kind for s in plan.steps]
    per_group = ["cordon", "drain", "delete-ciliumnode", "restart-agent", "uncordon"]
    assert kinds == ["update-pool", "expect-warnings", "restart-operator", *per_group, *per_group]
    warn = plan.steps[1]
    assert set(warn.blocks) == {("kind-worker", "10.10.1.0/24"), ("kind-control-plane", "10.10.0.0/24")}
    drain_z1 = plan.steps[4]
    assert drain_z1.group == "z1" and drain_z1.pods == ("default/nginx-9t4cp",)
    assert drain_z1.commands == ("kubectl drain kind-worker --ignore-daemonsets",)
    assert plan.steps[5].commands == ("kubectl delete cn kind-worker",)
    assert "spec.nodeName=kind-worker" in plan.steps[6].commands[0]
    text = render_migration(plan)
    assert "DRY RUN" in text and "CIDR from pool still in use by node" in text
    assert "pod default/nginx-jnvrx" in text and "default/new" not in text


def test_mp_mig_1_custom_group_label_and_single_group_warning() -> None:
    plan = plan_migration(CURRENT, {4: ["10.20.0.0/16"]}, NODES[:2], PODS, group_label="pool-group")
    assert dict(plan.groups) == {"<no label>": ("kind-control-plane", "kind-worker")}
    assert any("one group" in w for w in plan.warnings)


def test_mp_mig_1_refuses_immutable_change_and_overlap() -> None:
    bigger_mask = CiliumPodIPPool("default", ipv4=PoolFamily(("10.20.0.0/16",), 26))
    refused = plan_migration(CURRENT, bigger_mask, NODES, PODS)
    assert not refused.ok and "maskSize (24 -> 26)" in refused.errors[0]
    assert "REFUSED" in render_migration(refused)
    other = CiliumPodIPPool("other", ipv4=PoolFamily(("10.20.0.0/17",), 24))
    clash = plan_migration(CURRENT, {4: ["10.20.0.0/16"]}, NODES, PODS, other_pools=[other])
    assert not clash.ok and "overlaps CIDR 10.20.0.0/17 of pool other" in clash.errors[0]


def test_mp_mig_1_appending_a_cidr_needs_no_node_steps() -> None:
    plan = plan_migration(CURRENT, {4: ["10.10.0.0/16", "10.30.0.0/16"]}, NODES[:2], PODS)
    assert [s.kind for s in plan.steps] == ["update-pool"]
    assert any("only the pool update is needed" in w for w in plan.warnings)
