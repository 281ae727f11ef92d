"""Foundation: the moto server fixture answers real EC2/IAM wire calls made by boto3 (issue 2)."""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest

pytestmark = pytest.mark.moto


def test_boto3_creates_vpc_and_dual_stack_subnet_in_moto(moto_ec2: Any) -> None:
    """A VPC and a subnet created over HTTP are visible to later describe calls."""
    vpc = moto_ec2.create_vpc(CidrBlock="10.0.0.0/16", AmazonProvidedIpv6CidrBlock=True)["Vpc"]
    subnet = moto_ec2.create_subnet(
        VpcId=vpc["VpcId"], CidrBlock="10.0.1.0/24", AvailabilityZone="us-east-1a"
    )["Subnet"]
    assert subnet["VpcId"] == vpc["VpcId"]
    described = moto_ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc["VpcId"]]}])["Subnets"]
    assert [s["SubnetId"] for s in described] == [subnet["SubnetId"]]
    assert described[0]["CidrBlock"] == "10.0.1.0/24"
    assert described[0]["AvailableIpAddressCount"] == 251  # 256 minus the 5 addresses AWS reserves


def test_moto_endpoint_is_loopback_and_credentials_are_dummy(moto_endpoint: str, moto_iam: Any) -> None:
    """The server listens on 127.0.0.1 only and the session never sees real credentials."""
    assert moto_endpoint.startswith("http://127.0.0.1:")
    assert os.environ["AWS_ACCESS_KEY_ID"] == "testing"
    name = f"cilium-operator-{uuid.uuid4().hex[:8]}"
    role = moto_iam.create_role(RoleName=name, AssumeRolePolicyDocument="{}")["Role"]
    assert role["RoleName"] == name
    assert moto_iam.get_role(RoleName=name)["Role"]["Arn"].endswith(f":role/{name}")
