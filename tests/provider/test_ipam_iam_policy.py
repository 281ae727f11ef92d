"""IpamIamPolicy against a real moto IAM server: ENI-PERM-1 policy created, attached, updated, deleted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from provider.iam_actions import BASE_ACTIONS
from provider.ipam_iam_policy import IpamIamPolicyProvider

pytestmark = pytest.mark.moto

TRUST = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
        ],
    }
)


@pytest.fixture()
def role(moto_iam: Any, request: pytest.FixtureRequest) -> str:
    name = f"op-{abs(hash(request.node.name)) % 10**8}"
    moto_iam.create_role(RoleName=name, AssumeRolePolicyDocument=TRUST)
    return name


def props(endpoint: str, role: str, **options: Any) -> dict[str, Any]:
    base = {
        "role_name": role,
        "policy_name": f"pol-{role}",
        "path": "/",
        "endpoint_url": endpoint,
        "region": "us-east-1",
        "__provider": "opaque",
    }
    return {**base, **options}


def attached(iam: Any, role: str) -> list[str]:
    return [p["PolicyArn"] for p in iam.list_attached_role_policies(RoleName=role)["AttachedPolicies"]]


def live_actions(iam: Any, arn: str) -> list[str]:
    policy = iam.get_policy(PolicyArn=arn)["Policy"]
    version = iam.get_policy_version(PolicyArn=arn, VersionId=policy["DefaultVersionId"])
    doc = version["PolicyVersion"]["Document"]
    doc = json.loads(doc) if isinstance(doc, str) else doc
    return list(doc["Statement"][0]["Action"])


def test_eni_perm_1_create_attaches_exact_policy_and_delete_leaves_nothing(
    moto_iam: Any, moto_endpoint: str, role: str
) -> None:
    provider = IpamIamPolicyProvider()
    inputs = provider.check({}, props(moto_endpoint, role, release_excess_ips=True)).inputs
    created = provider.create(inputs)
    arn = created.id
    assert created.outs is not None and created.outs["policy_arn"] == arn
    assert attached(moto_iam, role) == [arn]
    extra = ["ec2:DescribeTags", "ec2:UnassignPrivateIpAddresses"]
    expected = sorted([f"ec2:{a}" for a in BASE_ACTIONS] + extra)
    assert live_actions(moto_iam, arn) == expected
    assert json.loads(created.outs["document"])["Statement"][0]["Action"] == expected

    again = provider.create(inputs)  # a retried create converges on the same policy
    assert again.id == arn and attached(moto_iam, role) == [arn]

    read = provider.read(arn, created.outs)
    assert read.id == arn and read.outs is not None and read.outs["document"] == created.outs["document"]

    provider.delete(arn, created.outs)
    provider.delete(arn, created.outs)  # idempotent
    assert attached(moto_iam, role) == []
    assert provider.read(arn, created.outs).id == ""


def test_eni_perm_1_option_change_updates_policy_in_place(
    moto_iam: Any, moto_endpoint: str, role: str
) -> None:
    provider = IpamIamPolicyProvider()
    old_inputs = provider.check({}, props(moto_endpoint, role, cluster_name="prod")).inputs
    created = provider.create(old_inputs)
    assert created.outs is not None
    assert "ec2:AssignIpv6Addresses" not in live_actions(moto_iam, created.id)
    new_inputs = provider.check(old_inputs, props(moto_endpoint, role, cluster_name="prod", ipv6=True)).inputs
    diff = provider.diff(created.id, created.outs, new_inputs)
    assert diff.changes and not diff.replaces
    for _ in range(6):  # more versions than IAM keeps: the oldest is pruned, never an error
        toggled = not new_inputs.get("static_ip", False)
        new_inputs = {**new_inputs, "static_ip": toggled}
        outs = provider.update(created.id, created.outs, new_inputs).outs
        assert outs is not None
        created.outs = outs
    actions = live_actions(moto_iam, created.id)
    assert "ec2:AssignIpv6Addresses" in actions and "ec2:DescribeTags" not in actions
    provider.delete(created.id, created.outs)


def test_role_change_moves_attachment_and_name_change_replaces(
    moto_iam: Any, moto_endpoint: str, role: str
) -> None:
    provider = IpamIamPolicyProvider()
    other = f"{role}-b"
    moto_iam.create_role(RoleName=other, AssumeRolePolicyDocument=TRUST)
    inputs = provider.check({}, props(moto_endpoint, role)).inputs
    created = provider.create(inputs)
    assert created.outs is not None
    moved = {**inputs, "role_name": other}
    assert provider.diff(created.id, created.outs, moved).replaces == []
    outs = provider.update(created.id, created.outs, moved).outs
    assert attached(moto_iam, role) == [] and attached(moto_iam, other) == [created.id]
    renamed = provider.diff(created.id, created.outs, {**moved, "policy_name": "other-name"})
    assert renamed.replaces == ["policy_name"] and not renamed.delete_before_replace  # no permission gap
    moved_path = provider.diff(created.id, created.outs, {**moved, "path": "/ipam/"})
    assert moved_path.replaces == ["path"] and moved_path.delete_before_replace  # same name must be freed
    assert outs is not None
    provider.delete(created.id, outs)
    assert attached(moto_iam, other) == []


def test_check_rejects_bad_names_and_tolerates_unknowns() -> None:
    from provider._props import UNKNOWN

    provider = IpamIamPolicyProvider()
    result = provider.check(
        {}, {"role_name": "bad role!", "policy_name": "ok", "ipv6": "yes", "eni_gc_tags": {"a": 1}}
    )
    reasons = {f.property: f.reason for f in result.failures}
    assert set(reasons) == {"role_name", "ipv6", "eni_gc_tags"}
    assert "not a valid IAM name" in reasons["role_name"]
    preview = {"role_name": UNKNOWN, "policy_name": "p", "cluster_name": UNKNOWN}
    assert provider.check({}, preview).failures == []


def test_missing_role_is_one_clear_error_and_leaves_no_policy(moto_iam: Any, moto_endpoint: str) -> None:
    from provider.errors import ProviderError

    provider = IpamIamPolicyProvider()
    inputs = provider.check({}, props(moto_endpoint, "no-such-role")).inputs
    with pytest.raises(ProviderError, match="IAM role no-such-role does not exist"):
        provider.create(inputs)
    names = [p["PolicyName"] for p in moto_iam.list_policies(Scope="Local")["Policies"]]
    assert "pol-no-such-role" not in names
