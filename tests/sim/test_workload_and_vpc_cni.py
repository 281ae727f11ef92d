"""The workload is identical for every policy of a run; the vpc-cni-like baseline serves every pod."""

from __future__ import annotations

from reconciler.sim.ec2_tap import AddressTap
from reconciler.sim.lower_bound import MUTATING_ACTIONS
from reconciler.sim.runner import new_context, run
from reconciler.sim.scenario import SCENARIOS, Churn
from reconciler.sim.vpc_cni import VpcCniPolicy
from reconciler.sim.workload import Kind, generate

SMALL = SCENARIOS["demo"].with_overrides(
    nodes=12, churn=Churn(fraction_per_minute=0.2, start=200.0, duration=120.0), duration=900.0
)


def test_workload_is_deterministic_and_never_deletes_before_create() -> None:
    a, b = generate(SMALL, 3), generate(SMALL, 3)
    assert a == b and a != generate(SMALL, 4)
    added: dict[int, float] = {}
    live = 0
    for f in a.facts:
        if f.kind is Kind.POD_ADD:
            added[f.pod] = f.t
            live += 1
        elif f.kind is Kind.POD_DELETE:
            assert f.pod in added and added[f.pod] <= f.t
            live -= 1
    assert live == SMALL.nodes * SMALL.pods_per_node  # churn replaces, it does not shrink


def test_vpc_cni_baseline_calls_ec2_per_node_and_serves_all_pods() -> None:
    ctx = new_context(SMALL, 1, "vpc-cni-like")
    policy = VpcCniPolicy(ctx.loop, AddressTap(ctx.ec2, ctx.metrics, ctx.loop.clock), ctx.world, ctx.metrics)
    m = run(ctx, policy, generate(SMALL, 1))
    s = m.summary(MUTATING_ACTIONS)
    assert s["pods_waiting"] == 0 and s["pods_with_ip"] == s["pods"] == 12 * 20
    # every node described its own instance once at start (no central operator, ENI-ARCH-1 contrast)
    assert s["ec2_calls_by_action"]["DescribeInstances"] == 12
    # WARM_ENI_TARGET=1 with 20 pods on 14-IP ENIs: eth0 filled + 1 ENI for pods + 1 warm ENI
    assert s["ec2_calls_by_action"]["CreateNetworkInterface"] == 24
    assert policy.ips_allocated() == 12 * 3 * 14
