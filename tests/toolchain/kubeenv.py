"""A real, envtest-style Kubernetes control plane for tests: etcd + kube-apiserver on 127.0.0.1.

No kubelet, scheduler or controller-manager: objects are stored and validated by the real apiserver
(CRD schemas, CEL rules, resourceVersion conflicts, status subresources, watches) and nothing else
acts on them, so tests drive every change themselves.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import certs, locate, processes

STARTUP_TIMEOUT_SECONDS = 180.0
CRD_TIMEOUT_SECONDS = 60
SERVICE_CLUSTER_IP_RANGE = "10.96.0.0/24"


@dataclass
class KubeControlPlane:
    """A running etcd + kube-apiserver pair and the files a client needs to reach it."""

    workdir: Path
    url: str = ""
    kubeconfig: Path = field(default_factory=Path)
    pki: certs.Pki | None = None
    etcd: subprocess.Popen[bytes] | None = None
    apiserver: subprocess.Popen[bytes] | None = None

    @property
    def etcd_log(self) -> Path:
        return self.workdir / "etcd.log"

    @property
    def apiserver_log(self) -> Path:
        return self.workdir / "kube-apiserver.log"

    def stop(self) -> None:
        """Stop the apiserver before etcd, then drop etcd's data (logs stay for post-mortems)."""
        processes.stop(self.apiserver)
        processes.stop(self.etcd)
        shutil.rmtree(self.workdir / "etcd-data", ignore_errors=True)


def _etcd_command(binary: Path, data_dir: Path, client_port: int, peer_port: int) -> list[str]:
    client = f"http://127.0.0.1:{client_port}"
    peer = f"http://127.0.0.1:{peer_port}"
    return [
        str(binary),
        "--name=default",
        f"--data-dir={data_dir}",
        f"--listen-client-urls={client}",
        f"--advertise-client-urls={client}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=default={peer}",
        "--unsafe-no-fsync=true",
        "--log-level=warn",
    ]


def _apiserver_command(binary: Path, pki: certs.Pki, port: int, etcd_port: int, cert_dir: Path) -> list[str]:
    return [
        str(binary),
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        f"--secure-port={port}",
        f"--cert-dir={cert_dir}",
        f"--tls-cert-file={pki.serving_cert}",
        f"--tls-private-key-file={pki.serving_key}",
        f"--client-ca-file={pki.ca_cert}",
        f"--etcd-servers=http://127.0.0.1:{etcd_port}",
        f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
        f"--service-account-issuer=https://127.0.0.1:{port}",
        f"--service-account-key-file={pki.service_account_pub}",
        f"--service-account-signing-key-file={pki.service_account_key}",
        "--authorization-mode=RBAC",
        "--allow-privileged=true",
        "--disable-admission-plugins=ServiceAccount",
        "--endpoint-reconciler-type=none",
        "--profiling=false",
        "--v=1",
    ]


def _etcd_healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
            return response.status == 200 and b'"health":"true"' in response.read()
    except (OSError, urllib.error.URLError):
        return False


def _tls_context(pki: certs.Pki) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki.ca_cert))
    context.load_cert_chain(str(pki.admin_cert), str(pki.admin_key))
    return context


def _apiserver_ready(url: str, context: ssl.SSLContext) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/readyz", timeout=5, context=context) as response:
            return response.status == 200
    except (OSError, urllib.error.URLError):
        return False


def write_kubeconfig(path: Path, url: str, pki: certs.Pki) -> None:
    """An admin kubeconfig (client cert in system:masters) for the test apiserver."""
    config: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "test", "cluster": {"server": url, "certificate-authority": str(pki.ca_cert)}}],
        "users": [
            {
                "name": "admin",
                "user": {"client-certificate": str(pki.admin_cert), "client-key": str(pki.admin_key)},
            }
        ],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "admin"}}],
        "current-context": "test",
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def start_control_plane(workdir: Path, timeout_seconds: float = STARTUP_TIMEOUT_SECONDS) -> KubeControlPlane:
    """Start etcd, then kube-apiserver, and wait until /readyz answers. Stops both on failure."""
    workdir.mkdir(parents=True, exist_ok=True)
    plane = KubeControlPlane(workdir=workdir)
    try:
        etcd_binary = locate.require(locate.ETCD)
        apiserver_binary = locate.require(locate.KUBE_APISERVER)
        plane.pki = certs.make_pki(workdir / "pki")
        etcd_port, peer_port = processes.free_loopback_port(), processes.free_loopback_port()
        plane.etcd = processes.start(
            _etcd_command(etcd_binary, workdir / "etcd-data", etcd_port, peer_port), plane.etcd_log, workdir
        )
        processes.wait_until(
            "etcd", plane.etcd, plane.etcd_log, lambda: _etcd_healthy(etcd_port), timeout_seconds
        )
        port = processes.free_loopback_port()
        plane.url = f"https://127.0.0.1:{port}"
        cert_dir = workdir / "apiserver-certs"
        command = _apiserver_command(apiserver_binary, plane.pki, port, etcd_port, cert_dir)
        plane.apiserver = processes.start(command, plane.apiserver_log, workdir)
        context = _tls_context(plane.pki)
        processes.wait_until(
            "kube-apiserver",
            plane.apiserver,
            plane.apiserver_log,
            lambda: _apiserver_ready(plane.url, context),
            timeout_seconds,
        )
        plane.kubeconfig = workdir / "kubeconfig"
        write_kubeconfig(plane.kubeconfig, plane.url, plane.pki)
        return plane
    except BaseException:
        plane.stop()
        raise


def install_crds(
    api_client: Any, crds: list[dict[str, Any]], timeout_seconds: int = CRD_TIMEOUT_SECONDS
) -> None:
    """Create (or replace) each CRD and wait, by watching, until the apiserver reports it Established."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    extensions = client.ApiextensionsV1Api(api_client)
    for crd in crds:
        name = crd["metadata"]["name"]
        try:
            extensions.create_custom_resource_definition(body=crd)
        except ApiException as error:
            if error.status != 409:
                raise
            current = extensions.read_custom_resource_definition(name)
            version = current.metadata.resource_version
            crd = {**crd, "metadata": {**crd["metadata"], "resourceVersion": version}}
            extensions.replace_custom_resource_definition(name, body=crd)
    for crd in crds:
        wait_established(extensions, crd["metadata"]["name"], timeout_seconds)


def _established(crd: Any) -> bool:
    conditions = (crd.status.conditions if crd.status else None) or []
    return any(c.type == "Established" and c.status == "True" for c in conditions)


def wait_established(extensions: Any, name: str, timeout_seconds: int) -> None:
    from kubernetes import watch

    current = extensions.read_custom_resource_definition(name)
    if _established(current):
        return
    stream = watch.Watch()
    for event in stream.stream(
        extensions.list_custom_resource_definition,
        field_selector=f"metadata.name={name}",
        resource_version=current.metadata.resource_version,
        timeout_seconds=timeout_seconds,
    ):
        if _established(event["object"]):
            stream.stop()
            return
    raise TimeoutError(f"CRD {name} was not Established within {timeout_seconds} s")
