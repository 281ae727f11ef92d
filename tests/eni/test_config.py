"""ENI-CFG-1 (flags, defaults, validation) and ENI-CFG-2 (cluster name, GC tags)."""

from __future__ import annotations

import pytest

from reconciler.eni.config import (
    ConfigError,
    EniOperatorConfig,
    creation_tags,
    gc_tags,
    resolve_cluster_name,
)


def test_eni_cfg_1_defaults_match_cilium() -> None:
    cfg = EniOperatorConfig()
    assert cfg.eni_gc_interval == 300.0
    assert cfg.aws_release_excess_ips is False
    assert cfg.excess_ip_release_delay == 180.0
    assert cfg.aws_enable_prefix_delegation is False
    assert cfg.limit_ipam_api_qps == 4.0
    assert cfg.limit_ipam_api_burst == 20
    assert cfg.parallel_alloc_workers == 50
    assert cfg.cluster_name == ""
    assert dict(cfg.eni_tags) == {} and dict(cfg.eni_gc_tags) == {}


def test_eni_cfg_1_parses_cli_style_strings() -> None:
    cfg = EniOperatorConfig.from_flags(
        {
            "--cluster-name": "prod",
            "--eni-tags": "team=net, env=prod",
            "--eni-gc-interval": "10m",
            "--aws-release-excess-ips": "true",
            "--excess-ip-release-delay": "90",
            "--aws-enable-prefix-delegation": "1",
            "--limit-ipam-api-qps": "8",
            "--limit-ipam-api-burst": "40",
            "--parallel-alloc-workers": "10",
            "--subnet-ids-filter": "subnet-a,subnet-b",
            "--subnet-tags-filter": "use=pods",
            "instance_tags_filter": {"k8s": "yes"},
            "--aws-instance-limit-mapping": "m5.large=3+10+10,c5.large=3+10+10",
        }
    )
    assert cfg.cluster_name == "prod"
    assert dict(cfg.eni_tags) == {"team": "net", "env": "prod"}
    assert cfg.eni_gc_interval == 600.0
    assert cfg.aws_release_excess_ips is True
    assert cfg.excess_ip_release_delay == 90.0
    assert cfg.aws_enable_prefix_delegation is True
    assert (cfg.limit_ipam_api_qps, cfg.limit_ipam_api_burst, cfg.parallel_alloc_workers) == (8.0, 40, 10)
    assert cfg.subnet_ids_filter == ("subnet-a", "subnet-b")
    assert dict(cfg.subnet_tags_filter) == {"use": "pods"}
    assert dict(cfg.instance_tags_filter) == {"k8s": "yes"}
    assert cfg.limit_override("m5.large") == (3, 10, 10)
    assert cfg.limit_override("m5.xlarge") is None


@pytest.mark.parametrize(
    ("flags", "fragment"),
    [
        ({"--no-such-flag": "1"}, "unknown ENI operator flag --no-such-flag"),
        ({"--eni-gc-interval": "soon"}, "--eni-gc-interval expects a duration"),
        ({"--aws-release-excess-ips": "maybe"}, "--aws-release-excess-ips expects true or false"),
        ({"--eni-tags": "novalue"}, "--eni-tags expects key=value pairs"),
        ({"--parallel-alloc-workers": "0"}, "--parallel-alloc-workers must be >= 1"),
        ({"--limit-ipam-api-qps": "-1"}, "--limit-ipam-api-qps must be > 0"),
        ({"--limit-ipam-api-burst": "x"}, "--limit-ipam-api-burst has a malformed value"),
        ({"--aws-instance-limit-mapping": "m5.large=3+10"}, "--aws-instance-limit-mapping entry"),
        ({"--aws-instance-limit-mapping": "m5.large=3+10\u00b2+10"}, "--aws-instance-limit-mapping entry"),
    ],
)
def test_eni_cfg_1_malformed_values_rejected_with_one_sentence(flags: dict[str, str], fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        EniOperatorConfig.from_flags(flags)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("flag", "tags", "expected"),
    [
        ("prod", {"aws:eks:cluster-name": "eks-a"}, "prod"),
        ("", {"aws:eks:cluster-name": "eks-a"}, "eks-a"),
        ("", {"Name": "x"}, "default"),
        ("", None, "default"),
    ],
)
def test_eni_cfg_2_cluster_name_resolution(flag: str, tags: dict[str, str] | None, expected: str) -> None:
    assert resolve_cluster_name(flag, tags) == expected


def test_eni_cfg_2_gc_tags_default_and_override() -> None:
    assert gc_tags(EniOperatorConfig(), "prod") == {
        "io.cilium/cilium-managed": "true",
        "io.cilium/cluster-name": "prod",
    }
    custom = EniOperatorConfig(eni_gc_tags={"owner": "me"})
    assert gc_tags(custom, "prod") == {"owner": "me"}


def test_eni_create_3_creation_tags_are_eni_tags_plus_gc_tags() -> None:
    cfg = EniOperatorConfig(eni_tags={"team": "net", "io.cilium/cluster-name": "spoof"})
    assert creation_tags(cfg, "prod") == {
        "team": "net",
        "io.cilium/cilium-managed": "true",
        "io.cilium/cluster-name": "prod",
    }


def test_eni_cfg_1_flags_from_environment() -> None:
    cfg = EniOperatorConfig.from_env(
        {
            "CILIUM_CLUSTER_NAME": "prod",
            "CILIUM_AWS_RELEASE_EXCESS_IPS": "true",
            "CILIUM_ENI_GC_INTERVAL": "2m",
            "CILIUM_UNRELATED": "x",
            "HOME": "/root",
        }
    )
    assert (cfg.cluster_name, cfg.aws_release_excess_ips, cfg.eni_gc_interval) == ("prod", True, 120.0)
    with pytest.raises(ConfigError, match="--excess-ip-release-delay"):
        EniOperatorConfig.from_env({"CILIUM_EXCESS_IP_RELEASE_DELAY": "later"})
