"""ENI-HOST-1: the node OS snippets leave eth0 managed and every other ethN to Cilium."""

from __future__ import annotations

import configparser
import fnmatch
import subprocess

import pytest

from provider.host_network import (
    NETWORK_MANAGER_PATH,
    NETWORKD_PATH,
    host_setup_script,
    unmanaged_interface_snippets,
)


def test_eni_host_1_snippets_mark_all_but_eth0_unmanaged() -> None:
    files = unmanaged_interface_snippets()
    nm = configparser.ConfigParser()
    nm.read_string(files[NETWORK_MANAGER_PATH])
    assert nm["keyfile"]["unmanaged-devices"] == "interface-name:eth*,except:interface-name:eth0"
    networkd = configparser.ConfigParser()
    networkd.optionxform = str  # type: ignore[assignment,method-assign]
    networkd.read_string(files[NETWORKD_PATH])
    assert networkd["Link"]["Unmanaged"] == "yes"
    pattern = networkd["Match"]["Name"]
    assert not fnmatch.fnmatch("eth0", pattern)
    assert all(fnmatch.fnmatch(f"eth{i}", pattern) for i in (1, 2, 9, 10, 15))


def test_setup_script_is_valid_shell_and_writes_both_files() -> None:
    script = host_setup_script()
    assert subprocess.run(["sh", "-n"], input=script, text=True, check=False).returncode == 0
    assert NETWORK_MANAGER_PATH in script and NETWORKD_PATH in script


def test_bad_interface_prefix_refused() -> None:
    with pytest.raises(ValueError, match="device-name stem"):
        unmanaged_interface_snippets("eth;rm -rf /")
