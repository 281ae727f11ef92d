"""The example stack configs (Pulumi.<stack>.yaml) under mocks, checked by the whole policy pack.

The resource graph each program registers is handed to every policy exactly as the engine would
(type token + inputs), so the examples users copy are known to pass the pack.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
)
from pulumi_policy.proxy import unknown_checking_proxy
from stack_mocks import ProgramRun, run_program

from policies.rules.pack import POLICIES
from stacks.local.program import main as local_main
from stacks.multipool.program import main as multipool_main

REPO = Path(__file__).resolve().parents[2]


def example_config(stack: str) -> dict[str, Any]:
    raw = yaml.safe_load((REPO / f"Pulumi.{stack}.yaml").read_text())["config"]
    return {
        key.removeprefix("cilium-ipam:"): value
        for key, value in raw.items()
        if key.startswith("cilium-ipam:")
    }


def violations(run: ProgramRun, config: dict[str, Any] | None = None) -> list[str]:
    """Every violation any policy of the pack reports for the registered resources."""
    options = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])
    found: list[str] = []
    report = lambda message, _urn=None: found.append(message)  # noqa: E731
    resources = [
        PolicyResource(r.type, unknown_checking_proxy(r.inputs), r.urn, r.name, options, None, None, [], {})
        for r in run.registrations
    ]
    for policy in POLICIES:
        if isinstance(policy, ResourceValidationPolicy):
            for resource in resources:
                args = ResourceValidationArgs(
                    resource.resource_type, resource.props, resource.urn, resource.name, options, None, config
                )
                policy.validate(args, report)
        else:
            policy.validate(StackValidationArgs(resources, config), report)
    return found


def test_pulumi_yaml_points_at_the_dispatcher_and_every_example_names_a_program() -> None:
    project = yaml.safe_load((REPO / "Pulumi.yaml").read_text())
    assert project["name"] == "cilium-ipam" and project["runtime"]["name"] == "python"
    assert (REPO / project["main"] / "__main__.py").is_file()
    for stack in ("eni", "multipool", "local"):
        assert example_config(stack)["program"] == stack


def test_multipool_example_registers_the_seed_pools_and_passes_the_pack() -> None:
    run = run_program(multipool_main, example_config("multipool"))
    assert sorted(r.inputs["name"] for r in run.ours("CiliumPodIPPool")) == [
        "dc1-pool",
        "dc2-pool",
        "default",
    ]
    assert violations(run) == []


def test_local_example_passes_the_pack_and_an_overlapping_pool_does_not() -> None:
    config = example_config("local")
    assert violations(run_program(local_main, config)) == []
    config["pools"] = {
        "dc1-pool": {"ipv4": {"cidrs": ["10.1.0.0/16"], "maskSize": 24}},
        "dc9-pool": {"ipv4": {"cidrs": ["10.1.200.0/21"], "maskSize": 24}},
    }
    config["nodeConfigs"] = {}
    found = violations(run_program(local_main, config))
    assert len(found) == 1 and "CiliumPodIPPool 'dc9-pool' CIDR 10.1.200.0/21 overlaps" in found[0]


@pytest.mark.parametrize("mask", [29, 30])
def test_local_example_with_tiny_blocks_fails_the_usable_address_policy(mask: int) -> None:
    config = example_config("local")
    config["pools"] = {"tiny": {"ipv4": {"cidrs": ["10.7.0.0/16"], "maskSize": mask}}}
    config["nodeConfigs"] = {}
    found = violations(run_program(local_main, config))
    assert any("CiliumPodIPPool 'tiny' ipv4 blocks of" in message for message in found)
