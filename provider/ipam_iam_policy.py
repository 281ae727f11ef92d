"""`IpamIamPolicy`: the operator's least-privilege IAM policy (ENI-PERM-1), attached to its role.

Why: the action list depends on operator options; computing it from the same options the stack
passes to the operator keeps permissions exact -- no wildcard, nothing missing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.dynamic import CheckFailure, CheckResult, CreateResult, DiffResult, ReadResult, UpdateResult

from ._connection import ConfiguredProvider, aws_client, aws_error_code
from ._props import changed_keys, is_unknown, string_map_errors, user_props
from .errors import ProviderError, user_facing
from .iam_actions import IpamPermissionOptions, policy_json, required_ec2_actions

IAM_NAME = re.compile(r"^[\w+=,.@-]{1,128}$")
IAM_PATH = re.compile(r"^/([\x21-\x7e]*/)?$")
OPTION_KEYS = (
    "release_excess_ips",
    "ipv6",
    "eni_gc",
    "cluster_name",
    "eni_gc_tags",
    "instance_tags_filter",
    "static_ip",
)
BOOL_KEYS = ("release_excess_ips", "ipv6", "eni_gc", "static_ip")
MAX_POLICY_VERSIONS = 5


class IpamIamPolicyProvider(ConfiguredProvider):
    """Creates the managed policy (or a new default version of it) and attaches it to one role."""

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        props = user_props(news)
        failures: list[CheckFailure] = []
        for key in ("role_name", "policy_name"):
            value = props.get(key)
            if is_unknown(value):
                continue
            if not isinstance(value, str) or not IAM_NAME.match(value):
                reason = f"{key} {value!r} is not a valid IAM name (1-128 of letters, digits, +=,.@_-)."
                failures.append(CheckFailure(key, reason))
        path = props.setdefault("path", "/")
        if not is_unknown(path) and (not isinstance(path, str) or not IAM_PATH.match(path)):
            failures.append(CheckFailure("path", f"path {path!r} must start and end with '/'."))
        for key in BOOL_KEYS:
            value = props.get(key)
            if value is not None and not is_unknown(value) and not isinstance(value, bool):
                failures.append(CheckFailure(key, f"{key} must be true or false, got {value!r}."))
        for key in ("eni_gc_tags", "instance_tags_filter"):
            map_reason = string_map_errors(props.get(key), key)
            if map_reason:
                failures.append(CheckFailure(key, map_reason))
        cluster = props.get("cluster_name")
        if cluster is not None and not is_unknown(cluster) and not isinstance(cluster, str):
            failures.append(CheckFailure("cluster_name", "cluster_name must be a string."))
        return CheckResult(props, failures)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        old, new = user_props(olds), user_props(news)
        replaces = changed_keys(old, new, ("policy_name", "path", "region"))
        updates = changed_keys(old, new, (*OPTION_KEYS, "role_name", "endpoint_url"))
        return DiffResult(
            changes=bool(replaces or updates),
            replaces=replaces,
            # create-before-delete keeps the operator's permissions continuous; only a path change
            # under the same (account-unique) name must free the name first
            delete_before_replace=bool(replaces) and "policy_name" not in replaces,
        )

    def _iam(self, props: Mapping[str, Any]) -> Any:
        return aws_client("iam", self.setting(props, "region"), self.setting(props, "endpoint_url"))

    @user_facing
    def create(self, props: dict[str, Any]) -> CreateResult:
        props = user_props(props)
        iam = self._iam(props)
        document = policy_json(IpamPermissionOptions.from_props(props))
        arn = _find_policy_arn(iam, props["policy_name"], props.get("path", "/"))
        created_now = arn is None
        if arn is None:
            arn = iam.create_policy(
                PolicyName=props["policy_name"],
                Path=props.get("path", "/"),
                PolicyDocument=document,
                Description="cilium-ipam operator: least-privilege EC2 actions (ENI-PERM-1)",
            )["Policy"]["Arn"]
        else:
            _set_default_document(iam, arn, document)  # a retried create converges on the same policy
        try:
            _attach(iam, str(props["role_name"]), arn)
        except Exception:
            if created_now:  # create is transactional: no orphan policy when the attach fails
                iam.delete_policy(PolicyArn=arn)
            raise
        return CreateResult(arn, _outputs(props, arn, document))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        props = user_props(props)
        iam = self._iam(props)
        try:
            policy = iam.get_policy(PolicyArn=id_)["Policy"]
        except Exception as error:
            if aws_error_code(error) == "NoSuchEntity":
                return ReadResult("", {})
            raise
        document = _version_text(iam, id_, policy["DefaultVersionId"])
        return ReadResult(id_, {**props, "policy_arn": id_, "document": document})

    @user_facing
    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        old, new = user_props(olds), user_props(news)
        iam = self._iam(new)
        document = policy_json(IpamPermissionOptions.from_props(new))
        if document != old.get("document"):
            _set_default_document(iam, id_, document)
        if old.get("role_name") != new["role_name"]:
            _attach(iam, str(new["role_name"]), id_)
            _detach_quietly(iam, str(old.get("role_name")), id_)
        return UpdateResult(_outputs(new, id_, document))

    @user_facing
    def delete(self, id_: str, props: dict[str, Any]) -> None:
        props = user_props(props)
        iam = self._iam(props)
        _detach_quietly(iam, str(props.get("role_name", "")), id_)
        try:
            versions = iam.list_policy_versions(PolicyArn=id_)["Versions"]
            for version in versions:
                if not version["IsDefaultVersion"]:
                    iam.delete_policy_version(PolicyArn=id_, VersionId=version["VersionId"])
            iam.delete_policy(PolicyArn=id_)
        except Exception as error:
            code = aws_error_code(error)
            if code == "NoSuchEntity":
                return
            if code == "DeleteConflict":
                raise ProviderError(
                    f"IAM policy {id_} is still attached to other roles, users or groups; "
                    "detach them, then run the delete again."
                ) from None
            raise


def _outputs(props: Mapping[str, Any], arn: str, document: str) -> dict[str, Any]:
    actions = list(required_ec2_actions(IpamPermissionOptions.from_props(props)))
    return {**props, "policy_arn": arn, "document": document, "actions": actions}


def _find_policy_arn(iam: Any, name: str, path: str) -> str | None:
    for page in iam.get_paginator("list_policies").paginate(Scope="Local", PathPrefix=path):
        for policy in page["Policies"]:
            if policy["PolicyName"] == name and policy.get("Path", "/") == path:
                return str(policy["Arn"])
    return None


def _set_default_document(iam: Any, arn: str, document: str) -> None:
    """Make `document` the default version, pruning the oldest version when IAM's limit of 5 is hit."""
    versions = iam.list_policy_versions(PolicyArn=arn)["Versions"]
    default = next(v for v in versions if v["IsDefaultVersion"])
    if _version_text(iam, arn, default["VersionId"]) == document:
        return
    if len(versions) >= MAX_POLICY_VERSIONS:
        oldest = min((v for v in versions if not v["IsDefaultVersion"]), key=lambda v: v["CreateDate"])
        iam.delete_policy_version(PolicyArn=arn, VersionId=oldest["VersionId"])
    iam.create_policy_version(PolicyArn=arn, PolicyDocument=document, SetAsDefault=True)


def _version_text(iam: Any, arn: str, version_id: str) -> str:
    """A policy version's document as canonical JSON (moto and AWS return it URL-decoded or parsed)."""
    raw = iam.get_policy_version(PolicyArn=arn, VersionId=version_id)["PolicyVersion"]["Document"]
    parsed = json.loads(raw) if isinstance(raw, str) else raw
    return json.dumps(parsed, sort_keys=True, separators=(",", ":"))


def _attach(iam: Any, role_name: str, arn: str) -> None:
    try:
        iam.attach_role_policy(RoleName=role_name, PolicyArn=arn)
    except Exception as error:
        if aws_error_code(error) == "NoSuchEntity":
            raise ProviderError(
                f"IAM role {role_name} does not exist, so policy {arn} cannot be attached; create the role "
                "first or fix role_name."
            ) from None
        raise


def _detach_quietly(iam: Any, role_name: str, arn: str) -> None:
    if not role_name:
        return
    try:
        iam.detach_role_policy(RoleName=role_name, PolicyArn=arn)
    except Exception as error:
        if aws_error_code(error) != "NoSuchEntity":
            raise


class IpamIamPolicy(pulumi.dynamic.Resource, module="cilium-ipam", name="IpamIamPolicy"):
    """The operator's IAM policy; outputs `policy_arn`, `document` (JSON) and `actions`."""

    policy_arn: pulumi.Output[str]
    document: pulumi.Output[str]
    actions: pulumi.Output[list[str]]

    def __init__(
        self,
        resource_name: str,
        *,
        role_name: pulumi.Input[str],
        policy_name: pulumi.Input[str] | None = None,
        path: str = "/",
        release_excess_ips: bool = False,
        ipv6: bool = False,
        eni_gc: bool = True,
        cluster_name: pulumi.Input[str] | None = None,
        eni_gc_tags: Mapping[str, str] | None = None,
        instance_tags_filter: Mapping[str, str] | None = None,
        static_ip: bool = False,
        region: str | None = None,
        endpoint_url: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props: dict[str, Any] = {
            "role_name": role_name,
            "policy_name": policy_name or f"cilium-ipam-{resource_name}",
            "path": path,
            "release_excess_ips": release_excess_ips,
            "ipv6": ipv6,
            "eni_gc": eni_gc,
            "cluster_name": cluster_name or "",
            "eni_gc_tags": dict(eni_gc_tags or {}),
            "instance_tags_filter": dict(instance_tags_filter or {}),
            "static_ip": static_ip,
            "region": region,
            "endpoint_url": endpoint_url,
            "policy_arn": None,
            "document": None,
            "actions": None,
        }
        super().__init__(IpamIamPolicyProvider(), resource_name, props, opts)
