"""User-caused errors read as one sentence in the dynamic-provider host; bugs keep their traceback."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from provider.errors import ProviderError, in_dynamic_provider_host, user_facing

HOST_SIMULATION = """
import runpy, sys, traceback, types
# Pretend to be `python -m pulumi.dynamic` without starting its gRPC server.
sys.modules["__main__"].__spec__ = types.SimpleNamespace(name="pulumi.dynamic.__main__")
from provider.errors import ProviderError, user_facing

@user_facing
def refused():
    raise ProviderError("CiliumPodIPPool blue is still in use by node-1; drain it first.")

@user_facing
def bug():
    return {}["missing"]

for call in (refused, bug, refused):
    try:
        call()
    except Exception:
        print(repr(traceback.format_exc()))
"""


def test_provider_error_is_one_sentence_in_the_host_and_bugs_keep_tracebacks() -> None:
    result = subprocess.run(
        [sys.executable, "-c", HOST_SIMULATION], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stderr
    refused, bug, refused_again = [ast.literal_eval(line) for line in result.stdout.splitlines()]
    expected = (
        "provider.errors.ProviderError: CiliumPodIPPool blue is still in use by node-1; drain it first.\n"
    )
    assert refused == expected and refused_again == expected
    assert bug.startswith("Traceback (most recent call last):") and "KeyError: 'missing'" in bug


def test_outside_the_host_nothing_global_changes() -> None:
    @user_facing
    def refused() -> None:
        raise ProviderError("no")

    assert not in_dynamic_provider_host()
    with pytest.raises(ProviderError, match="no"):
        refused()
    assert not hasattr(sys, "tracebacklimit")
