"""The providers inside the real Pulumi engine (dynamic-provider host, dill by reference, config).

One program against moto (Ec2Tags, IpamIamPolicy) and the real kube-apiserver (CiliumPodIPPool,
CiliumNodeConfig): `pulumi up` creates; a maskSize change fails `pulumi preview` with the MP-POOL-3
sentence; `destroy` of an in-use pool is refused naming the node (MP-POOL-2); once the node is gone
`destroy` leaves nothing behind; the missing-default-pool warning reaches the CLI output.
"""

from __future__ import annotations

import json
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
from toolchain import locate, pulumienv

pytestmark = [pytest.mark.pulumi, pytest.mark.kube, pytest.mark.moto]

PROGRAM = """
import pulumi
from provider import (CiliumNodeConfig, CiliumPodIPPool, CniConfiguration, DualStackSubnet, Ec2Tags,
                      EniOptions, IpamIamPolicy, IpamOptions)

config = pulumi.Config()
kubeconfig = config.require("kubeconfig")
endpoint = config.require("endpoint")
pool = CiliumPodIPPool("pool", name=config.require("pool"), ipv4_cidrs=[config.require("cidr")],
                       ipv4_mask_size=config.require_int("mask"), kubeconfig=kubeconfig)
node_config = CiliumNodeConfig("dc1", name="dc1", namespace=config.require("namespace"),
                               defaults={"ipam-default-ip-pool": config.require("defaultPool")},
                               node_selector={"matchLabels": {"zone": "dc1"}}, kubeconfig=kubeconfig,
                               opts=pulumi.ResourceOptions(depends_on=[pool]))
tags = Ec2Tags("tags", resource_id=config.require("subnet"), tags={"cilium-ipam/pods": "true"},
               endpoint_url=endpoint, region="us-east-1")
policy = IpamIamPolicy("policy", role_name=config.require("role"), ipv6=True, endpoint_url=endpoint,
                       region="us-east-1")
subnet = DualStackSubnet("pods", vpc_id=config.require("dualVpc"), cidr_block="10.78.1.0/24",
                         tags={"cilium-ipam/pods": "true"}, endpoint_url=endpoint, region="us-east-1")
cni = CniConfiguration("cni", namespace=config.require("namespace"), kubeconfig=kubeconfig,
                       eni=EniOptions(subnet_ids=[subnet.subnet_id], first_interface_index=1),
                       ipam=IpamOptions(pre_allocate=config.require_int("preAllocate")))
pulumi.export("pool_uid", pool.uid)
pulumi.export("subnet_id", subnet.subnet_id)
pulumi.export("ipv6", subnet.ipv6_cidr_block_assigned)
pulumi.export("cni_config", cni.cni_config)
pulumi.export("warnings", node_config.warnings)
pulumi.export("actions", policy.actions)
"""

NO_TRACEBACK_FRAMES_FROM = "provider/pod_ip_pool.py"


def write_project(directory: Path) -> Path:
    venv = locate.project_python().parent.parent
    directory.mkdir(parents=True)
    (directory / "Pulumi.yaml").write_text(
        textwrap.dedent(
            f"""\
            name: provider-engine
            runtime:
              name: python
              options:
                toolchain: pip
                virtualenv: {venv}
            """
        )
    )
    (directory / "__main__.py").write_text(PROGRAM)
    return directory


def test_providers_in_the_real_engine(
    pulumi_engine: pulumienv.PulumiEngine,
    tmp_path: Path,
    kube: Any,
    kubeconfig: str,
    kube_namespace: str,
    moto_ec2: Any,
    moto_iam: Any,
    moto_endpoint: str,
) -> None:
    from kubernetes import client

    custom = client.CustomObjectsApi(kube)
    unique = uuid.uuid4().hex[:8]
    pool, node = f"engine-{unique}", f"engine-node-{unique}"
    cidr = f"100.{64 + int(unique, 16) % 64}.0.0/20"
    vpc = moto_ec2.create_vpc(CidrBlock="10.77.0.0/16")["Vpc"]["VpcId"]
    subnet = moto_ec2.create_subnet(VpcId=vpc, CidrBlock="10.77.1.0/24")["Subnet"]["SubnetId"]
    dual_vpc = moto_ec2.create_vpc(CidrBlock="10.78.0.0/16", AmazonProvidedIpv6CidrBlock=True)["Vpc"]["VpcId"]
    role = f"engine-{unique}"
    moto_iam.create_role(
        RoleName=role, AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []})
    )
    aws_env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}
    project = write_project(tmp_path / "program")

    def pulumi(*args: str, check: bool = True) -> Any:
        return pulumi_engine.run([*args, "--non-interactive"], cwd=project, check=check, extra_env=aws_env)

    pulumi("stack", "init", "engine")
    settings = {
        "kubeconfig": kubeconfig,
        "endpoint": moto_endpoint,
        "pool": pool,
        "cidr": cidr,
        "mask": "24",
        "namespace": kube_namespace,
        "defaultPool": f"missing-{unique}",
        "subnet": subnet,
        "role": role,
        "dualVpc": dual_vpc,
        "preAllocate": "8",
    }
    for key, value in settings.items():
        pulumi("config", "set", key, value)

    pulumi("preview")  # everything unknown yet (subnet id feeds the CNI config): check must tolerate it
    up = pulumi("up", "--yes", "--skip-preview")
    assert f"no CiliumPodIPPool 'missing-{unique}' exists" in up.stdout + up.stderr  # stderr warning shown
    outputs = json.loads(pulumi("stack", "output", "--json").stdout)
    assert outputs["pool_uid"] and "ec2:AssignIpv6Addresses" in outputs["actions"]
    assert len(outputs["warnings"]) == 1
    live = custom.get_cluster_custom_object("cilium.io", "v2alpha1", "ciliumpodippools", pool)
    assert live["spec"] == {"ipv4": {"cidrs": [cidr], "maskSize": 24}}
    tags = moto_ec2.describe_tags(Filters=[{"Name": "resource-id", "Values": [subnet]}])["Tags"]
    assert [(t["Key"], t["Value"]) for t in tags] == [("cilium-ipam/pods", "true")]
    assert outputs["subnet_id"].startswith("subnet-") and outputs["ipv6"].endswith("/64")
    plugin = json.loads(outputs["cni_config"])["plugins"][0]
    assert plugin["eni"] == {"subnet-ids": [outputs["subnet_id"]], "first-interface-index": 1}
    assert plugin["ipam"] == {"pre-allocate": 8}  # whole numbers, not 8.0

    pulumi("preview", "--expect-no-changes")  # diff of outputs vs inputs is stable (no phantom updates)
    pulumi("refresh", "--yes", "--skip-preview")  # read() of every resource against the live objects
    pulumi("preview", "--expect-no-changes")  # ...and what read() returned diffs clean too
    pulumi("config", "set", "preAllocate", "16")
    pulumi("up", "--yes", "--skip-preview")
    live_cni = client.CoreV1Api(kube).read_namespaced_config_map("cni-configuration", kube_namespace)
    assert json.loads(live_cni.data["cni-config"])["plugins"][0]["ipam"] == {"pre-allocate": 16}

    pulumi("config", "set", "mask", "26")
    preview = pulumi("preview", check=False)
    output = preview.stdout + preview.stderr
    assert preview.returncode != 0
    assert "MP-POOL-3" in output and "cilium-ipam pools migrate" in output
    assert "Traceback" not in output  # a check failure, not an exception
    pulumi("config", "set", "mask", "24")

    pulumi("config", "set", "dualVpc", vpc)  # a VPC without IPv6: refused in preview (ENI-V6-4)
    preview = pulumi("preview", check=False)
    output = preview.stdout + preview.stderr
    assert preview.returncode != 0 and f"VPC {vpc} has no IPv6 CIDR block" in output
    assert "Traceback" not in output
    pulumi("config", "set", "dualVpc", dual_vpc)

    custom.create_cluster_custom_object(
        "cilium.io",
        "v2",
        "ciliumnodes",
        {
            "apiVersion": "cilium.io/v2",
            "kind": "CiliumNode",
            "metadata": {"name": node},
            "spec": {
                "ipam": {"pools": {"allocated": [{"pool": pool, "cidrs": [cidr.replace("/20", "/24")]}]}}
            },
        },
    )
    refused = pulumi("destroy", "--yes", "--skip-preview", check=False)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert f"CiliumPodIPPool {pool} is still in use (MP-POOL-2) by {node}" in output
    assert "Traceback" not in output and NO_TRACEBACK_FRAMES_FROM not in output  # the sentence alone
    assert custom.get_cluster_custom_object("cilium.io", "v2alpha1", "ciliumpodippools", pool)

    custom.delete_cluster_custom_object("cilium.io", "v2", "ciliumnodes", node)
    pulumi("destroy", "--yes", "--skip-preview")
    pools = custom.list_cluster_custom_object("cilium.io", "v2alpha1", "ciliumpodippools")["items"]
    assert pool not in [p["metadata"]["name"] for p in pools]
    assert moto_ec2.describe_tags(Filters=[{"Name": "resource-id", "Values": [subnet]}])["Tags"] == []
    assert moto_iam.list_attached_role_policies(RoleName=role)["AttachedPolicies"] == []
    assert moto_ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [dual_vpc]}])["Subnets"] == []
