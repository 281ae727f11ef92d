"""Dynamic provider rules (DESIGN.md): no import side effects, dill round-trip like the SDK, no secrets."""

from __future__ import annotations

import base64
import subprocess
import sys
from typing import Any

import dill
import pulumi
import pytest
from pulumi.dynamic import ConfigureRequest
from pulumi.dynamic.config import Config
from pulumi.dynamic.dynamic import serialize_provider

from provider.cni_configuration import CniConfigurationProvider
from provider.dual_stack_subnet import DualStackSubnetProvider
from provider.ec2_tags import Ec2TagsProvider
from provider.ipam_iam_policy import IpamIamPolicyProvider
from provider.node_config import CiliumNodeConfigProvider
from provider.pod_ip_pool import CiliumPodIPPoolProvider

PROVIDERS = [
    DualStackSubnetProvider,
    Ec2TagsProvider,
    IpamIamPolicyProvider,
    CiliumPodIPPoolProvider,
    CiliumNodeConfigProvider,
    CniConfigurationProvider,
]
MODULES = [
    "provider",
    "provider.dual_stack_subnet",
    "provider.ec2_tags",
    "provider.ipam_iam_policy",
    "provider.iam_actions",
    "provider.pod_ip_pool",
    "provider.pool_rules",
    "provider.node_config",
    "provider.cni_configuration",
    "provider.reconciler_component",
    "provider.reconciler_rbac",
    "provider.host_network",
]

IMPORT_PROBE = """
import os, socket, sys, threading
def refuse(*a, **k):
    raise AssertionError("import opened a socket")
socket.socket.connect = refuse
socket.create_connection = refuse
env = dict(os.environ)
threads = threading.active_count()
import importlib
for name in sys.argv[1:]:
    importlib.import_module(name)
assert dict(os.environ) == env, "import changed the environment"
assert threading.active_count() == threads, "import started a thread"
heavy = [m for m in ("boto3", "kubernetes") if m in sys.modules]
print("heavy:" + ",".join(heavy))
"""


def test_importing_provider_has_no_side_effects() -> None:
    """Only `import provider` itself: it must not even import boto3/kubernetes (lazy exports)."""
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE, "provider"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "heavy:"


def test_importing_every_module_opens_no_socket_and_starts_no_thread() -> None:
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE, *MODULES],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "kubernetes" not in result.stdout and "boto3" not in result.stdout  # clients built only in methods


def sdk_round_trip(provider: Any) -> Any:
    """Exactly what pulumi.dynamic does: serialize_provider (dill, recurse) then base64 + dill.loads."""
    return dill.loads(base64.b64decode(serialize_provider(provider)))


@pytest.mark.parametrize("provider_class", PROVIDERS, ids=lambda c: c.__name__)
def test_provider_survives_sdk_dill_round_trip(provider_class: type) -> None:
    provider = provider_class()
    clone = sdk_round_trip(provider)
    assert type(clone) is provider_class  # pickled by reference: the same class object comes back
    assert clone.settings == {}
    blob = base64.b64decode(serialize_provider(provider))
    assert provider_class.__module__.encode() in blob
    assert len(blob) < 2000, "the class must be pickled by reference, not by value"


@pytest.mark.parametrize("provider_class", PROVIDERS, ids=lambda c: c.__name__)
def test_pickle_loads_in_a_fresh_process(provider_class: type) -> None:
    """The dynamic provider host unpickles in a new interpreter: only an import path is needed."""
    encoded = serialize_provider(provider_class())
    code = (
        "import base64, sys, dill\n"
        "p = dill.loads(base64.b64decode(sys.argv[1]))\n"
        "print(type(p).__module__ + '.' + type(p).__name__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, encoded], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{provider_class.__module__}.{provider_class.__name__}"


def test_configure_keeps_only_non_secret_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "very-secret-value")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\n")
    provider = CiliumPodIPPoolProvider()
    config = Config(
        {
            "cilium-ipam:region": "eu-west-1",
            "cilium-ipam:endpointUrl": "http://127.0.0.1:1",
            "cilium-ipam:kubeconfig": str(kubeconfig),
            "kubernetes:kubeconfig": "apiVersion: v1\nusers: [{user: {token: secret-token}}]",
        },
        "cilium-ipam",
    )
    provider.configure(ConfigureRequest(config))
    assert provider.settings == {
        "region": "eu-west-1",
        "endpoint_url": "http://127.0.0.1:1",
        "kubeconfig": str(kubeconfig),
    }
    inline_only = CiliumPodIPPoolProvider()
    inline_only.configure(ConfigureRequest(Config({"kubernetes:kubeconfig": "users: [token: x]"}, "p")))
    assert "kubeconfig" not in inline_only.settings  # an inline kubeconfig is a credential: never kept
    blob = base64.b64decode(serialize_provider(provider))
    assert b"very-secret-value" not in blob and b"secret-token" not in blob


class Capture(pulumi.runtime.Mocks):
    def __init__(self) -> None:
        self.inputs: dict[str, dict[str, Any]] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.inputs[args.name] = dict(args.inputs)
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        return {}


def test_resources_register_with_their_provider_and_plain_inputs() -> None:
    """Each Resource wrapper serializes its provider (not a secret) and passes only non-secret inputs."""
    import provider as pkg

    capture = Capture()
    pulumi.runtime.set_mocks(capture, preview=False)

    @pulumi.runtime.test
    def program() -> pulumi.Output[Any]:
        made = [
            pkg.DualStackSubnet(
                "subnet", vpc_id="vpc-1", cidr_block="10.0.1.0/24", availability_zone="us-east-1a"
            ),
            pkg.Ec2Tags("tags", resource_id="subnet-1", tags={"a": "b"}),
            pkg.IpamIamPolicy("policy", role_name="op", ipv6=True),
            pkg.CiliumPodIPPool("blue", ipv4_cidrs=["10.8.0.0/16"], ipv4_mask_size=24, skip_masquerade=True),
            pkg.CiliumNodeConfig("dc1", defaults={"ipam-default-ip-pool": "blue"}, node_selector={}),
            pkg.CniConfiguration("cni", eni=pkg.EniOptions(subnet_tags={"foo": "true"})),
        ]
        return pulumi.Output.all(*[r.urn for r in made])

    program()
    assert set(capture.inputs) == {"subnet", "tags", "policy", "blue", "dc1", "cni"}
    expected_types = {
        "subnet": DualStackSubnetProvider,
        "tags": Ec2TagsProvider,
        "policy": IpamIamPolicyProvider,
        "blue": CiliumPodIPPoolProvider,
        "dc1": CiliumNodeConfigProvider,
        "cni": CniConfigurationProvider,
    }
    for name, inputs in capture.inputs.items():
        encoded = inputs["__provider"]
        assert isinstance(encoded, str), f"{name}: provider must not be stored as a secret"
        assert type(dill.loads(base64.b64decode(encoded))) is expected_types[name]
    assert capture.inputs["blue"]["spec"] == {"ipv4": {"cidrs": ["10.8.0.0/16"], "maskSize": 24}}
    assert capture.inputs["blue"]["annotations"] == {"ipam.cilium.io/skip-masquerade": "true"}
    assert capture.inputs["cni"]["eni"] == {"subnet-tags": {"foo": "true"}}
    assert capture.inputs["policy"]["policy_name"] == "cilium-ipam-policy"
