"""Instance limits (bundled table, generator, lazy DescribeInstanceTypes cache; ENI-CACHE-1) and
the world builder the simulation uses."""

from __future__ import annotations

import inspect
import json
import random
from pathlib import Path

import boto3
import pytest

from reconciler.clock import SimClock
from reconciler.ec2 import gen_limits
from reconciler.ec2.api import Ec2Api, UnknownInstanceType
from reconciler.ec2.boto3_adapter import Boto3Ec2
from reconciler.ec2.limits import InstanceLimitsCache, StaticLimits
from reconciler.ec2.sim import SimulatedEc2, build_world
from reconciler.ec2.sim.freeset import FreeSet


def test_bundled_table_is_what_the_generator_produces(tmp_path: Path) -> None:
    assert gen_limits.main(["--check"]) == 0
    out = tmp_path / "types.json"
    assert gen_limits.main(["--output", str(out)]) == 0
    table = json.loads(out.read_text())["instance_types"]
    assert table["t2.micro"] == {
        "MaximumNetworkInterfaces": 2,
        "Ipv4AddressesPerInterface": 2,
        "Ipv6AddressesPerInterface": 2,
        "Hypervisor": "xen",
        "BareMetal": False,
    }
    stale = tmp_path / "stale.json"
    stale.write_text("{}")
    assert gen_limits.main(["--check", "--output", str(stale)]) == 1


def test_limits_cache_asks_once_per_type_and_explains_unknown_types() -> None:
    sim = SimulatedEc2(SimClock())
    cache = InstanceLimitsCache(sim)
    assert cache.limits_for("m5.large").max_network_interfaces == 3
    assert cache.limits_for("m5.large").ipv4_per_interface == 10
    assert sim.call_counts[("DescribeInstanceTypes", "OK")] == 1
    with pytest.raises(UnknownInstanceType) as err:
        cache.limits_for("m5.huge")
    assert "m5.huge" in str(err.value) and "spec.eni.instance-type" in str(err.value)
    cache.refresh()
    assert set(cache.cached_types()) == set(StaticLimits().known_types())


def test_build_world_shapes() -> None:
    sim = SimulatedEc2(SimClock(), seed=2)
    world = build_world(
        sim, azs=("us-east-1a", "us-east-1b"), subnets_per_az=2, instances_per_az=2, subnet_tags={"cni": "1"}
    )
    [vpc] = sim.describe_vpcs()
    assert vpc.cidr_block == "10.0.0.0/16" and vpc.ipv6_cidr_blocks[0].endswith("/56")
    subnets = {s.id: s for s in sim.describe_subnets(filters={"tag:cni": ["1"]})}
    assert set(subnets) == set(world.all_subnet_ids()) and len(subnets) == 4
    assert all(
        s.cidr_block.endswith("/20") and s.ipv6_cidr_blocks[0].endswith("/64") for s in subnets.values()
    )
    assert {subnets[s].availability_zone for s in world.subnet_ids["us-east-1b"]} == {"us-east-1b"}
    tables = {t.id: t for t in sim.describe_route_tables()}
    assert tables[world.route_table_ids["main"]].main
    assert set(tables[world.route_table_ids["us-east-1a"]].subnet_ids) == set(world.subnet_ids["us-east-1a"])
    instances = sim.describe_instances()
    assert len(instances) == 4 and all(i.instance_type == "m5.large" for i in instances)
    primaries = sim.describe_network_interfaces(filters={"attachment.device-index": ["0"]})
    assert {e.instance_id for e in primaries} == set(world.instance_ids)
    assert all(e.subnet_id == world.node_subnet(e.availability_zone) for e in primaries)


def test_freeset_add_remove_pick() -> None:
    items = FreeSet(10, [1, 3, 5])
    rng = random.Random(0)
    assert len(items) == 3 and 3 in items and 4 not in items and 11 not in items
    items.remove(3)
    assert sorted(items) == [1, 5] and items.pick(rng) in {1, 5}
    with pytest.raises(KeyError):
        items.remove(3)
    items.discard(3)
    items.add(1)
    assert len(items) == 2


def test_both_adapters_implement_the_port() -> None:
    """Every `Ec2Api` method exists on both adapters with the same keyword names."""
    client = boto3.client("ec2", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b")
    for adapter in (SimulatedEc2(SimClock()), Boto3Ec2(client=client)):
        assert isinstance(adapter, Ec2Api)
        for name, method in inspect.getmembers(Ec2Api, inspect.isfunction):
            if name.startswith("_"):
                continue
            wanted = list(inspect.signature(method).parameters)
            assert list(inspect.signature(getattr(type(adapter), name)).parameters) == wanted, name
