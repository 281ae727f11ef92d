"""ENI-MET-1 names and labels exactly as Cilium exports them, served on loopback."""

from __future__ import annotations

import urllib.request

import pytest

from reconciler.controller.http import AddressError, Endpoints, parse_address
from reconciler.controller.metrics import IpamMetrics


def test_exposition_uses_ciliums_exact_names_and_labels_ENI_MET_1() -> None:
    m = IpamMetrics()
    m.set_node("node-1", available=16, used=8, needed=0)
    m.set_node_counts(total=3, in_deficit=1, at_capacity=1)
    m.allocation_op("subnet-1", 2)
    m.release_op("subnet-1")
    m.interface_creation_op("subnet-2")
    m.resynced()
    m.observe_allocation("ip", "success", "subnet-1", 0.2)
    m.observe_call("AssignPrivateIpAddresses", "OK", 0.05)
    m.observe_rate_limit("AssignPrivateIpAddresses", 0.25)
    text = m.exposition().decode()
    expected = [
        'cilium_operator_ipam_available_ips{target_node="node-1"} 16.0',
        'cilium_operator_ipam_used_ips{target_node="node-1"} 8.0',
        'cilium_operator_ipam_needed_ips{target_node="node-1"} 0.0',
        'cilium_operator_ipam_nodes{category="total"} 3.0',
        'cilium_operator_ipam_nodes{category="in-deficit"} 1.0',
        'cilium_operator_ipam_nodes{category="at-capacity"} 1.0',
        'cilium_operator_ipam_ip_allocation_ops{subnet_id="subnet-1"} 2.0',
        'cilium_operator_ipam_ip_release_ops{subnet_id="subnet-1"} 1.0',
        'cilium_operator_ipam_interface_creation_ops{subnet_id="subnet-2"} 1.0',
        "cilium_operator_ipam_resync_total 1.0",
        'cilium_operator_ipam_allocation_duration_seconds_count{status="success",subnet_id="subnet-1",'
        'type="ip"} 1.0',
        'cilium_operator_ec2_api_duration_seconds_count{operation="AssignPrivateIpAddresses",'
        'response_code="OK"} 1.0',
        'cilium_operator_ec2_api_rate_limit_duration_seconds_sum{operation="AssignPrivateIpAddresses"} 0.25',
        "# TYPE cilium_operator_ipam_ip_allocation_ops counter",
    ]
    for line in expected:
        assert line in text, line
    assert "_ops_total" not in text and "_created" not in text


def test_a_deleted_node_leaves_no_stale_gauges() -> None:
    m = IpamMetrics()
    m.set_node("node-1", 1, 1, 1)
    m.forget_node("node-1")
    assert 'target_node="node-1"' not in m.exposition().decode()


def test_addresses_bind_loopback_unless_a_host_is_named() -> None:
    assert parse_address("x", ":9963") == ("127.0.0.1", 9963)
    assert parse_address("x", "0.0.0.0:9963") == ("0.0.0.0", 9963)
    assert parse_address("x", "[::1]:9963") == ("::1", 9963)
    with pytest.raises(AddressError, match="--x expects"):
        parse_address("x", "9963")


def test_metrics_are_served_over_http() -> None:
    m = IpamMetrics()
    m.resynced()
    server = Endpoints("127.0.0.1", 0, {"/metrics": lambda: (200, "text/plain", m.exposition())}).start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=5) as resp:
            assert "cilium_operator_ipam_resync_total 1.0" in resp.read().decode()
    finally:
        server.stop()


def test_an_ipv6_pod_address_binds_too() -> None:
    """The provider passes `[$(POD_IP)]:port`; on IPv6 clusters that is a v6 address."""
    host, port = parse_address("health-addr", "[::1]:0")
    server = Endpoints(host, port, {"/healthz": lambda: (200, "text/plain", b"ok")}).start()
    try:
        with urllib.request.urlopen(f"http://[::1]:{server.port}/healthz", timeout=5) as resp:
            assert resp.read() == b"ok"
    finally:
        server.stop()
