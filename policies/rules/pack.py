"""The policy objects of the `cilium-ipam` pack, wired to the pure checks.

Lives in an importable module (not `__main__`) because the PolicyPack constructor starts a gRPC
server and blocks: tests import `POLICIES` and call each policy's `validate` directly.
Correctness rules are MANDATORY (they block `pulumi up`); capacity is ADVISORY.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from . import eni_rules, pool_rules, stack_rules
from .config import effective_config, schema
from .views import (
    AWS_IAM_POLICY_TYPES,
    AWS_SUBNET_TYPE,
    CNI_CONFIGURATION,
    DUAL_STACK_SUBNET,
    IAM_POLICY,
    POOL,
    IamView,
    PoolView,
    iam_view,
    pool_view,
    resource_kind,
    subnet_view,
    watermarks_view,
)

PACK_NAME = "cilium-ipam"
MANDATORY = EnforcementLevel.MANDATORY
ADVISORY = EnforcementLevel.ADVISORY

POOL_CIDRS = "pool-cidrs-canonical"
POOL_MASK_SIZE = "pool-mask-size-bounds"
POOL_USABLE = "pool-block-usable-addresses"
POOL_IPV6_MASK = "pool-ipv6-mask-rules"
ENI_WATERMARKS = "eni-watermarks-consistent"
ENI_DUAL_STACK = "eni-dual-stack-subnets"
ENI_IAM = "eni-iam-permissions"
POOLS_NO_OVERLAP = "pools-no-overlap"
DEFAULT_POOL_EXISTS = "default-pool-exists"
NODE_CONFIG_CONFLICTS = "node-config-no-conflicts"
POOL_SELECTORS = "pool-selectors-unambiguous"
POOL_CAPACITY = "pool-capacity"

CONFIG_NAMES: dict[str, tuple[str, ...]] = {
    POOL_CIDRS: (),
    POOL_MASK_SIZE: ("ipv4MaskSizeMin", "ipv4MaskSizeMax", "ipv6MaskSizeMin", "ipv6MaskSizeMax"),
    POOL_USABLE: ("minUsableAddressesPerBlock",),
    POOL_IPV6_MASK: ("ipv6MaxBlockBits",),
    ENI_WATERMARKS: (),
    ENI_DUAL_STACK: ("ipv6EniMode",),
    ENI_IAM: ("ipv6EniMode", "releaseExcessIps", "gcWithDefaultTags", "instanceTagsFilter", "staticIp"),
    POOLS_NO_OVERLAP: ("vpcCidrs", "serviceCidrs"),
    DEFAULT_POOL_EXISTS: ("knownPools",),
    NODE_CONFIG_CONFLICTS: (),
    POOL_SELECTORS: (),
    POOL_CAPACITY: ("nodeCount", "poolNodeCounts", "podsPerNode"),
}

PoolCheck = Callable[[PoolView, dict[str, Any]], list[str]]
ResourceValidate = Callable[[ResourceValidationArgs, ReportViolation], None]


def _pool_validation(name: str, check: PoolCheck) -> ResourceValidate:
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if resource_kind(args.resource_type, args.props) != POOL:
            return
        config = effective_config(args.get_config(), *CONFIG_NAMES[name])
        for message in check(pool_view(args.props, args.name), config):
            report_violation(message, None)

    return validate


def _validate_watermarks(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if resource_kind(args.resource_type, args.props) != CNI_CONFIGURATION:
        return
    for message in eni_rules.watermark_problems(watermarks_view(args.props, args.name)):
        report_violation(message, None)


def _validate_subnet(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    kind = resource_kind(args.resource_type, args.props)
    if kind != DUAL_STACK_SUBNET and args.resource_type != AWS_SUBNET_TYPE:
        return
    config = effective_config(args.get_config(), *CONFIG_NAMES[ENI_DUAL_STACK])
    view = subnet_view(kind or AWS_SUBNET_TYPE, args.props, args.name)
    for message in eni_rules.subnet_problems(view, bool(config["ipv6EniMode"])):
        report_violation(message, None)


def _is_eni_operator_document(view: IamView) -> bool:
    granted = {action.lower() for action in view.granted or ()}
    return "ec2:assignprivateipaddresses" in granted or "ec2:createnetworkinterface" in granted


def _validate_iam(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    kind = resource_kind(args.resource_type, args.props)
    if kind == IAM_POLICY:
        view = iam_view(kind, args.props, args.name)
    elif args.resource_type in AWS_IAM_POLICY_TYPES:
        view = iam_view(None, args.props, args.name)
        if not _is_eni_operator_document(view):
            return  # some other policy of the stack, not the ENI operator's
    else:
        return
    config = effective_config(args.get_config(), *CONFIG_NAMES[ENI_IAM])
    for message in eni_rules.iam_problems(view, config):
        report_violation(message, None)


StackCheck = Callable[[list[Any], dict[str, Any]], list[stack_rules.Problem]]


def _stack_validation(name: str, check: StackCheck) -> Callable[[StackValidationArgs, ReportViolation], None]:
    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        config = effective_config(args.get_config(), *CONFIG_NAMES[name])
        for message, urn in check(list(args.resources), config):
            report_violation(message, urn)

    return validate


def _resource(
    name: str, description: str, validate: ResourceValidate, level: EnforcementLevel
) -> ResourceValidationPolicy:
    names = CONFIG_NAMES[name]
    return ResourceValidationPolicy(
        name=name,
        description=description,
        validate=validate,
        enforcement_level=level,
        config_schema=schema(*names) if names else None,
    )


def _stack(name: str, description: str, check: StackCheck, level: EnforcementLevel) -> StackValidationPolicy:
    names = CONFIG_NAMES[name]
    return StackValidationPolicy(
        name=name,
        description=description,
        validate=_stack_validation(name, check),
        enforcement_level=level,
        config_schema=schema(*names) if names else None,
    )


def build_policies() -> list[ResourceValidationPolicy | StackValidationPolicy]:
    """Every policy of the pack, in the order the CLI lists them."""
    return [
        _resource(
            POOL_CIDRS,
            "CiliumPodIPPool CIDRs are canonical networks of the right family and do not overlap each other.",
            _pool_validation(POOL_CIDRS, lambda pool, _config: pool_rules.cidr_problems(pool)),
            MANDATORY,
        ),
        _resource(
            POOL_MASK_SIZE,
            "CiliumPodIPPool maskSize is an integer within bounds and no larger a block than any CIDR.",
            _pool_validation(POOL_MASK_SIZE, pool_rules.mask_size_problems),
            MANDATORY,
        ),
        _resource(
            POOL_USABLE,
            "Every per-node block keeps enough usable pod addresses after MP-POOL-4 reservations.",
            _pool_validation(POOL_USABLE, pool_rules.usable_address_problems),
            MANDATORY,
        ),
        _resource(
            POOL_IPV6_MASK,
            "IPv6 pools are split into no more blocks than Cilium's CIDR allocator supports.",
            _pool_validation(POOL_IPV6_MASK, pool_rules.ipv6_mask_problems),
            MANDATORY,
        ),
        _resource(
            ENI_WATERMARKS,
            "ENI pre-allocate, min-allocate and max-allocate are consistent (ENI-PARAM-1).",
            _validate_watermarks,
            MANDATORY,
        ),
        _resource(
            ENI_DUAL_STACK,
            "ENI subnets are valid EC2 subnets and dual-stack when IPv6 ENI mode is on (ENI-V6-4).",
            _validate_subnet,
            MANDATORY,
        ),
        _resource(
            ENI_IAM,
            "The operator's IAM policy grants every EC2 action the configured features need (ENI-PERM-1).",
            _validate_iam,
            MANDATORY,
        ),
        _stack(
            POOLS_NO_OVERLAP,
            "No CIDR is shared by two pools or by a pool and the VPC / service CIDRs (MP-POOL-5).",
            stack_rules.overlap_problems,
            MANDATORY,
        ),
        _stack(
            DEFAULT_POOL_EXISTS,
            "Every ipam-default-ip-pool of a CiliumNodeConfig names an existing pool (MP-NODE-1).",
            stack_rules.default_pool_problems,
            MANDATORY,
        ),
        _stack(
            NODE_CONFIG_CONFLICTS,
            "CiliumNodeConfigs that can select the same node agree on every default they set.",
            lambda resources, _config: stack_rules.node_config_conflict_problems(resources),
            MANDATORY,
        ),
        _stack(
            POOL_SELECTORS,
            "No pod can match the podSelector/namespaceSelector of two pools of one family (MP-SEL-2).",
            lambda resources, _config: stack_rules.pool_selector_problems(resources),
            MANDATORY,
        ),
        _stack(
            POOL_CAPACITY,
            "Each pool has enough per-node blocks for the nodes that draw from it.",
            stack_rules.capacity_problems,
            ADVISORY,
        ),
    ]


POLICIES = build_policies()
POLICY_BY_NAME = {policy.name: policy for policy in POLICIES}
