"""Session fixtures for the real test environment: moto (EC2/IAM), kube-apiserver + etcd, Pulumi.

Every server listens on 127.0.0.1 only, starts lazily the first time a test asks for it, and is
stopped at session end even when a test fails. The heavy pieces (kube, pulumi) live in
tests/toolchain/ so this file stays a thin list of fixtures.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

AWS_REGION = "us-east-1"
DUMMY_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": AWS_REGION,
    "AWS_REGION": AWS_REGION,
}


def free_loopback_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
