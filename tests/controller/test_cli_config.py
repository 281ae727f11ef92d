"""`cilium-ipam operator` configuration (ENI-CFG-1, MP-CFG-1): flags, config file, environment.

Every mistake exits 2 with exactly one sentence on stderr and no traceback.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from reconciler.cli import build_parser, main
from reconciler.controller.config import ConfigError, OperatorConfig, build_config, merge_sources


def config_from(argv: list[str], env: dict[str, str] | None = None) -> OperatorConfig:
    args = build_parser().parse_args(["operator", *argv])
    return build_config(merge_sources(args, env or {}))


def test_defaults_are_ciliums_ENI_CFG_1() -> None:
    cfg = config_from(["--ipam=eni"])
    eni = cfg.eni
    assert (eni.eni_gc_interval, eni.excess_ip_release_delay) == (300.0, 180.0)
    assert (eni.limit_ipam_api_qps, eni.limit_ipam_api_burst, eni.parallel_alloc_workers) == (4.0, 20, 50)
    assert not eni.aws_release_excess_ips and not eni.aws_enable_prefix_delegation and not cfg.dry_run
    assert (cfg.lease.lease_duration, cfg.lease.renew_deadline, cfg.lease.retry_period) == (15, 10, 2)
    assert cfg.metrics_addr == ("127.0.0.1", 9963)  # loopback unless a host is named
    assert cfg.lease_namespace == "kube-system"
    assert dict(cfg.multi_pool_pre_allocation) == {"default": 8}  # MP-PRE-1


def test_flags_parse_cilium_value_forms() -> None:
    cfg = config_from(
        [
            "--ipam=eni",
            "--eni-tags=team=net,env=prod",
            "--eni-gc-interval=10m",
            "--aws-release-excess-ips",
            "--subnet-ids-filter=subnet-1,subnet-2",
            "--operator-prometheus-serve-addr=0.0.0.0:9000",
            "--dry-run=true",
        ]
    )
    assert dict(cfg.eni.eni_tags) == {"team": "net", "env": "prod"}
    assert cfg.eni.eni_gc_interval == 600.0
    assert cfg.eni.aws_release_excess_ips is True
    assert cfg.eni.subnet_ids_filter == ("subnet-1", "subnet-2")
    assert cfg.metrics_addr == ("0.0.0.0", 9000)
    assert cfg.dry_run and cfg.eni.dry_run


def test_command_line_beats_environment_beats_config_file(tmp_path: Path) -> None:
    path = tmp_path / "operator.yaml"
    path.write_text("limit-ipam-api-qps: 7\nlimit_ipam_api_burst: 30\nparallel-alloc-workers: 3\n"
                    "eni-tags: {a: b}\n")
    env = {"CILIUM_IPAM_LIMIT_IPAM_API_BURST": "40", "CILIUM_IPAM_PARALLEL_ALLOC_WORKERS": "4"}
    cfg = config_from(["--ipam=eni", f"--config-file={path}", "--parallel-alloc-workers=5"], env)
    assert (cfg.eni.limit_ipam_api_qps, cfg.eni.limit_ipam_api_burst, cfg.eni.parallel_alloc_workers) == (
        7.0,
        40,
        5,
    )
    assert dict(cfg.eni.eni_tags) == {"a": "b"}


def test_json_config_file_and_multi_pool_flags_MP_CFG_1(tmp_path: Path) -> None:
    path = tmp_path / "operator.json"
    path.write_text(json.dumps({
        "ipam": "multi-pool",
        "auto-create-cilium-pod-ip-pools": "default=ipv4-cidrs:10.10.0.0/16;ipv4-mask-size:24",
        "ipam-multi-pool-pre-allocation": "default=16,blue=4",
    }))
    cfg = config_from([f"--config-file={path}"])
    assert cfg.ipam == "multi-pool"
    assert dict(cfg.multi_pool_pre_allocation) == {"default": 16, "blue": 4}


@pytest.mark.parametrize(
    ("argv", "env", "fragment"),
    [
        (["--ipam=eni", "--limit-ipam-api-qps=-1"], {}, "--limit-ipam-api-qps must be > 0"),
        (["--ipam=eni", "--eni-tags=oops"], {}, "--eni-tags expects key=value"),
        (["--ipam=eni", "--no-such-flag=1"], {}, "unrecognized arguments: --no-such-flag"),
        (["--ipam=cluster-pool"], {}, "--ipam must be eni or multi-pool"),
        (["--ipam=eni", "--excess-ip-release-delay=soon"], {}, "expects a duration"),
        (["--ipam=eni", "--leader-election-lease-duration=5s"], {}, "must be longer than"),
        (["--ipam=eni", "--operator-prometheus-serve-addr=9963"], {}, "expects [host]:port"),
        (["--ipam=eni"], {"CILIUM_IPAM_LIMIT_IPAM_API_QSP": "3"}, "unknown flag"),
        (["--ipam=eni", "--auto-create-cilium-pod-ip-pools=a=ipv4-cidrs:10.0.0.0/8"], {}, "multi-pool"),
        (["--ipam=multi-pool", "--ipam-multi-pool-pre-allocation=default=lots"], {}, "whole number"),
        # '²' passes str.isdigit() but not int(): still one sentence, never a ValueError traceback
        (["--ipam=multi-pool", "--ipam-multi-pool-pre-allocation=default=8\u00b2"], {}, "whole number"),
        (["--ipam=eni", "--operator-prometheus-serve-addr=:99\u00b2"], {}, "expects [host]:port"),
        (["--ipam=eni", "--parallel-alloc-workers=many"], {}, "--parallel-alloc-workers"),
    ],
)
def test_config_errors_exit_2_with_one_sentence(
    argv: list[str], env: dict[str, str], fragment: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(SystemExit) as exited:
        raise SystemExit(main(["operator", *argv]))
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert fragment in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_missing_or_malformed_config_file_is_one_sentence(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("limit-ipam-api-qps: [unclosed\n")
    for path, fragment in ((tmp_path / "missing.yaml", "cannot read"), (bad, "not valid YAML")):
        args = build_parser().parse_args(["operator", "--ipam=eni", f"--config-file={path}"])
        with pytest.raises(ConfigError, match=fragment):
            build_config(merge_sources(args, {}))


def test_unknown_keys_in_a_config_file_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("ipam: eni\nlimit-ipam-qps: 3\n")
    args = argparse.Namespace(config_file=str(path))
    with pytest.raises(ConfigError, match="unknown flag 'limit-ipam-qps'"):
        merge_sources(args, {})


def test_an_unusable_kubeconfig_stops_the_process_with_one_sentence(tmp_path: Path) -> None:
    import subprocess
    import sys

    cli = Path(sys.executable).parent / "cilium-ipam"
    done = subprocess.run(
        [str(cli), "operator", "--ipam=eni", f"--kubeconfig={tmp_path / 'missing'}"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot load the Kubernetes configuration" in lines[0]
    assert "pass a valid --kubeconfig" in lines[0]
