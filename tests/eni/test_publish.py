"""ENI-PUB-1 / ENI-ARCH-3 (what status.eni.enis holds) and ENI-PARAM-2/5/6."""

from __future__ import annotations

import dataclasses

import pytest

from reconciler.ec2.api import NetworkInterface, Subnet, Vpc
from reconciler.eni.publish import changed_enis, node_enis, offered_cidrs
from reconciler.model import CiliumNode, EniSpec

SUBNET = Subnet("subnet-1", "vpc-1", "az", "10.0.0.0/24", 200)
VPC = Vpc("vpc-1", "10.0.0.0/16", ("10.0.0.0/16", "10.1.0.0/16"))


def _eni(eni_id: str, index: int, ips: tuple[str, ...], **kw: object) -> NetworkInterface:
    return NetworkInterface(
        id=eni_id,
        subnet_id="subnet-1",
        vpc_id="vpc-1",
        availability_zone="az",
        status="in-use",
        mac_address=f"02:00:00:00:00:0{index}",
        primary_ip=ips[0],
        private_ips=ips,
        instance_id="i-1",
        device_index=index,
        security_group_ids=("sg-1",),
        description="d",
        **kw,  # type: ignore[arg-type]
    )


ENIS = [
    _eni("eni-0", 0, ("10.0.0.10", "10.0.0.11")),
    _eni(
        "eni-1",
        1,
        ("10.0.0.20", "10.0.0.21", "10.0.0.22"),
        ipv4_prefixes=("10.0.0.48/28",),
        ipv6_prefixes=("2600::/80",),
    ),
    _eni("eni-2", 2, ("10.0.0.30", "10.0.0.31"), tags={"skip": "yes", "other": "1"}),
]


def _publish(**spec: object) -> dict[str, object]:
    node = CiliumNode(name="n", instance_id="i-1", eni=EniSpec(**spec))  # type: ignore[arg-type]
    return node_enis(node, ENIS, {"subnet-1": SUBNET}, {"vpc-1": VPC})  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, ["eni-0", "eni-1", "eni-2"]),
        ({"first_interface_index": 1}, ["eni-1", "eni-2"]),
        ({"first_interface_index": 2}, ["eni-2"]),
        ({"exclude_interface_tags": {"skip": "yes"}}, ["eni-0", "eni-1"]),
        ({"exclude_interface_tags": {"skip": "yes", "other": "2"}}, ["eni-0", "eni-1", "eni-2"]),
        ({"first_interface_index": 1, "exclude_interface_tags": {"skip": "yes"}}, ["eni-1"]),
    ],
)
def test_eni_pub_1_publishes_index_at_or_above_first_interface_index_and_not_excluded(
    spec: dict[str, object], expected: list[str]
) -> None:
    """ENI-PARAM-2 (index >= first-interface-index) and ENI-PARAM-5 (all exclude tags must match)."""
    assert sorted(_publish(**spec)) == expected


def test_eni_pub_1_fields_and_secondary_addresses_only_by_default() -> None:
    status = _publish(first_interface_index=1)["eni-1"]
    assert status.addresses == ("10.0.0.21", "10.0.0.22")  # type: ignore[attr-defined]
    assert status.prefixes == ("10.0.0.48/28",)  # type: ignore[attr-defined]
    assert status.ipv6_prefixes == ("2600::/80",)  # type: ignore[attr-defined]
    assert (status.ip, status.number, status.subnet_cidr) == ("10.0.0.20", 1, "10.0.0.0/24")  # type: ignore[attr-defined]
    assert (status.vpc_primary_cidr, status.vpc_cidrs) == ("10.0.0.0/16", ("10.0.0.0/16", "10.1.0.0/16"))  # type: ignore[attr-defined]
    assert status.security_groups == ("sg-1",)  # type: ignore[attr-defined]


def test_eni_param_6_use_primary_address_publishes_the_primary_too() -> None:
    status = _publish(first_interface_index=1, use_primary_address=True)["eni-1"]
    assert status.addresses == ("10.0.0.20", "10.0.0.21", "10.0.0.22")  # type: ignore[attr-defined]


def test_eni_arch_4_offered_cidrs_are_32s_28s_and_80s() -> None:
    offered = offered_cidrs(_publish(first_interface_index=1, exclude_interface_tags={"skip": "yes"}))  # type: ignore[arg-type]
    assert offered == {"10.0.0.21/32", "10.0.0.22/32", "10.0.0.48/28", "2600::/80"}


def test_eni_pub_1_written_only_when_changed() -> None:
    published = _publish(first_interface_index=1)
    node = CiliumNode(name="n", instance_id="i-1", eni=EniSpec(first_interface_index=1))
    assert changed_enis(node, published) == published  # type: ignore[arg-type]
    same = dataclasses.replace(node, enis=published)
    assert changed_enis(same, published) is None  # type: ignore[arg-type]
    # A round trip through the CRD JSON keeps it unchanged (the controller reads JSON back).
    reread = CiliumNode.from_obj(same.to_obj())
    assert changed_enis(reread, published) is None  # type: ignore[arg-type]
