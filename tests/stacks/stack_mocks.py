"""Run a stack program under Pulumi mocks and record the resource graph it registers.

(No __init__.py in this directory on purpose: a package named `stacks` would shadow the real one.)
The monitor records each registration's type, name, inputs, parent and dependencies (URNs), so
tests can assert the graph, not just the inputs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks

from provider.iam_actions import IpamPermissionOptions, required_ec2_actions

STACK_PREFIX = "pulumi-python:dynamic/cilium-ipam:"


@dataclass
class Registration:
    """One registered resource as the engine would see it."""

    type: str
    name: str
    urn: str
    inputs: dict[str, Any]
    parent: str
    dependencies: list[str] = field(default_factory=list)


class FakeCloud(pulumi.runtime.Mocks):
    """Fills in the outputs real providers would compute (ids, ARNs, assigned blocks)."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        state = dict(args.inputs)
        kind = args.typ.removeprefix(STACK_PREFIX)
        if kind == "DualStackSubnet":
            state.update(subnet_id=f"subnet-{args.name}", ipv6_cidr_block_assigned="2600:1f18:0:1::/64")
        elif kind == "IpamIamPolicy":
            actions = list(required_ec2_actions(IpamPermissionOptions.from_props(args.inputs)))
            state.update(
                policy_arn=f"arn:aws:iam::123456789012:policy/{args.inputs.get('policy_name')}",
                actions=actions,
                document=json.dumps({"Statement": [{"Action": actions}]}),
            )
        elif kind == "CiliumNodeConfig":
            state.update(warnings=[])
        elif kind == "CniConfiguration":
            state.update(
                cni_config=json.dumps({"eni": args.inputs.get("eni"), "ipam": args.inputs.get("ipam")})
            )
        elif kind == "CiliumPodIPPool":
            state.update(uid=f"uid-{args.name}", resource_version="1")
        elif args.typ == "aws:ec2/vpc:Vpc":
            state.update(ipv6_cidr_block="2600:1f18:0:100::/56", arn=f"arn:aws:ec2:vpc/{args.name}")
        elif args.typ == "aws:iam/role:Role":
            state.update(arn=f"arn:aws:iam::123456789012:role/{args.name}", name=f"{args.name}-role")
        return f"{args.name}-id", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[Any]] | dict[str, Any]:
        return {}


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """A MockMonitor that also keeps parent and dependency URNs of every registration."""

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.registrations: list[Registration] = []

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            inputs = pulumi.runtime.rpc.deserialize_properties(request.object)
            self.registrations.append(
                Registration(
                    request.type,
                    request.name,
                    response.urn,
                    dict(inputs),
                    request.parent,
                    list(request.dependencies),
                )
            )
        return response


@dataclass
class ProgramRun:
    """What a program registered and exported."""

    registrations: list[Registration]
    outputs: dict[str, Any]

    def of_type(self, type_: str) -> list[Registration]:
        return [r for r in self.registrations if r.type == type_]

    def ours(self, kind: str) -> list[Registration]:
        return self.of_type(STACK_PREFIX + kind)

    def named(self, name: str) -> Registration:
        matches = [r for r in self.registrations if r.name == name]
        assert len(matches) == 1, f"expected one resource named {name}, got {len(matches)}"
        return matches[0]


def run_program(main: Callable[[], Mapping[str, Any]], config: Mapping[str, Any]) -> ProgramRun:
    """Run `main` under mocks with `cilium-ipam:<key>` config values (objects given as Python values)."""
    monitor = RecordingMonitor(FakeCloud())
    pulumi.runtime.set_mocks(FakeCloud(), project="cilium-ipam", stack="test", preview=False, monitor=monitor)
    pulumi.runtime.set_all_config(
        {
            f"cilium-ipam:{key}": value if isinstance(value, str) else json.dumps(value)
            for key, value in config.items()
        }
    )
    resolved: dict[str, Any] = {}

    @pulumi.runtime.test
    def body() -> pulumi.Output[Any]:
        outputs = main()
        return pulumi.Output.from_input(dict(outputs)).apply(resolved.update)

    body()
    return ProgramRun(monitor.registrations, resolved)
