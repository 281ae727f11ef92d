"""`Ec2Tags`: a set of tags this stack owns on any EC2 resource (subnet / security-group selection tags,
exclude-interface-tags, cluster tags).

Why: ENI-PARAM-3/4/5 select subnets and security groups by tag, but those resources are often owned
by another stack. This resource touches only its own keys, so it can share a resource with others.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.dynamic import CheckFailure, CheckResult, CreateResult, DiffResult, ReadResult, UpdateResult

from ._connection import ConfiguredProvider, aws_client, aws_error_code
from ._props import changed_keys, is_unknown, string_map_errors, user_props
from .errors import ProviderError, user_facing

MAX_KEY, MAX_VALUE = 128, 256
NOT_FOUND_SUFFIX = ".NotFound"


class Ec2TagsProvider(ConfiguredProvider):
    """Adds, changes and removes only the keys listed in `tags`; other tags are never touched."""

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        props = user_props(news)
        failures: list[CheckFailure] = []
        resource_id = props.get("resource_id")
        if not is_unknown(resource_id) and (not isinstance(resource_id, str) or "-" not in resource_id):
            failures.append(
                CheckFailure(
                    "resource_id",
                    f"resource_id {resource_id!r} is not an EC2 resource id such as subnet-0abc or sg-0abc.",
                )
            )
        tags = props.get("tags")
        reason = string_map_errors(tags, "tags")
        if reason:
            failures.append(CheckFailure("tags", reason))
        elif tags is not None and not is_unknown(tags):
            failures.extend(_tag_failures(tags))
        if tags is None:
            failures.append(CheckFailure("tags", "tags must list at least one key to own."))
        return CheckResult(props, failures)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        old, new = user_props(olds), user_props(news)
        replaces = changed_keys(old, new, ("resource_id", "region"))
        updates = changed_keys(old, new, ("tags", "endpoint_url"))
        return DiffResult(changes=bool(replaces or updates), replaces=replaces, delete_before_replace=False)

    def _ec2(self, props: Mapping[str, Any]) -> Any:
        return aws_client("ec2", self.setting(props, "region"), self.setting(props, "endpoint_url"))

    @user_facing
    def create(self, props: dict[str, Any]) -> CreateResult:
        props = user_props(props)
        _put(self._ec2(props), props["resource_id"], props["tags"])
        return CreateResult(str(props["resource_id"]), props)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        props = user_props(props)
        ec2 = self._ec2(props)
        live = _live_tags(ec2, id_)
        owned = {k: live[k] for k in (props.get("tags") or {}) if k in live}
        if not owned:
            return ReadResult("", {})
        return ReadResult(id_, {**props, "tags": owned})

    @user_facing
    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        old, new = user_props(olds), user_props(news)
        ec2 = self._ec2(new)
        old_tags, new_tags = dict(old.get("tags") or {}), dict(new["tags"])
        removed = {k: v for k, v in old_tags.items() if k not in new_tags}
        changed = {k: v for k, v in new_tags.items() if old_tags.get(k) != v}
        if changed:
            _put(ec2, id_, changed)
        if removed:
            _remove(ec2, id_, removed)
        return UpdateResult(new)

    @user_facing
    def delete(self, id_: str, props: dict[str, Any]) -> None:
        props = user_props(props)
        _remove(self._ec2(props), id_, dict(props.get("tags") or {}))


def _tag_failures(tags: Mapping[str, Any]) -> list[CheckFailure]:
    failures = []
    for key, value in tags.items():
        if key.lower().startswith("aws:"):
            failures.append(
                CheckFailure("tags", f"tag key {key!r} uses the reserved 'aws:' prefix; rename it.")
            )
        if len(key) > MAX_KEY:
            failures.append(
                CheckFailure("tags", f"tag key {key[:20]!r}... is longer than {MAX_KEY} characters.")
            )
        if isinstance(value, str) and len(value) > MAX_VALUE:
            failures.append(
                CheckFailure("tags", f"tag {key!r} has a value longer than {MAX_VALUE} characters.")
            )
    return failures


def _put(ec2: Any, resource_id: str, tags: Mapping[str, str]) -> None:
    try:
        ec2.create_tags(
            Resources=[resource_id], Tags=[{"Key": k, "Value": v} for k, v in sorted(tags.items())]
        )
    except Exception as error:
        if aws_error_code(error).endswith(NOT_FOUND_SUFFIX) or aws_error_code(error) == "InvalidID":
            raise ProviderError(
                f"EC2 resource {resource_id} does not exist; fix resource_id or create the resource first."
            ) from None
        raise


def _remove(ec2: Any, resource_id: str, tags: Mapping[str, str]) -> None:
    """Delete our keys, each only while it still has our value (a key someone re-set is theirs now)."""
    if not tags:
        return
    try:
        ec2.delete_tags(
            Resources=[resource_id], Tags=[{"Key": k, "Value": v} for k, v in sorted(tags.items())]
        )
    except Exception as error:
        if not (aws_error_code(error).endswith(NOT_FOUND_SUFFIX) or aws_error_code(error) == "InvalidID"):
            raise


def _live_tags(ec2: Any, resource_id: str) -> dict[str, str]:
    tags: dict[str, str] = {}
    pages = ec2.get_paginator("describe_tags").paginate(
        Filters=[{"Name": "resource-id", "Values": [resource_id]}]
    )
    for page in pages:
        for tag in page["Tags"]:
            tags[tag["Key"]] = tag.get("Value", "")
    return tags


class Ec2Tags(pulumi.dynamic.Resource, module="cilium-ipam", name="Ec2Tags"):
    """Tags owned by this stack on one EC2 resource; outputs `tags` (the owned keys as last seen)."""

    resource_id: pulumi.Output[str]
    tags: pulumi.Output[dict[str, str]]

    def __init__(
        self,
        resource_name: str,
        *,
        resource_id: pulumi.Input[str],
        tags: pulumi.Input[Mapping[str, pulumi.Input[str]]],
        region: str | None = None,
        endpoint_url: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {"resource_id": resource_id, "tags": tags, "region": region, "endpoint_url": endpoint_url}
        super().__init__(Ec2TagsProvider(), resource_name, props, opts)
