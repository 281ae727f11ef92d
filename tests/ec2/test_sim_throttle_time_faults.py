"""EC2-SIM-5 (per-action token buckets with AWS's sizes) and EC2-SIM-6 (latency, eventual
consistency, fault injection, determinism), plus the call log benchmarks read."""

from __future__ import annotations

import pytest

from reconciler.clock import SimClock
from reconciler.ec2.api import NotFound, ServerError, Throttled
from reconciler.ec2.observe import RecordingObserver
from reconciler.ec2.sim import LatencyModel, SimulatedEc2
from reconciler.ec2.sim.throttle import bucket_size
from tests.ec2.simhelpers import attached_eni, new_eni, small_world


@pytest.mark.parametrize(
    ("key", "size"),
    [
        ("DescribeSubnets", (100, 20)),
        ("DescribeNetworkInterfaces", (100, 20)),
        ("DescribeNetworkInterfaces(unfiltered)", (50, 10)),
        ("DescribeSecurityGroups(unfiltered)", (50, 10)),
        ("AssignPrivateIpAddresses", (100, 5)),
        ("UnassignPrivateIpAddresses", (100, 5)),
        ("AssignIpv6Addresses", (100, 5)),
        ("CreateNetworkInterface", (100, 5)),
        ("DeleteNetworkInterface", (100, 5)),
        ("ModifyNetworkInterfaceAttribute", (100, 5)),
        ("CreateTags", (100, 10)),
        ("AttachNetworkInterface", (50, 5)),
        ("DetachNetworkInterface", (50, 5)),
    ],
)
def test_ec2_sim_5_bucket_sizes_are_awss(key: str, size: tuple[int, int]) -> None:
    assert bucket_size(key) == size


def test_ec2_sim_5_burst_beyond_bucket_is_request_limit_exceeded_then_refills() -> None:
    sim, clock, subnet, _ = small_world()
    eni = new_eni(sim, subnet)
    for _ in range(99):  # CreateNetworkInterface used its own bucket; CreateTags is 100 / 10 per s
        sim.create_tags([eni.id], {"k": "v"})
    sim.create_tags([eni.id], {"k": "v"})
    with pytest.raises(Throttled) as err:
        sim.create_tags([eni.id], {"k": "v"})
    assert err.value.code == "RequestLimitExceeded" and err.value.retryable
    sim.describe_subnets()  # other actions have their own buckets
    clock.advance(0.1)  # refills one token at 10 / s
    sim.create_tags([eni.id], {"k": "v"})
    with pytest.raises(Throttled):
        sim.create_tags([eni.id], {"k": "v"})
    assert sim.call_counts[("CreateTags", "RequestLimitExceeded")] == 2


def test_ec2_sim_5_unfiltered_unpaginated_describe_has_the_smaller_bucket() -> None:
    sim, _, subnet, _ = small_world(paginate_describes=False)
    for _ in range(50):
        sim.describe_network_interfaces()
    with pytest.raises(Throttled):
        sim.describe_network_interfaces()
    for _ in range(100):
        sim.describe_network_interfaces(filters={"subnet-id": [subnet]})
    with pytest.raises(Throttled):
        sim.describe_network_interfaces(filters={"subnet-id": [subnet]})


def test_ec2_sim_5_attach_bucket_is_50_at_5_per_second() -> None:
    clock = SimClock()
    sim = SimulatedEc2(clock, seed=1)
    vpc = sim.add_vpc("10.0.0.0/16")
    subnet = sim.add_subnet(vpc, "a", "10.0.0.0/20")
    instances = [sim.launch_instance("m5.large", subnet) for _ in range(60)]
    enis = [new_eni(sim, subnet).id for _ in range(60)]  # CreateNetworkInterface's bucket holds 100
    outcomes = []
    for eni, instance in zip(enis, instances, strict=True):
        try:
            sim.attach_network_interface(eni, instance, 1)
            outcomes.append("ok")
        except Throttled:
            outcomes.append("throttled")
    assert outcomes.count("ok") == 50 and outcomes[50:] == ["throttled"] * 10


def test_ec2_sim_5_throttling_can_be_switched_off() -> None:
    sim, _, _, _ = small_world(throttling=False)
    for _ in range(500):
        sim.describe_vpcs()


def test_ec2_sim_6_latency_advances_a_sim_clock_through_sleep() -> None:
    clock = SimClock()
    sim = SimulatedEc2(clock, latency=LatencyModel(default=0.1, per_action={"CreateNetworkInterface": 0.5}))
    sim_with_sleep = SimulatedEc2(clock, latency=sim.latency, sleep=clock.advance)
    for s in (sim, sim_with_sleep):
        vpc = s.add_vpc("10.0.0.0/16")
        s.add_subnet(vpc, "a", "10.0.0.0/24")
    sim.describe_vpcs()
    assert clock.now() == 0.0 and sim.last_call is not None
    assert (sim.last_call.started_at, sim.last_call.finished_at) == (0.0, 0.1)
    subnet = sim_with_sleep.describe_subnets()[0].id
    assert clock.now() == pytest.approx(0.1)
    new_eni(sim_with_sleep, subnet)
    assert clock.now() == pytest.approx(0.6)
    last = sim_with_sleep.last_call
    assert last is not None and (last.action, last.outcome) == ("CreateNetworkInterface", "OK")
    assert last.finished_at - last.started_at == pytest.approx(0.5)
    assert sim_with_sleep.latency_for("CreateNetworkInterface") == 0.5


def test_ec2_sim_6_jittered_latency_is_deterministic_per_seed() -> None:
    def run(seed: int) -> list[float]:
        sim = SimulatedEc2(SimClock(), seed=seed, latency=LatencyModel(default=1.0, jitter=0.5))
        sim.add_vpc("10.0.0.0/16")
        for _ in range(5):
            sim.describe_vpcs()
        return [c.finished_at - c.started_at for c in sim.calls]

    assert run(1) == run(1) != run(2)
    assert all(0.5 <= d <= 1.5 for d in run(3))


def test_ec2_sim_6_new_eni_is_invisible_to_describe_for_the_delay() -> None:
    sim, clock, subnet, instance = small_world(visibility_delay=5.0)
    eni = new_eni(sim, subnet)
    with pytest.raises(NotFound) as err:
        sim.describe_network_interfaces(ids=[eni.id])
    assert err.value.code == "InvalidNetworkInterfaceID.NotFound"
    assert eni.id not in {e.id for e in sim.describe_network_interfaces()}
    sim.attach_network_interface(eni.id, instance, 1)  # operations by ID already work
    clock.advance(5.0)
    [seen] = sim.describe_network_interfaces(ids=[eni.id])
    assert seen.instance_id == instance


def test_ec2_sim_6_scripted_faults_fire_in_order_and_once() -> None:
    sim, _, subnet, _ = small_world()
    sim.faults.script("InternalError", action="DescribeSubnets")
    sim.faults.script("RequestLimitExceeded", action="DescribeSubnets")
    with pytest.raises(ServerError):
        sim.describe_subnets()
    with pytest.raises(Throttled):
        sim.describe_subnets()
    assert sim.describe_subnets()[0].id == subnet
    assert sim.faults.pending == 0


def test_ec2_sim_6_fault_before_effect_changes_nothing() -> None:
    sim, _, subnet, instance = small_world()
    eni = attached_eni(sim, subnet, instance)
    sim.faults.script("InternalError", action="AssignPrivateIpAddresses")
    with pytest.raises(ServerError):
        sim.assign_private_ip_addresses(eni, secondary_private_ip_count=2)
    assert len(sim.describe_network_interfaces(ids=[eni])[0].private_ips) == 1


def test_ec2_sim_6_error_rate_is_seeded() -> None:
    def failures(seed: int) -> int:
        sim = SimulatedEc2(SimClock(), seed=seed, throttling=False)
        sim.add_vpc("10.0.0.0/16")
        sim.faults.set_error_rate("DescribeVpcs", 0.3, code="Unavailable")
        count = 0
        for _ in range(200):
            try:
                sim.describe_vpcs()
            except ServerError:
                count += 1
        return count

    assert failures(4) == failures(4)
    assert 40 <= failures(4) <= 80
    with pytest.raises(ValueError):
        SimulatedEc2(SimClock()).faults.set_error_rate("DescribeVpcs", 1.5)


def test_ec2_sim_6_same_seed_same_world() -> None:
    def addresses(seed: int) -> tuple[str, ...]:
        sim, _, subnet, instance = small_world(seed=seed)
        eni = attached_eni(sim, subnet, instance, secondary_private_ip_count=5)
        return sim.describe_network_interfaces(ids=[eni])[0].private_ips

    assert addresses(9) == addresses(9) != addresses(10)


def test_call_log_and_observer_record_every_call() -> None:
    observer = RecordingObserver()
    sim, _, subnet, _ = small_world(observer=observer, latency=LatencyModel(default=0.2))
    new_eni(sim, subnet, secondary_private_ip_count=1)
    try:
        sim.delete_network_interface("eni-0000000000000dead")
    except NotFound:
        pass
    actions = [(c.action, c.outcome) for c in sim.calls]
    assert actions == [
        ("CreateNetworkInterface", "OK"),
        ("DeleteNetworkInterface", "InvalidNetworkInterfaceID.NotFound"),
    ]
    assert sim.calls[0].params["secondary_private_ip_count"] == 1
    assert observer.calls == [
        ("CreateNetworkInterface", "OK", 0.2),
        ("DeleteNetworkInterface", "InvalidNetworkInterfaceID.NotFound", 0.2),
    ]


def test_ec2_sim_5_paginated_describe_costs_a_token_and_a_latency_per_page() -> None:
    """Like Boto3Ec2 (MaxResults 1000), 2,500 ENIs take three DescribeNetworkInterfaces requests;
    paginated requests use the regular 100 / 20 bucket, so the 34th full describe is throttled."""
    clock = SimClock()
    sim = SimulatedEc2(clock, latency=LatencyModel(default=0.2))
    vpc = sim.add_vpc("10.0.0.0/16")
    subnet = sim.add_subnet(vpc, "a", "10.0.0.0/20")
    for _ in range(2499):
        sim.launch_instance("m5.large", subnet)
    new_eni(sim, subnet)
    for _ in range(33):
        assert len(sim.describe_network_interfaces()) == 2500
    last = sim.last_call
    assert last is not None and last.pages == 3
    assert last.finished_at - last.started_at == pytest.approx(0.6)
    with pytest.raises(Throttled):
        sim.describe_network_interfaces()  # 1 token left: a later page is throttled
