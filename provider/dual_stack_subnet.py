"""`DualStackSubnet`: a subnet with an IPv4 CIDR and a /64 of the VPC's IPv6 block (ENI-V6-4).

Why: Cilium's IPv6 ENI mode needs every pod-ENI subnet to be dual-stack (each ENI needs a primary
IPv4, IPv6 prefixes come from the subnet's /64). Declaring such subnets through this resource makes a
VPC without IPv6 fail in preview with one clear sentence instead of at ENI creation time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.dynamic import CheckFailure, CheckResult, CreateResult, DiffResult, ReadResult, UpdateResult

from ._connection import ConfiguredProvider, aws_client, aws_error_code
from ._props import changed_keys, is_unknown, string_map_errors, user_props
from .cidr import Network, is_within, next_free_subnet, parse_network
from .errors import ProviderError, user_facing

IPV4_PREFIXES = range(16, 29)  # EC2-SIM-2: IPv4 subnets are /16 .. /28
IPV6_SUBNET_PREFIX = 64
REPLACE_KEYS = ("vpc_id", "cidr_block", "availability_zone", "ipv6_cidr_block", "region")
UPDATE_KEYS = ("tags", "assign_ipv6_address_on_creation", "endpoint_url")


class NoIpv6Error(ProviderError):
    """The VPC has no IPv6 CIDR block, so a dual-stack subnet cannot be made (ENI-V6-4)."""


class DualStackSubnetProvider(ConfiguredProvider):
    """Creates the subnet, picks the next free /64 unless one is given, keeps tags and the IPv6 flag."""

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        props = user_props(news)
        props.setdefault("assign_ipv6_address_on_creation", True)
        failures: list[CheckFailure] = []
        vpc_id = props.get("vpc_id")
        if not is_unknown(vpc_id) and (not isinstance(vpc_id, str) or not vpc_id.startswith("vpc-")):
            failures.append(CheckFailure("vpc_id", f"vpc_id {vpc_id!r} is not a VPC id such as vpc-0abc."))
        failures += _cidr_failures(props)
        reason = string_map_errors(props.get("tags"), "tags")
        if reason:
            failures.append(CheckFailure("tags", reason))
        az = props.get("availability_zone")
        if az is not None and not is_unknown(az) and (not isinstance(az, str) or not az):
            failures.append(CheckFailure("availability_zone", "availability_zone must be a zone name."))
        if not failures and not is_unknown(vpc_id):
            failures += self._vpc_failures(props)
        return CheckResult(props, failures)

    def _vpc_failures(self, props: Mapping[str, Any]) -> list[CheckFailure]:
        """ENI-V6-4 in preview: only when the VPC is known and reachable; otherwise create() decides."""
        try:
            blocks = _vpc_ipv6_blocks(self._ec2(props, quick=True), str(props["vpc_id"]))
        except ProviderError as error:  # no IPv6 block (ENI-V6-4) or no such VPC: both are the user's to fix
            return [CheckFailure("vpc_id", str(error))]
        except Exception:  # unreachable endpoint or missing credentials during preview: defer to create()
            return []
        wanted = props.get("ipv6_cidr_block")
        if not isinstance(wanted, str) or not wanted:
            return []
        if not any(is_within(parse_network(wanted), block) for block in blocks):
            return [
                CheckFailure(
                    "ipv6_cidr_block",
                    f"ipv6_cidr_block {wanted} is outside the IPv6 block(s) of "
                    f"{props['vpc_id']} ({', '.join(map(str, blocks))}); pick a /64 inside it.",
                )
            ]
        return []

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        old, new = user_props(olds), user_props(news)
        replace_keys = list(REPLACE_KEYS)
        if not new.get("ipv6_cidr_block"):
            replace_keys.remove("ipv6_cidr_block")  # "next free" was resolved at create time
        replaces = changed_keys(old, new, replace_keys)
        updates = changed_keys(old, new, UPDATE_KEYS)
        same_cidr = old.get("vpc_id") == new.get("vpc_id") and old.get("cidr_block") == new.get("cidr_block")
        return DiffResult(
            changes=bool(replaces or updates),
            replaces=replaces,
            delete_before_replace=bool(replaces) and same_cidr,
        )

    def _ec2(self, props: Mapping[str, Any], quick: bool = False) -> Any:
        return aws_client("ec2", self.setting(props, "region"), self.setting(props, "endpoint_url"), quick)

    @user_facing
    def create(self, props: dict[str, Any]) -> CreateResult:
        props = user_props(props)
        ec2 = self._ec2(props)
        vpc_id, cidr = str(props["vpc_id"]), str(props["cidr_block"])
        blocks = _vpc_ipv6_blocks(ec2, vpc_id)
        existing = _subnets(ec2, vpc_id)
        adopted = _adoptable(existing, props)
        if adopted is not None:
            subnet = adopted
        else:
            ipv6 = _pick_ipv6(props, blocks, existing)
            request: dict[str, Any] = {"VpcId": vpc_id, "CidrBlock": cidr, "Ipv6CidrBlock": str(ipv6)}
            if props.get("availability_zone"):
                request["AvailabilityZone"] = props["availability_zone"]
            tags = dict(props.get("tags") or {})
            if tags:
                request["TagSpecifications"] = [{"ResourceType": "subnet", "Tags": _tag_list(tags)}]
            try:
                subnet = ec2.create_subnet(**request)["Subnet"]
            except Exception as error:
                if aws_error_code(error) in ("InvalidSubnet.Conflict", "InvalidSubnet.Range"):
                    raise ProviderError(
                        f"Subnet {cidr} cannot be created in {vpc_id}: "
                        f"{_message(error)}; choose a free CIDR inside the VPC."
                    ) from None
                raise
        _set_assign_flag(ec2, subnet["SubnetId"], bool(props.get("assign_ipv6_address_on_creation", True)))
        return CreateResult(subnet["SubnetId"], _outputs(props, subnet))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        props = user_props(props)
        subnet = _subnet(self._ec2(props), id_)
        if subnet is None:
            return ReadResult("", {})
        live_tags = {t["Key"]: t["Value"] for t in subnet.get("Tags", [])}
        owned = {k: live_tags[k] for k in (props.get("tags") or {}) if k in live_tags}
        live = {
            "vpc_id": subnet["VpcId"],
            "cidr_block": subnet["CidrBlock"],
            "availability_zone": subnet["AvailabilityZone"],
            "ipv6_cidr_block": _ipv6_of(subnet),
        }
        # Only what the user set can drift; an omitted AZ or /64 stays omitted (live value: *_assigned).
        drifted = {key: value for key, value in live.items() if props.get(key)}
        outs = _outputs(
            {
                **props,
                **drifted,
                "tags": owned,
                "assign_ipv6_address_on_creation": subnet.get("AssignIpv6AddressOnCreation", False),
            },
            subnet,
        )
        return ReadResult(id_, outs)

    @user_facing
    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        old, new = user_props(olds), user_props(news)
        ec2 = self._ec2(new)
        old_tags, new_tags = dict(old.get("tags") or {}), dict(new.get("tags") or {})
        changed = {k: v for k, v in new_tags.items() if old_tags.get(k) != v}
        removed = [k for k in old_tags if k not in new_tags]
        if changed:
            ec2.create_tags(Resources=[id_], Tags=_tag_list(changed))
        if removed:
            ec2.delete_tags(Resources=[id_], Tags=[{"Key": k} for k in removed])
        flag = bool(new.get("assign_ipv6_address_on_creation", True))
        if flag != bool(old.get("assign_ipv6_address_on_creation", True)):
            _set_assign_flag(ec2, id_, flag)
        subnet = _subnet(ec2, id_)
        if subnet is None:
            raise ProviderError(f"Subnet {id_} no longer exists; run `pulumi refresh` so it is re-created.")
        return UpdateResult(_outputs(new, subnet))

    @user_facing
    def delete(self, id_: str, props: dict[str, Any]) -> None:
        ec2 = self._ec2(user_props(props))
        try:
            ec2.delete_subnet(SubnetId=id_)
        except Exception as error:
            code = aws_error_code(error)
            if code == "InvalidSubnetID.NotFound":
                return
            if code == "DependencyViolation":
                raise ProviderError(
                    f"Subnet {id_} still has network interfaces (pod ENIs?); drain the nodes "
                    "using it or let the ENI GC delete them, then retry."
                ) from None
            raise


def _cidr_failures(props: Mapping[str, Any]) -> list[CheckFailure]:
    failures = []
    cidr = props.get("cidr_block")
    if not is_unknown(cidr):
        try:
            network = parse_network(cidr, 4)
            if network.prefixlen not in IPV4_PREFIXES:
                failures.append(CheckFailure("cidr_block", f"cidr_block {cidr} must be between /16 and /28."))
        except ValueError as error:
            failures.append(CheckFailure("cidr_block", f"cidr_block: {error}."))
    ipv6 = props.get("ipv6_cidr_block")
    if ipv6 and not is_unknown(ipv6):
        try:
            if parse_network(ipv6, 6).prefixlen != IPV6_SUBNET_PREFIX:
                failures.append(CheckFailure("ipv6_cidr_block", f"ipv6_cidr_block {ipv6} must be a /64."))
        except ValueError as error:
            failures.append(CheckFailure("ipv6_cidr_block", f"ipv6_cidr_block: {error}."))
    flag = props.get("assign_ipv6_address_on_creation")
    if not is_unknown(flag) and not isinstance(flag, bool):
        failures.append(CheckFailure("assign_ipv6_address_on_creation", "must be true or false."))
    return failures


def _vpc_ipv6_blocks(ec2: Any, vpc_id: str) -> list[Network]:
    try:
        vpcs = ec2.describe_vpcs(VpcIds=[vpc_id])["Vpcs"]
    except Exception as error:
        if aws_error_code(error) == "InvalidVpcID.NotFound":
            raise ProviderError(f"VPC {vpc_id} does not exist; fix vpc_id.") from None
        raise
    blocks = [
        parse_network(assoc["Ipv6CidrBlock"])
        for vpc in vpcs
        for assoc in vpc.get("Ipv6CidrBlockAssociationSet", [])
        if _is_live(assoc)
    ]
    if not blocks:
        raise NoIpv6Error(
            f"VPC {vpc_id} has no IPv6 CIDR block, so a dual-stack subnet cannot be created "
            "(ENI-V6-4); associate an IPv6 block with the VPC (e.g. Amazon-provided /56) first."
        )
    return blocks


def _is_live(association: Mapping[str, Any]) -> bool:
    """An IPv6 association that is (or is becoming) usable: not disassociating/disassociated/failed."""
    state = str(association.get("Ipv6CidrBlockState", {}).get("State", "associated"))
    return "disassoc" not in state and "fail" not in state  # substring test: moto nests the state text


def _subnets(ec2: Any, vpc_id: str) -> list[dict[str, Any]]:
    subnets: list[dict[str, Any]] = []
    for page in ec2.get_paginator("describe_subnets").paginate(
        Filters=[{"Name": "vpc-id", "Values": [vpc_id]}]
    ):
        subnets.extend(page["Subnets"])
    return subnets


def _subnet(ec2: Any, subnet_id: str) -> dict[str, Any] | None:
    try:
        subnets = ec2.describe_subnets(SubnetIds=[subnet_id])["Subnets"]
    except Exception as error:
        if aws_error_code(error) == "InvalidSubnetID.NotFound":
            return None
        raise
    return subnets[0] if subnets else None


def _ipv6_of(subnet: Mapping[str, Any]) -> str:
    for assoc in subnet.get("Ipv6CidrBlockAssociationSet", []):
        if _is_live(assoc):
            return str(assoc["Ipv6CidrBlock"])
    return ""


def _adoptable(existing: list[dict[str, Any]], props: Mapping[str, Any]) -> dict[str, Any] | None:
    """A subnet a previous, interrupted create of these same inputs left behind (same CIDR, our tags)."""
    tags = dict(props.get("tags") or {})
    for subnet in existing:
        if subnet["CidrBlock"] != props["cidr_block"] or not _ipv6_of(subnet):
            continue
        live = {t["Key"]: t["Value"] for t in subnet.get("Tags", [])}
        wanted_v6 = props.get("ipv6_cidr_block")
        if (
            tags
            and all(live.get(k) == v for k, v in tags.items())
            and wanted_v6 in (None, "", _ipv6_of(subnet))
        ):
            return subnet
    return None


def _pick_ipv6(props: Mapping[str, Any], blocks: list[Network], existing: list[dict[str, Any]]) -> Network:
    wanted = props.get("ipv6_cidr_block")
    if wanted:
        network = parse_network(wanted, 6)
        if not any(is_within(network, block) for block in blocks):
            raise ProviderError(
                f"ipv6_cidr_block {wanted} is outside the IPv6 block of {props['vpc_id']}; "
                "pick a /64 inside it."
            )
        return network
    used = [parse_network(v6) for v6 in map(_ipv6_of, existing) if v6]
    for block in blocks:
        free = next_free_subnet(block, IPV6_SUBNET_PREFIX, used)
        if free is not None:
            return free
    raise ProviderError(
        f"VPC {props['vpc_id']} has no free /64 left in its IPv6 block; delete unused subnets "
        "or associate another IPv6 block."
    )


def _set_assign_flag(ec2: Any, subnet_id: str, value: bool) -> None:
    ec2.modify_subnet_attribute(SubnetId=subnet_id, AssignIpv6AddressOnCreation={"Value": value})


def _tag_list(tags: Mapping[str, str]) -> list[dict[str, str]]:
    return [{"Key": k, "Value": v} for k, v in sorted(tags.items())]


def _message(error: Exception) -> str:
    response = getattr(error, "response", {}) or {}
    return str(response.get("Error", {}).get("Message", error)).rstrip(".")


def _outputs(props: Mapping[str, Any], subnet: Mapping[str, Any]) -> dict[str, Any]:
    return {
        **props,
        "subnet_id": subnet["SubnetId"],
        "ipv6_cidr_block_assigned": _ipv6_of(subnet),
        "availability_zone_assigned": subnet.get("AvailabilityZone", ""),
    }


class DualStackSubnet(pulumi.dynamic.Resource, module="cilium-ipam", name="DualStackSubnet"):
    """A dual-stack subnet; outputs `subnet_id` and `ipv6_cidr_block_assigned` (the /64 it got)."""

    subnet_id: pulumi.Output[str]
    ipv6_cidr_block_assigned: pulumi.Output[str]
    availability_zone_assigned: pulumi.Output[str]

    def __init__(
        self,
        resource_name: str,
        *,
        vpc_id: pulumi.Input[str],
        cidr_block: pulumi.Input[str],
        availability_zone: pulumi.Input[str] | None = None,
        ipv6_cidr_block: pulumi.Input[str] | None = None,
        tags: pulumi.Input[Mapping[str, pulumi.Input[str]]] | None = None,
        assign_ipv6_address_on_creation: bool = True,
        region: str | None = None,
        endpoint_url: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props: dict[str, Any] = {
            "vpc_id": vpc_id,
            "cidr_block": cidr_block,
            "availability_zone": availability_zone,
            "ipv6_cidr_block": ipv6_cidr_block,
            "tags": tags or {},
            "assign_ipv6_address_on_creation": assign_ipv6_address_on_creation,
            "region": region,
            "endpoint_url": endpoint_url,
            "subnet_id": None,
            "ipv6_cidr_block_assigned": None,
            "availability_zone_assigned": None,
        }
        super().__init__(DualStackSubnetProvider(), resource_name, props, opts)
