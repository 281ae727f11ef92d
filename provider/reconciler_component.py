"""`CiliumIpamReconciler`: deploys the `cilium-ipam operator` with least privilege (pulumi-kubernetes).

Why these choices:
- hostNetwork by default: the operator hands out pod IPs, so it must not need a pod IP itself
  (the same reason Cilium's operator runs on the host network). Two replicas, required
  anti-affinity (host ports) and a PodDisruptionBudget; leader election picks the one that acts
  (ENI-ARCH-1).
- IRSA: the ServiceAccount carries `eks.amazonaws.com/role-arn`; no AWS credential is ever a value.
- Hardened pod: non-root, read-only root filesystem, every capability dropped, seccomp
  RuntimeDefault, no privilege escalation; /healthz and /readyz probes; requests and limits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import pulumi
import pulumi_kubernetes as k8s

from .reconciler_rbac import cluster_rules, namespace_rules

IRSA_ANNOTATION = "eks.amazonaws.com/role-arn"
DEFAULT_IMAGE = "ghcr.io/cilium-ipam/cilium-ipam:0.1.0"
METRICS_PORT = 9963
HEALTH_PORT = 9234
NON_ROOT_UID = 65532
DEFAULT_RESOURCES = {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}


def container_security_context() -> k8s.core.v1.SecurityContextArgsDict:
    return {
        "allow_privilege_escalation": False,
        "read_only_root_filesystem": True,
        "run_as_non_root": True,
        "run_as_user": NON_ROOT_UID,
        "run_as_group": NON_ROOT_UID,
        "capabilities": {"drop": ["ALL"]},
        "seccomp_profile": {"type": "RuntimeDefault"},
    }


def operator_args(namespace: str, extra: Sequence[str]) -> list[str]:
    """The `cilium-ipam operator` command line (flags of reconciler/controller/config.py).

    Leader election uses a Lease in the operator's namespace with the pod name as identity. Health
    and metrics bind the pod IP only (the operator's default is loopback, which kubelet probes and
    Prometheus cannot reach); brackets keep the `[host]:port` form valid for IPv6 pod IPs too.
    `$(VAR)` is expanded by Kubernetes from the container's env.
    """
    return [
        "operator",
        f"--leader-election-namespace={namespace}",
        "--leader-election-identity=$(POD_NAME)",
        f"--health-addr=[$(POD_IP)]:{HEALTH_PORT}",
        "--enable-metrics=true",
        f"--operator-prometheus-serve-addr=[$(POD_IP)]:{METRICS_PORT}",
        *extra,
    ]


class CiliumIpamReconciler(pulumi.ComponentResource):
    """ServiceAccount (IRSA), ClusterRole/Role + bindings, Deployment, metrics Service, PDB, optional CRDs."""

    service_account_name: pulumi.Output[str]
    deployment_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        namespace: str = "kube-system",
        role_arn: pulumi.Input[str] | None = None,
        image: str = DEFAULT_IMAGE,
        replicas: int = 2,
        operator_flags: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        resources: Mapping[str, Any] | None = None,
        host_network: bool = True,
        install_crds: bool = False,
        create_namespace: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("cilium-ipam:index:CiliumIpamReconciler", name, None, opts)
        # depends_on on a component does not hold back its children: pass it down so the operator
        # starts only after what it needs (IAM policy, CNI ConfigMap, pools) exists.
        outer = _as_resources(opts.depends_on if opts is not None else None)
        child = pulumi.ResourceOptions(parent=self, depends_on=outer)
        labels = {"app.kubernetes.io/name": "cilium-ipam", "app.kubernetes.io/instance": name}
        prereqs: list[pulumi.Resource] = list(outer)
        if create_namespace:
            prereqs.append(k8s.core.v1.Namespace(f"{name}-ns", metadata={"name": namespace}, opts=child))
        if install_crds:
            prereqs += _crds(name, child)
        after = pulumi.ResourceOptions(parent=self, depends_on=prereqs)
        annotations: dict[str, pulumi.Input[str]] = {}
        if role_arn is not None:
            annotations[IRSA_ANNOTATION] = role_arn
        account = k8s.core.v1.ServiceAccount(
            f"{name}-sa",
            metadata={"name": name, "namespace": namespace, "labels": labels, "annotations": annotations},
            opts=after,
        )
        self._rbac(name, namespace, labels, after)
        deployment = k8s.apps.v1.Deployment(
            f"{name}-operator",
            metadata={"name": name, "namespace": namespace, "labels": labels},
            spec=_deployment_spec(
                name,
                namespace,
                labels,
                image,
                replicas,
                operator_flags,
                env or {},
                _resource_requirements(resources or DEFAULT_RESOURCES),
                host_network,
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[account, *prereqs]),
        )
        k8s.core.v1.Service(
            f"{name}-metrics",
            metadata={"name": f"{name}-metrics", "namespace": namespace, "labels": labels},
            spec={
                "selector": labels,
                "ports": [{"name": "metrics", "port": METRICS_PORT, "target_port": "metrics"}],
            },
            opts=after,
        )
        k8s.policy.v1.PodDisruptionBudget(
            f"{name}-pdb",
            metadata={"name": name, "namespace": namespace, "labels": labels},
            spec={"max_unavailable": 1, "selector": {"match_labels": labels}},
            opts=after,
        )
        self.service_account_name = account.metadata.apply(lambda m: m["name"])
        self.deployment_name = deployment.metadata.apply(lambda m: m["name"])
        self.register_outputs(
            {"service_account_name": self.service_account_name, "deployment_name": self.deployment_name}
        )

    def _rbac(
        self, name: str, namespace: str, labels: Mapping[str, str], opts: pulumi.ResourceOptions
    ) -> None:
        subject: list[k8s.rbac.v1.SubjectArgsDict] = [
            {"kind": "ServiceAccount", "name": name, "namespace": namespace}
        ]
        k8s.rbac.v1.ClusterRole(
            f"{name}-cr",
            metadata={"name": name, "labels": labels},
            rules=_policy_rules(cluster_rules()),
            opts=opts,
        )
        k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-crb",
            metadata={"name": name, "labels": labels},
            role_ref={"api_group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            subjects=subject,
            opts=opts,
        )
        k8s.rbac.v1.Role(
            f"{name}-role",
            metadata={"name": name, "namespace": namespace, "labels": labels},
            rules=_policy_rules(namespace_rules()),
            opts=opts,
        )
        k8s.rbac.v1.RoleBinding(
            f"{name}-rb",
            metadata={"name": name, "namespace": namespace, "labels": labels},
            role_ref={"api_group": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            subjects=subject,
            opts=opts,
        )


def _deployment_spec(
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    image: str,
    replicas: int,
    flags: Sequence[str],
    env: Mapping[str, str],
    resources: k8s.core.v1.ResourceRequirementsArgsDict,
    host_network: bool,
) -> k8s.apps.v1.DeploymentSpecArgsDict:
    field_env: list[k8s.core.v1.EnvVarArgsDict] = [
        {"name": "POD_NAME", "value_from": {"field_ref": {"field_path": "metadata.name"}}},
        {"name": "POD_NAMESPACE", "value_from": {"field_ref": {"field_path": "metadata.namespace"}}},
        {"name": "POD_IP", "value_from": {"field_ref": {"field_path": "status.podIP"}}},
    ]
    container: k8s.core.v1.ContainerArgsDict = {
        "name": "operator",
        "image": image,
        "command": ["cilium-ipam"],
        "args": operator_args(namespace, flags),
        "env": field_env + [{"name": k, "value": v} for k, v in sorted(env.items())],
        "ports": [
            {"name": "metrics", "container_port": METRICS_PORT, "protocol": "TCP"},
            {"name": "health", "container_port": HEALTH_PORT, "protocol": "TCP"},
        ],
        "liveness_probe": {
            "http_get": {"path": "/healthz", "port": "health"},
            "initial_delay_seconds": 10,
            "period_seconds": 10,
            "failure_threshold": 3,
        },
        "readiness_probe": {
            "http_get": {"path": "/readyz", "port": "health"},
            "period_seconds": 5,
            "failure_threshold": 3,
        },
        "resources": resources,
        "security_context": container_security_context(),
        "volume_mounts": [{"name": "tmp", "mount_path": "/tmp"}],
    }
    pod_spec: k8s.core.v1.PodSpecArgsDict = {
        "service_account_name": name,
        "host_network": host_network,
        "dns_policy": "ClusterFirstWithHostNet" if host_network else "ClusterFirst",
        "priority_class_name": "system-cluster-critical",
        "security_context": {
            "run_as_non_root": True,
            "run_as_user": NON_ROOT_UID,
            "run_as_group": NON_ROOT_UID,
            "seccomp_profile": {"type": "RuntimeDefault"},
        },
        "tolerations": [{"operator": "Exists", "key": "CriticalAddonsOnly"}],
        "affinity": {
            "pod_anti_affinity": {
                "required_during_scheduling_ignored_during_execution": [
                    {
                        "label_selector": {"match_labels": dict(labels)},
                        "topology_key": "kubernetes.io/hostname",
                    }
                ]
            }
        },
        "containers": [container],
        "volumes": [{"name": "tmp", "empty_dir": {}}],
    }
    return {
        "replicas": replicas,
        "selector": {"match_labels": dict(labels)},
        "strategy": {"type": "RollingUpdate", "rolling_update": {"max_unavailable": 1, "max_surge": 0}},
        "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec},
    }


def _policy_rules(rules: Sequence[Mapping[str, Any]]) -> list[k8s.rbac.v1.PolicyRuleArgs]:
    """reconciler_rbac keeps the rules in Kubernetes' own camelCase form (the kube tests apply them
    as-is); the Pulumi SDK wants typed arguments, which it writes back out as the same wire keys."""
    return [
        k8s.rbac.v1.PolicyRuleArgs(
            verbs=list(rule["verbs"]),
            api_groups=rule.get("apiGroups"),
            resources=rule.get("resources"),
            resource_names=rule.get("resourceNames"),
            non_resource_urls=rule.get("nonResourceURLs"),
        )
        for rule in rules
    ]


def _resource_requirements(resources: Mapping[str, Any]) -> k8s.core.v1.ResourceRequirementsArgsDict:
    """User-given requests/limits (a plain mapping) as the SDK's argument type; the shape is Kubernetes'."""
    return cast("k8s.core.v1.ResourceRequirementsArgsDict", dict(resources))


def _as_resources(depends_on: object) -> list[pulumi.Resource]:
    if depends_on is None:
        return []
    if isinstance(depends_on, pulumi.Resource):
        return [depends_on]
    if isinstance(depends_on, list | tuple):
        return [r for r in depends_on if isinstance(r, pulumi.Resource)]
    return []


def _crds(name: str, opts: pulumi.ResourceOptions) -> list[pulumi.Resource]:
    """The project CRDs (reconciler/crds/*.yaml) for clusters where Cilium has not installed them."""
    from reconciler.crds import load_crds

    resources: list[pulumi.Resource] = []
    for crd in load_crds():
        crd_name = crd["metadata"]["name"]
        resources.append(
            k8s.apiextensions.v1.CustomResourceDefinition(
                f"{name}-{crd_name}", metadata=crd["metadata"], spec=crd["spec"], opts=opts
            )
        )
    return resources
