"""Fixtures for the EC2 layer: the contract backends (simulator, and Boto3Ec2 on the session moto
server from tests/conftest.py); see backends.py. Simulator tests build worlds with simhelpers.py."""

from __future__ import annotations

import pytest

from tests.ec2.backends import Backend, moto_backend, sim_backend


@pytest.fixture(params=["sim", "moto"])
def backend(request: pytest.FixtureRequest) -> Backend:
    if request.param == "sim":
        return sim_backend()
    session = request.getfixturevalue("moto_session")
    endpoint = request.getfixturevalue("moto_endpoint")
    return moto_backend(session.client("ec2", endpoint_url=endpoint))
