"""Session fixtures for the real test environment: moto (EC2/IAM), kube-apiserver + etcd, Pulumi.

Every server listens on 127.0.0.1 only, starts lazily the first time a test asks for it, and is
stopped at session end even when a test fails. The heavy pieces (kube, pulumi) live in
tests/toolchain/ so this file stays a thin list of fixtures.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from toolchain import kubeenv, pulumienv
from toolchain.processes import free_loopback_port

AWS_REGION = "us-east-1"
DUMMY_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": AWS_REGION,
    "AWS_REGION": AWS_REGION,
}


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """URL of a moto server on loopback; dummy AWS credentials are set for the session only."""
    from moto.server import ThreadedMotoServer

    saved = {key: os.environ.get(key) for key in DUMMY_AWS_ENV}
    os.environ.update(DUMMY_AWS_ENV)
    port = free_loopback_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(scope="session")
def moto_session(moto_endpoint: str) -> boto3.Session:
    """A boto3 session with dummy credentials; pass `endpoint_url=moto_endpoint` to its clients."""
    return boto3.Session(
        aws_access_key_id=DUMMY_AWS_ENV["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=DUMMY_AWS_ENV["AWS_SECRET_ACCESS_KEY"],
        region_name=AWS_REGION,
    )


@pytest.fixture(scope="session")
def moto_ec2(moto_session: boto3.Session, moto_endpoint: str) -> Any:
    """An EC2 client talking to the moto server."""
    return moto_session.client("ec2", endpoint_url=moto_endpoint)


@pytest.fixture(scope="session")
def moto_iam(moto_session: boto3.Session, moto_endpoint: str) -> Any:
    """An IAM client talking to the moto server."""
    return moto_session.client("iam", endpoint_url=moto_endpoint)


@pytest.fixture(scope="session")
def kube_control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[kubeenv.KubeControlPlane]:
    """etcd + kube-apiserver on loopback (logs in the plane's workdir), stopped at session end."""
    plane = kubeenv.start_control_plane(tmp_path_factory.mktemp("kube"))
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="session")
def kubeconfig(kube_control_plane: kubeenv.KubeControlPlane) -> str:
    """Path of an admin (system:masters) kubeconfig for the test apiserver."""
    return str(kube_control_plane.kubeconfig)


@pytest.fixture(scope="session")
def kube(kube_control_plane: kubeenv.KubeControlPlane, kubeconfig: str) -> Iterator[Any]:
    """A ready `kubernetes.client.ApiClient` on the real apiserver, with the project CRDs Established."""
    from kubernetes import config

    from reconciler.crds import load_crds

    api_client = config.new_client_from_config(config_file=kubeconfig)
    try:
        kubeenv.install_crds(api_client, load_crds())
        yield api_client
    finally:
        api_client.close()


@pytest.fixture
def kube_namespace(kube: Any) -> Iterator[str]:
    """A fresh namespace for one test, deleted afterwards. There is no controller-manager, so a deleted
    namespace stays Terminating with its objects: isolate by unique names, never rely on GC."""
    from kubernetes import client

    core = client.CoreV1Api(kube)
    name = f"test-{uuid.uuid4().hex[:10]}"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    try:
        yield name
    finally:
        core.delete_namespace(name)


@pytest.fixture(scope="session")
def pulumi_engine(tmp_path_factory: pytest.TempPathFactory) -> pulumienv.PulumiEngine:
    """The built `pulumi` CLI with an offline env: file:// backend and PULUMI_HOME in a temp dir."""
    return pulumienv.make_engine(tmp_path_factory.mktemp("pulumi"))
