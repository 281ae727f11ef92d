"""The `local` program through the REAL Pulumi engine against moto + the real kube-apiserver.

One stack lifecycle for the whole module (slow): the tests run in file order and each reads back
what the engine did with boto3 and the kubernetes client.

The project is a temp copy of the repo's Pulumi.yaml (same name/runtime; `main` at a shim that runs
stacks/__main__.py, the dispatcher) so `pulumi stack init` never writes a stack file into the repo.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

pytestmark = [pytest.mark.pulumi, pytest.mark.kube, pytest.mark.moto, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
AWS_ENV_KEYS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_DEFAULT_REGION",
    "AWS_REGION",
)


@dataclass
class LocalStack:
    """A `local` stack on the test engine, plus clients to read back what it did."""

    engine: Any
    project_dir: Path
    name: str
    vpc_id: str
    role_name: str
    namespace: str
    suffix: str
    ec2: Any
    iam: Any
    kube: Any
    connection: dict[str, str]

    @property
    def pools(self) -> dict[str, str]:
        return {f"e2e-{self.suffix}-a": "10.231.0.0/16", f"e2e-{self.suffix}-b": "10.232.0.0/16"}

    def config(self, **overrides: Any) -> dict[str, Any]:
        """The stack's `cilium-ipam:*` config; overrides replace whole keys."""
        pool_a, pool_b = self.pools
        values: dict[str, Any] = {
            "program": "local",
            "clusterName": f"e2e-{self.suffix}",
            "vpcId": self.vpc_id,
            "roleName": self.role_name,
            "namespace": self.namespace,
            "subnets": [
                {"name": "pods-a", "cidr": "10.0.1.0/24", "availabilityZone": "us-east-1a"},
                {"name": "pods-b", "cidr": "10.0.2.0/24", "availabilityZone": "us-east-1b"},
            ],
            "pools": {name: {"ipv4": {"cidrs": [cidr], "maskSize": 24}} for name, cidr in self.pools.items()},
            "nodeConfigs": {
                f"zone-{pool}": {
                    "namespace": self.namespace,
                    "defaultPool": pool,
                    "nodeSelector": {"matchLabels": {"topology.kubernetes.io/zone": zone}},
                }
                for pool, zone in ((pool_a, "dc1"), (pool_b, "dc2"))
            },
            "iam": {"releaseExcessIps": True},
            "ipam": {"pre-allocate": 8, "max-allocate": 64},
        }
        values.update(overrides)
        return values

    def write_config(self, values: dict[str, Any]) -> None:
        """Write the stack config file (keeping the secrets salt `stack init` put there)."""
        path = self.project_dir / f"Pulumi.{self.name}.yaml"
        document = yaml.safe_load(path.read_text()) if path.exists() else {}
        document = document or {}
        document["config"] = {
            **{f"cilium-ipam:{key}": value for key, value in values.items()},
            **{f"cilium-ipam:{key}": value for key, value in self.connection.items()},
        }
        path.write_text(yaml.safe_dump(document))

    def pulumi(self, *args: str, check: bool = True, select: bool = True) -> subprocess.CompletedProcess[str]:
        """Run `pulumi ARGS` on this stack (credentials for moto come from the moto fixture's env)."""
        env = {key: os.environ[key] for key in AWS_ENV_KEYS if key in os.environ}
        stack = ["--stack", self.name] if select else []
        return self.engine.run(
            [*args, *stack, "--non-interactive"], cwd=self.project_dir, check=check, extra_env=env
        )


def make_project(directory: Path) -> Path:
    """A temp project with the repo's Pulumi.yaml settings whose program is the repo's dispatcher."""
    project = yaml.safe_load((REPO / "Pulumi.yaml").read_text())
    project["main"] = "."
    project["runtime"]["options"]["virtualenv"] = str(REPO / ".venv")
    (directory / "Pulumi.yaml").write_text(yaml.safe_dump(project))
    (directory / "__main__.py").write_text(
        f"import runpy\nrunpy.run_path({str(REPO / 'stacks' / '__main__.py')!r}, run_name='__main__')\n"
    )
    return directory


@pytest.fixture(scope="module")
def local_stack(
    pulumi_engine: Any,
    moto_endpoint: str,
    moto_ec2: Any,
    moto_iam: Any,
    kube: Any,
    kubeconfig: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[LocalStack]:
    suffix = uuid.uuid4().hex[:8]
    vpc_id = moto_ec2.create_vpc(CidrBlock="10.0.0.0/16", AmazonProvidedIpv6CidrBlock=True)["Vpc"]["VpcId"]
    role_name = f"cilium-ipam-e2e-{suffix}"
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
        ],
    }
    moto_iam.create_role(RoleName=role_name, AssumeRolePolicyDocument=json.dumps(trust))
    namespace = f"e2e-{suffix}"
    client.CoreV1Api(kube).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
    stack = LocalStack(
        engine=pulumi_engine,
        project_dir=make_project(tmp_path_factory.mktemp("local-project")),
        name=f"e2e{suffix}",
        vpc_id=vpc_id,
        role_name=role_name,
        namespace=namespace,
        suffix=suffix,
        ec2=moto_ec2,
        iam=moto_iam,
        kube=kube,
        connection={"endpointUrl": moto_endpoint, "region": "us-east-1", "kubeconfig": kubeconfig},
    )
    stack.pulumi("stack", "init", stack.name, select=False)
    stack.write_config(stack.config())
    try:
        yield stack
    finally:
        stack.pulumi("destroy", "--yes", "--skip-preview", check=False)
        stack.pulumi("stack", "rm", "--yes", "--force", check=False)
        client.CoreV1Api(kube).delete_namespace(namespace)


def output(result: subprocess.CompletedProcess[str]) -> str:
    return result.stdout + result.stderr


def custom(kube: Any) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(kube)


def test_preview_with_an_overlapping_pool_fails_naming_the_policy(local_stack: LocalStack) -> None:
    """MP-POOL-5 in the real engine: the mandatory stack policy stops `pulumi preview`."""
    pools = local_stack.config()["pools"]
    overlapping = {
        **pools,
        f"e2e-{local_stack.suffix}-c": {"ipv4": {"cidrs": ["10.231.128.0/17"], "maskSize": 24}},
    }
    local_stack.write_config(local_stack.config(pools=overlapping))
    try:
        result = local_stack.pulumi("preview", "--policy-pack", str(REPO / "policies"), check=False)
    finally:
        local_stack.write_config(local_stack.config())
    text = output(result)
    assert result.returncode != 0, text
    assert "pools-no-overlap" in text
    assert "[mandatory]" in text
    assert f"CiliumPodIPPool 'e2e-{local_stack.suffix}-c' CIDR 10.231.128.0/17 overlaps" in text
    # Nothing reached the cluster or EC2: preview only.
    with pytest.raises(ApiException) as missing:
        custom(local_stack.kube).get_cluster_custom_object(
            "cilium.io", "v2alpha1", "ciliumpodippools", f"e2e-{local_stack.suffix}-a"
        )
    assert missing.value.status == 404


def test_up_with_the_pack_creates_subnets_tags_iam_pools_and_node_configs(local_stack: LocalStack) -> None:
    local_stack.pulumi("up", "--yes", "--skip-preview", "--policy-pack", str(REPO / "policies"))
    ec2, iam, kube = local_stack.ec2, local_stack.iam, local_stack.kube

    subnets = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [local_stack.vpc_id]}])["Subnets"]
    by_cidr = {s["CidrBlock"]: s for s in subnets}
    assert set(by_cidr) == {"10.0.1.0/24", "10.0.2.0/24"}
    for subnet in by_cidr.values():  # ENI-V6-4: every pod subnet is dual-stack with a /64
        (assoc,) = subnet["Ipv6CidrBlockAssociationSet"]
        assert assoc["Ipv6CidrBlock"].endswith("/64")
        tags = {t["Key"]: t["Value"] for t in subnet.get("Tags", [])}
        assert tags["cilium-ipam/pod-subnet"] == f"e2e-{local_stack.suffix}"

    vpc = ec2.describe_vpcs(VpcIds=[local_stack.vpc_id])["Vpcs"][0]
    assert {"Key": f"kubernetes.io/cluster/e2e-{local_stack.suffix}", "Value": "shared"} in vpc.get(
        "Tags", []
    )

    (attached,) = iam.list_attached_role_policies(RoleName=local_stack.role_name)["AttachedPolicies"]
    assert attached["PolicyName"] == f"cilium-ipam-e2e-{local_stack.suffix}"
    version = iam.get_policy(PolicyArn=attached["PolicyArn"])["Policy"]["DefaultVersionId"]
    document = iam.get_policy_version(PolicyArn=attached["PolicyArn"], VersionId=version)["PolicyVersion"][
        "Document"
    ]
    document = json.loads(document) if isinstance(document, str) else document
    actions = {a for statement in document["Statement"] for a in statement["Action"]}
    assert "ec2:UnassignPrivateIpAddresses" in actions  # ENI-PERM-1: release-excess configured
    assert not any("*" in action for action in actions)

    objects = custom(kube)
    for name, cidr in local_stack.pools.items():
        pool = objects.get_cluster_custom_object("cilium.io", "v2alpha1", "ciliumpodippools", name)
        assert pool["spec"]["ipv4"] == {"cidrs": [cidr], "maskSize": 24}
    configs = objects.list_namespaced_custom_object(
        "cilium.io", "v2", local_stack.namespace, "ciliumnodeconfigs"
    )
    defaults = {c["metadata"]["name"]: c["spec"]["defaults"] for c in configs["items"]}
    pool_a, pool_b = local_stack.pools
    assert defaults == {
        f"zone-{pool_a}": {"ipam-default-ip-pool": pool_a},
        f"zone-{pool_b}": {"ipam-default-ip-pool": pool_b},
    }
    config_map = client.CoreV1Api(kube).read_namespaced_config_map("cni-configuration", local_stack.namespace)
    assert '"max-allocate": 64' in config_map.data["cni-config"]

    outputs = json.loads(local_stack.pulumi("stack", "output", "--json").stdout)
    assert sorted(outputs["subnetIds"]) == sorted(s["SubnetId"] for s in subnets)
    assert outputs["policyArn"] == attached["PolicyArn"]


def test_capacity_is_advisory_and_policy_config_reaches_the_pack(
    local_stack: LocalStack, tmp_path: Path
) -> None:
    """--policy-pack-config: 1000 nodes exceed each /16 of /24 blocks (256); advisory, so preview succeeds."""
    pack_config = tmp_path / "pack-config.json"
    pack_config.write_text(json.dumps({"pool-capacity": {"nodeCount": 1000}}))
    result = local_stack.pulumi(
        "preview", "--policy-pack", str(REPO / "policies"), "--policy-pack-config", str(pack_config)
    )
    text = output(result)
    assert "[advisory]" in text and "pool-capacity" in text
    pool_a = next(iter(local_stack.pools))
    assert f"CiliumPodIPPool '{pool_a}' has 256 ipv4 blocks of /24 but 1000 nodes need 1000" in text
    quiet = output(local_stack.pulumi("preview", "--policy-pack", str(REPO / "policies")))
    assert "pool-capacity" not in quiet  # default nodeCount (3) fits


def test_a_mask_size_change_is_refused_and_the_pool_is_untouched(local_stack: LocalStack) -> None:
    """MP-POOL-3: maskSize is immutable; `pulumi up` fails and the live pool keeps /24."""
    pool_a = next(iter(local_stack.pools))
    pools = local_stack.config()["pools"]
    changed = {**pools, pool_a: {"ipv4": {"cidrs": [local_stack.pools[pool_a]], "maskSize": 26}}}
    local_stack.write_config(local_stack.config(pools=changed))
    try:
        result = local_stack.pulumi("up", "--yes", "--skip-preview", check=False)
    finally:
        local_stack.write_config(local_stack.config())
    text = output(result)
    assert result.returncode != 0, text
    assert "maskSize" in text
    live = custom(local_stack.kube).get_cluster_custom_object(
        "cilium.io", "v2alpha1", "ciliumpodippools", pool_a
    )
    assert live["spec"]["ipv4"]["maskSize"] == 24


def test_destroy_leaves_nothing_behind(local_stack: LocalStack) -> None:
    local_stack.pulumi("destroy", "--yes", "--skip-preview")
    ec2, iam, kube = local_stack.ec2, local_stack.iam, local_stack.kube
    assert ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [local_stack.vpc_id]}])["Subnets"] == []
    vpc_tags = ec2.describe_vpcs(VpcIds=[local_stack.vpc_id])["Vpcs"][0].get("Tags", [])
    assert not any(t["Key"].startswith("kubernetes.io/cluster/") for t in vpc_tags)
    assert iam.list_attached_role_policies(RoleName=local_stack.role_name)["AttachedPolicies"] == []
    names = [p["PolicyName"] for p in iam.list_policies(Scope="Local")["Policies"]]
    assert f"cilium-ipam-e2e-{local_stack.suffix}" not in names
    objects = custom(kube)
    for name in local_stack.pools:
        with pytest.raises(ApiException) as missing:
            objects.get_cluster_custom_object("cilium.io", "v2alpha1", "ciliumpodippools", name)
        assert missing.value.status == 404
    configs = objects.list_namespaced_custom_object(
        "cilium.io", "v2", local_stack.namespace, "ciliumnodeconfigs"
    )
    assert configs["items"] == []
    with pytest.raises(ApiException) as missing_cm:
        client.CoreV1Api(kube).read_namespaced_config_map("cni-configuration", local_stack.namespace)
    assert missing_cm.value.status == 404
