"""ENI-ARCH-2: CiliumNode spec from instance metadata, Helm nodeSpec values and the CNI config."""

from __future__ import annotations

import json

import pytest

from reconciler.agent.nodespec import InstanceMetadata, NodeSpecError, resolve_node_spec

META = InstanceMetadata("i-0abc", "m5.large", "vpc-1", "us-east-1a", "subnet-node")


def test_eni_arch_2_metadata_and_helm_values() -> None:
    helm = {
        "eni": {
            "nodeSpec": {
                "subnetTags": ["foo=bar"],
                "firstInterfaceIndex": 1,
                "securityGroups": "sg-1,sg-2",
                "deleteOnTermination": False,
            }
        },
        "ipam": {"nodeSpec": {"ipamMinAllocate": 10, "ipamPreAllocate": "4"}},
    }
    spec = resolve_node_spec(META, helm)
    assert spec.instance_id == "i-0abc"
    assert (spec.eni.instance_type, spec.eni.vpc_id, spec.eni.availability_zone, spec.eni.node_subnet_id) == (
        "m5.large",
        "vpc-1",
        "us-east-1a",
        "subnet-node",
    )
    assert spec.eni.subnet_tags == {"foo": "bar"} and spec.eni.first_interface_index == 1
    assert spec.eni.security_groups == ("sg-1", "sg-2") and spec.eni.delete_on_termination is False
    assert (spec.ipam.min_allocate, spec.ipam.pre_allocate) == (10, 4)
    assert spec.sources["eni.subnet-tags"] == "helm"


def test_eni_arch_2_cni_config_wins_per_field() -> None:
    helm = {
        "eni": {"nodeSpec": {"subnetTags": {"foo": "bar"}, "firstInterfaceIndex": 1}},
        "ipam": {"nodeSpec": {"ipamPreAllocate": 4}},
    }
    cni = json.dumps(
        {
            "cniVersion": "0.3.1",
            "name": "cilium",
            "plugins": [
                {"type": "portmap"},
                {
                    "type": "cilium-cni",
                    "eni": {"subnet-tags": {"foo": "true"}},
                    "ipam": {"pre-allocate": 12, "type": "ignored"},
                },
            ],
        }
    )
    spec = resolve_node_spec(META, helm, cni)
    assert spec.eni.subnet_tags == {"foo": "true"}, "CNI config wins"
    assert spec.eni.first_interface_index == 1, "fields only Helm sets stay"
    assert spec.ipam.pre_allocate == 12
    assert spec.sources == {
        "eni.subnet-tags": "cni",
        "eni.first-interface-index": "helm",
        "ipam.pre-allocate": "cni",
    }
    obj = spec.eni.to_obj()
    assert obj["subnet-tags"] == {"foo": "true"} and obj["instance-type"] == "m5.large"


@pytest.mark.parametrize(
    ("helm", "cni", "fragment"),
    [
        ({"eni": {"nodeSpec": {"subnetTag": {"a": "b"}}}}, None, "eni.nodeSpec.subnetTag is unknown"),
        ({"eni": {"nodeSpec": {"firstInterfaceIndex": -1}}}, None, "must be >= 0"),
        # pass str.isdigit() after lstrip("-") but int() refuses them: one sentence, not a ValueError
        ({"eni": {"nodeSpec": {"firstInterfaceIndex": "1\u00b2"}}}, None, "must be a whole number"),
        ({"eni": {"nodeSpec": {"firstInterfaceIndex": "--1"}}}, None, "must be a whole number"),
        ({"eni": {"nodeSpec": {"usePrimaryAddress": "yes"}}}, None, "must be true or false"),
        (None, "{not json", "cni-config is not valid JSON"),
        (None, json.dumps({"eni": {"first-interface-index": "one"}}), "cni-config eni.first-interface-index"),
    ],
)
def test_eni_arch_2_bad_values_give_one_sentence(helm: dict | None, cni: str | None, fragment: str) -> None:
    with pytest.raises(NodeSpecError) as err:
        resolve_node_spec(META, helm, cni)
    assert fragment in str(err.value)
