"""CiliumIpamReconciler under Pulumi mocks: RBAC verbs, IRSA, hardened pod, probes (ENI-ARCH-1)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pulumi
import pytest


class Recorder(pulumi.runtime.Mocks):
    """Records every resource the component registers, with its wire (camelCase) inputs."""

    def __init__(self) -> None:
        self.resources: list[tuple[str, str, dict[str, Any]]] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.resources.append((args.typ, args.name, dict(args.inputs)))
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        return {}


@pytest.fixture()
def recorded() -> Iterator[Recorder]:
    recorder = Recorder()
    pulumi.runtime.set_mocks(recorder, preview=False)
    yield recorder


def build(recorder: Recorder, **kwargs: Any) -> dict[str, list[dict[str, Any]]]:
    from provider.reconciler_component import CiliumIpamReconciler

    @pulumi.runtime.test
    def run() -> pulumi.Output[Any]:
        component = CiliumIpamReconciler("ipam", **kwargs)
        return pulumi.Output.all(component.service_account_name, component.deployment_name)

    run()
    by_type: dict[str, list[dict[str, Any]]] = {}
    for typ, _, inputs in recorder.resources:
        by_type.setdefault(typ, []).append(inputs)
    return by_type


def verbs(rules: list[dict[str, Any]]) -> dict[tuple[str, str], set[str]]:
    table: dict[tuple[str, str], set[str]] = {}
    for rule in rules:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                table.setdefault((group, resource), set()).update(rule["verbs"])
    return table


def test_rbac_verbs_are_exactly_least_privilege(recorded: Recorder) -> None:
    made = build(recorded, role_arn="arn:aws:iam::123456789012:role/ipam")
    (cluster_role,) = made["kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"]
    assert verbs(cluster_role["rules"]) == {
        ("cilium.io", "ciliumnodes"): {"get", "list", "watch", "update", "delete"},
        ("cilium.io", "ciliumnodes/status"): {"update", "patch"},
        ("cilium.io", "ciliumpodippools"): {"get", "list", "watch", "create"},
        ("cilium.io", "ciliumnodeconfigs"): {"get", "list", "watch"},
        ("", "nodes"): {"get", "list", "watch"},
        ("", "pods"): {"get", "list", "watch"},
        ("", "events"): {"create", "patch"},
    }
    (role,) = made["kubernetes:rbac.authorization.k8s.io/v1:Role"]
    assert role["metadata"]["namespace"] == "kube-system"
    assert verbs(role["rules"]) == {("coordination.k8s.io", "leases"): {"get", "create", "update"}}
    all_verbs = [v for rule in cluster_role["rules"] + role["rules"] for v in rule["verbs"]]
    assert "*" not in all_verbs and all(
        "*" not in r for rule in cluster_role["rules"] for r in rule["resources"]
    )
    for binding_type, role_kind in (("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")):
        (binding,) = made[f"kubernetes:rbac.authorization.k8s.io/v1:{binding_type}"]
        assert binding["roleRef"]["kind"] == role_kind
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "ipam", "namespace": "kube-system"}]


def test_irsa_annotation_on_service_account(recorded: Recorder) -> None:
    arn = "arn:aws:iam::123456789012:role/ipam"
    made = build(recorded, role_arn=arn)
    (account,) = made["kubernetes:core/v1:ServiceAccount"]
    assert account["metadata"]["annotations"] == {"eks.amazonaws.com/role-arn": arn}
    (deployment,) = made["kubernetes:apps/v1:Deployment"]
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == account["metadata"]["name"]


def test_deployment_is_hardened_with_probes_and_two_leader_elected_replicas(recorded: Recorder) -> None:
    made = build(recorded, operator_flags=["--ipam=eni"])
    (deployment,) = made["kubernetes:apps/v1:Deployment"]
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert spec["replicas"] == 2
    assert container["command"] == ["cilium-ipam"] and container["args"][0] == "operator"
    assert container["args"][1:6] == [
        "--leader-election-namespace=kube-system",
        "--leader-election-identity=$(POD_NAME)",
        "--health-addr=[$(POD_IP)]:9234",
        "--enable-metrics=true",
        "--operator-prometheus-serve-addr=[$(POD_IP)]:9963",
    ]
    assert container["args"][-1] == "--ipam=eni"
    env = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in container["env"] if "valueFrom" in e}
    assert env == {
        "POD_NAME": "metadata.name",
        "POD_NAMESPACE": "metadata.namespace",
        "POD_IP": "status.podIP",
    }
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "runAsUser": 65532,
        "runAsGroup": 65532,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    assert container["resources"]["requests"] and container["resources"]["limits"]["memory"]
    assert pod["hostNetwork"] is True and pod["dnsPolicy"] == "ClusterFirstWithHostNet"
    anti = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert anti[0]["topologyKey"] == "kubernetes.io/hostname"
    (service,) = made["kubernetes:core/v1:Service"]
    assert service["spec"]["ports"][0]["port"] == 9963
    assert service["spec"]["selector"] == spec["selector"]["matchLabels"]
    (pdb,) = made["kubernetes:policy/v1:PodDisruptionBudget"]
    assert pdb["spec"]["maxUnavailable"] == 1


def test_crds_installed_only_when_asked(recorded: Recorder) -> None:
    from reconciler.crds import load_crds

    made = build(recorded, install_crds=True)
    crds = made["kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"]
    assert sorted(c["metadata"]["name"] for c in crds) == sorted(c["metadata"]["name"] for c in load_crds())
    shipped = {c["metadata"]["name"]: c["spec"] for c in load_crds()}
    for crd in crds:
        assert crd["spec"] == shipped[crd["metadata"]["name"]]  # passed through unchanged


def test_no_crds_by_default(recorded: Recorder) -> None:
    made = build(recorded)
    assert "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition" not in made
    (account,) = made["kubernetes:core/v1:ServiceAccount"]
    assert not account["metadata"].get("annotations")


def test_operator_args_parse_with_the_real_operator_cli() -> None:
    """The flags the Deployment passes are accepted by `cilium-ipam operator` (after $(VAR) expansion)."""
    from provider.reconciler_component import operator_args
    from reconciler.cli import build_parser
    from reconciler.controller.config import build_config, merge_sources

    expanded = [
        a.replace("$(POD_NAME)", "ipam-abc").replace("$(POD_IP)", "10.0.0.7")
        for a in operator_args("kube-system", ["--ipam=eni"])
    ]
    args = build_parser().parse_args(expanded)
    assert args.command == "operator"
    config = build_config(merge_sources(args, {}))
    assert config.health_addr == ("10.0.0.7", 9234) and config.metrics_addr == ("10.0.0.7", 9963)
    assert config.identity == "ipam-abc" and config.lease_namespace == "kube-system" and config.ipam == "eni"
