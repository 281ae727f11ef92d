"""`python policies/__main__.py` serves the pack over gRPC exactly as the engine starts it.

Talks to the real analyzer server with the SDK's gRPC stubs (no pulumi CLI needed): the port is
printed on stdout, GetAnalyzerInfo lists every policy with its level, Analyze / AnalyzeStack
report violations with JSON-over-protobuf props (numbers as floats, like the engine sends them).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc, plugin_pb2

from policies.rules.pack import POLICY_BY_NAME

REPO = Path(__file__).resolve().parents[2]
POOL_TYPE = "kubernetes:cilium.io/v2alpha1:CiliumPodIPPool"


@pytest.fixture(scope="module")
def analyzer() -> Iterator[Any]:
    process = subprocess.Popen(
        [sys.executable, "-u", str(REPO / "policies" / "__main__.py")],
        cwd=REPO / "policies",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port = int(process.stdout.readline().strip())  # type: ignore[union-attr]
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        grpc.channel_ready_future(channel).result(timeout=30)
        yield analyzer_pb2_grpc.AnalyzerStub(channel)
        channel.close()
    finally:
        process.kill()
        process.wait(timeout=30)


def struct(value: dict[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(value)
    return message


def pool(name: str, cidr: str, mask: int) -> dict[str, Any]:
    return {
        "apiVersion": "cilium.io/v2alpha1",
        "kind": "CiliumPodIPPool",
        "metadata": {"name": name},
        "spec": {"ipv4": {"cidrs": [cidr], "maskSize": mask}},
    }


def test_analyzer_info_lists_every_policy_with_its_enforcement_level(analyzer: Any) -> None:
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty())
    assert info.name == "cilium-ipam"
    levels = {p.name: p.enforcementLevel for p in info.policies}
    assert set(levels) == set(POLICY_BY_NAME)
    assert levels["pool-capacity"] == analyzer_pb2.ADVISORY
    assert levels["pools-no-overlap"] == analyzer_pb2.MANDATORY
    schema = next(p.configSchema for p in info.policies if p.name == "pools-no-overlap")
    assert set(schema.properties) == {"vpcCidrs", "serviceCidrs"}


def test_analyze_reports_a_bad_pool_through_grpc(analyzer: Any) -> None:
    request = analyzer_pb2.AnalyzeRequest(
        type=POOL_TYPE, properties=struct(pool("bad", "10.1.0.1/16", 24)), urn="urn:bad", name="bad"
    )
    response = analyzer.Analyze(request)
    # The SDK prefixes each message with the policy description and a newline.
    messages = {d.policyName: d.message.splitlines()[-1] for d in response.diagnostics}
    assert messages == {
        "pool-cidrs-canonical": "CiliumPodIPPool 'bad' ipv4 CIDR '10.1.0.1/16' has host bits set; "
        "write '10.1.0.0/16' instead."
    }
    assert response.diagnostics[0].enforcementLevel == analyzer_pb2.MANDATORY


def test_analyze_stack_reports_overlap_and_honours_policy_config(analyzer: Any) -> None:
    resources = [
        analyzer_pb2.AnalyzerResource(
            type=POOL_TYPE, properties=struct(pool(n, c, 24)), urn=f"urn:{n}", name=n
        )
        for n, c in (("a", "10.1.0.0/16"), ("b", "10.1.64.0/18"))
    ]
    response = analyzer.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=resources))
    overlap = [d for d in response.diagnostics if d.policyName == "pools-no-overlap"]
    assert len(overlap) == 1 and overlap[0].urn == "urn:b"
    capacity_config = analyzer_pb2.PolicyConfig(properties=struct({"nodeCount": 1000}))
    analyzer.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig={"pool-capacity": capacity_config}))
    response = analyzer.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=resources))
    capacity = [d for d in response.diagnostics if d.policyName == "pool-capacity"]
    assert {d.urn for d in capacity} == {"urn:a", "urn:b"}
    assert all(d.enforcementLevel == analyzer_pb2.ADVISORY for d in capacity)


def test_plugin_info_answers(analyzer: Any) -> None:
    assert isinstance(analyzer.GetPluginInfo(empty_pb2.Empty()), plugin_pb2.PluginInfo)
