"""The eni, multipool and local programs under Pulumi mocks: resource graph, key inputs, outputs."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pulumi
import pytest
from stack_mocks import run_program

from stacks.eni.program import main as eni_main
from stacks.local.program import main as local_main
from stacks.multipool.program import main as multipool_main

ZONE = "topology.kubernetes.io/zone"
RECONCILER_TYPE = "cilium-ipam:index:CiliumIpamReconciler"
REPO = Path(__file__).resolve().parents[2]


def test_multipool_default_is_the_seed_dc_example_plus_default_pool() -> None:
    """MP-NODE-1: zone dcN nodes default to dcN-pool; the node configs are created after every pool."""
    run = run_program(multipool_main, {})
    pools = {r.inputs["name"]: r for r in run.ours("CiliumPodIPPool")}
    assert sorted(pools) == ["dc1-pool", "dc2-pool", "default"]
    assert pools["dc1-pool"].inputs["spec"]["ipv4"] == {"cidrs": ["10.1.0.0/16"], "maskSize": 24}
    assert pools["dc2-pool"].inputs["spec"]["ipv4"] == {"cidrs": ["10.2.0.0/16"], "maskSize": 24}
    node_configs = {r.inputs["name"]: r for r in run.ours("CiliumNodeConfig")}
    assert sorted(node_configs) == ["ip-pool-dc1", "ip-pool-dc2"]
    dc1 = node_configs["ip-pool-dc1"]
    assert dc1.inputs["namespace"] == "kube-system"
    assert dc1.inputs["defaults"] == {"ipam-default-ip-pool": "dc1-pool"}
    assert dc1.inputs["node_selector"] == {"matchLabels": {ZONE: "dc1"}}
    assert set(dc1.dependencies) == {pool.urn for pool in pools.values()}
    assert run.outputs["pools"] == ["default", "dc1-pool", "dc2-pool"]
    assert run.outputs["nodeConfigs"] == ["kube-system/ip-pool-dc1", "kube-system/ip-pool-dc2"]

    (reconciler,) = run.of_type(RECONCILER_TYPE)
    assert set(reconciler.dependencies) >= {r.urn for r in [*pools.values(), *node_configs.values()]}
    (deployment,) = run.of_type("kubernetes:apps/v1:Deployment")
    assert deployment.parent == reconciler.urn
    args = deployment.inputs["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--ipam=multi-pool" in args and "--ipam-multi-pool-pre-allocation=default=8" in args  # MP-PRE-1
    assert run.outputs["operatorServiceAccount"] == "cilium-ipam-operator"


def test_multipool_takes_crd_shaped_pools_and_node_configs_from_config() -> None:
    config = {
        "pools": {
            "default": {"ipv4": {"cidrs": ["10.0.0.0/16"], "maskSize": 24}},
            "dual": {
                "ipv4": {"cidrs": ["10.8.0.0/16"], "maskSize": 26},
                "ipv6": {"cidrs": ["fd00:8::/104"], "maskSize": 120},
                "allowFirstIP": True,
            },
        },
        "nodeConfigs": {"gpu": {"defaultPool": "dual", "nodeSelector": {"matchLabels": {"gpu": "true"}}}},
    }
    run = run_program(multipool_main, config)
    dual = next(r for r in run.ours("CiliumPodIPPool") if r.inputs["name"] == "dual")
    assert dual.inputs["spec"]["ipv6"] == {"cidrs": ["fd00:8::/104"], "maskSize": 120}
    assert dual.inputs["spec"]["allowFirstIP"] is True
    (gpu,) = run.ours("CiliumNodeConfig")
    assert gpu.inputs["defaults"] == {"ipam-default-ip-pool": "dual"}
    assert run.outputs["poolCidrs"] == {"default": ["10.0.0.0/16"], "dual": ["10.8.0.0/16", "fd00:8::/104"]}


def test_eni_program_builds_dual_stack_vpc_irsa_role_and_least_privilege_policy() -> None:
    config = {
        "clusterName": "prod",
        "availabilityZones": ["us-east-1a", "us-east-1b", "us-east-1c"],
        "oidcProviderArn": "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC",
        "oidcIssuer": "https://oidc.eks.us-east-1.amazonaws.com/id/ABC",
        "iam": {"releaseExcessIps": True},
        "ipam": {"pre-allocate": 8, "max-allocate": 64},
    }
    run = run_program(eni_main, config)
    (vpc,) = run.of_type("aws:ec2/vpc:Vpc")
    assert vpc.inputs["assignGeneratedIpv6CidrBlock"] is True
    assert vpc.inputs["cidrBlock"] == "10.0.0.0/16"

    subnets = sorted(run.ours("DualStackSubnet"), key=lambda s: s.inputs["availability_zone"])
    assert [s.inputs["cidr_block"] for s in subnets] == ["10.0.0.0/19", "10.0.32.0/19", "10.0.64.0/19"]
    assert [s.inputs["availability_zone"] for s in subnets] == ["us-east-1a", "us-east-1b", "us-east-1c"]
    for subnet in subnets:
        assert subnet.inputs["vpc_id"] == "vpc-id"
        assert subnet.inputs["tags"]["cilium-ipam/pod-subnet"] == "prod"
        assert vpc.urn in subnet.dependencies  # ENI-V6-4: subnets wait for the VPC's IPv6 block

    (role,) = run.of_type("aws:iam/role:Role")
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]
    assert trust["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert trust["Condition"]["StringEquals"] == {
        "oidc.eks.us-east-1.amazonaws.com/id/ABC:sub": (
            "system:serviceaccount:kube-system:cilium-ipam-operator"
        ),
        "oidc.eks.us-east-1.amazonaws.com/id/ABC:aud": "sts.amazonaws.com",
    }
    (policy,) = run.ours("IpamIamPolicy")
    assert policy.inputs["role_name"] == "operator-role-role"
    assert role.urn in policy.dependencies
    assert policy.inputs["release_excess_ips"] is True
    assert policy.inputs["cluster_name"] == "prod"

    (cni,) = run.ours("CniConfiguration")
    assert cni.inputs["eni"]["subnet-tags"] == {"cilium-ipam/pod-subnet": "prod"}
    assert cni.inputs["eni"]["security-group-tags"] == {"cilium-ipam/pod-security-group": "prod"}
    assert cni.inputs["ipam"] == {"pre-allocate": 8, "max-allocate": 64}
    (sg_tags,) = run.ours("Ec2Tags")
    (security_group,) = run.of_type("aws:ec2/securityGroup:SecurityGroup")
    assert security_group.urn in sg_tags.dependencies

    (reconciler,) = run.of_type(RECONCILER_TYPE)
    assert {policy.urn, cni.urn} <= set(reconciler.dependencies)
    (account,) = run.of_type("kubernetes:core/v1:ServiceAccount")
    assert account.parent == reconciler.urn
    assert account.inputs["metadata"]["name"] == "cilium-ipam-operator"  # the IRSA trust policy's subject
    assert account.inputs["metadata"]["annotations"] == {
        "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/operator-role"
    }
    (deployment,) = run.of_type("kubernetes:apps/v1:Deployment")
    # The operator must not start before its IAM permissions and CNI config exist (ENI-PERM-1, ENI-ARCH-2).
    assert {policy.urn, cni.urn} <= set(deployment.dependencies)
    args = deployment.inputs["spec"]["template"]["spec"]["containers"][0]["args"]
    for flag in ("--ipam=eni", "--cluster-name=prod", "--aws-release-excess-ips=true"):
        assert flag in args

    assert run.outputs["vpcIpv6CidrBlock"] == "2600:1f18:0:100::/56"
    assert run.outputs["subnetIds"] == [f"subnet-subnet-pods-us-east-1{z}" for z in "abc"]
    assert run.outputs["operatorRoleArn"] == "arn:aws:iam::123456789012:role/operator-role"
    assert run.outputs["policyArn"] == "arn:aws:iam::123456789012:policy/cilium-ipam-prod"


def test_local_program_is_made_only_of_our_dynamic_resources() -> None:
    config = {
        "vpcId": "vpc-0abc",
        "roleName": "cilium-operator",
        "clusterName": "kind",
        "subnets": [{"name": "a", "cidr": "10.0.1.0/24", "availabilityZone": "us-east-1a"}],
    }
    run = run_program(local_main, config)
    resource_types = {r.type for r in run.registrations if not r.type.startswith("pulumi:providers:")}
    assert resource_types == {
        "pulumi-python:dynamic/cilium-ipam:" + kind
        for kind in (
            "DualStackSubnet",
            "Ec2Tags",
            "IpamIamPolicy",
            "CniConfiguration",
            "CiliumPodIPPool",
            "CiliumNodeConfig",
        )
    }
    (tags,) = run.ours("Ec2Tags")
    assert tags.inputs["resource_id"] == "vpc-0abc"
    assert tags.inputs["tags"] == {"kubernetes.io/cluster/kind": "shared"}
    (policy,) = run.ours("IpamIamPolicy")
    assert policy.inputs["role_name"] == "cilium-operator"
    assert "ec2:DescribeTags" not in run.outputs["policyActions"]  # cluster name given: no tag lookup
    assert run.outputs["subnetIds"] == ["subnet-subnet-a"]
    assert run.outputs["pools"] == ["dc1-pool", "dc2-pool"]


def run_dispatcher() -> dict[str, object]:
    runpy.run_path(str(REPO / "stacks" / "__main__.py"), run_name="__main__")
    return {}


def test_the_default_program_dispatches_on_cilium_ipam_program() -> None:
    """Pulumi.yaml's main (stacks/) runs multipool by default and the configured program otherwise."""
    default = run_program(run_dispatcher, {})
    assert default.of_type(RECONCILER_TYPE) and not default.ours("DualStackSubnet")
    local = run_program(
        run_dispatcher,
        {"program": "local", "vpcId": "vpc-1", "roleName": "r", "subnets": [{"cidr": "10.0.1.0/24"}]},
    )
    assert len(local.ours("DualStackSubnet")) == 1 and not local.of_type(RECONCILER_TYPE)


def test_an_unknown_program_is_one_clear_error() -> None:
    with pytest.raises(
        pulumi.RunError, match="config cilium-ipam:program is 'bogus'; set it to one of eni, "
    ):
        run_program(run_dispatcher, {"program": "bogus"})
