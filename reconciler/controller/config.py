"""`cilium-ipam operator` configuration: flags, a config file and the environment, merged and checked.

Precedence, lowest first: built-in defaults < `--config-file` (YAML or JSON mapping of flag names)
< environment `CILIUM_IPAM_<FLAG>` (e.g. `CILIUM_IPAM_LIMIT_IPAM_API_QPS=10`) < command line.
ENI flag names and defaults are Cilium's (ENI-CFG-1) and are checked by the ENI engine's own
`EniOperatorConfig.from_flags`; multi-pool flags by the multi-pool library (MP-CFG-1, MP-PRE-1).
Every mistake becomes a `ConfigError` whose message is one sentence; the CLI prints it and exits 2.

`--ec2-api-rate-limiter` picks the client-side EC2 limiter: `aws-buckets` (default; one bucket per
action sized like AWS's, EC2-SIM-5) or `single` (Cilium's one bucket of `--limit-ipam-api-qps` /
`--limit-ipam-api-burst`). Those two flags have no value in the table so that setting them is
visible: with `aws-buckets`, a user who sets either still gets that ceiling, on all calls together.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from reconciler.controller.http import AddressError, parse_address
from reconciler.controller.leader import LeaseTimings
from reconciler.eni.config import ConfigError as EniConfigError
from reconciler.eni.config import EniOperatorConfig, parse_duration, parse_map

ENV_PREFIX = "CILIUM_IPAM_"
IPAM_MODES = ("eni", "multi-pool")
EC2_RATE_LIMITERS = ("aws-buckets", "single")
LIMIT_FLAGS = ("limit-ipam-api-qps", "limit-ipam-api-burst")
LEASE_NAME = "cilium-operator-resource-lock"


class ConfigError(ValueError):
    """A configuration the operator cannot start with; `str()` is one sentence naming the fix."""


@dataclass(frozen=True)
class Flag:
    name: str
    default: str | None
    help: str
    boolean: bool = False
    hidden: bool = False


# ENI-CFG-1, same names and defaults as Cilium's operator (values are parsed by EniOperatorConfig).
ENI_FLAGS: tuple[Flag, ...] = (
    Flag("cluster-name", "", "cluster name; else this instance's aws:eks:cluster-name tag, else 'default'"),
    Flag("eni-tags", "", "tags for ENIs the operator creates (k1=v1,k2=v2)"),
    Flag("eni-gc-tags", "", "tags that mark ENIs for garbage collection (default: io.cilium/* GC tags)"),
    Flag("eni-gc-interval", "5m", "interval of ENI garbage collection; 0 disables it"),
    Flag("aws-release-excess-ips", "false", "release excess IPs back to EC2", boolean=True),
    Flag("excess-ip-release-delay", "180s", "how long a CIDR must stay unused before it is released"),
    Flag("aws-enable-prefix-delegation", "false", "allocate /28 prefixes on Nitro instances", boolean=True),
    # No table default: unset means Cilium's 4 / 20 (EniOperatorConfig), set means a ceiling (see top).
    Flag("limit-ipam-api-qps", None, "EC2 calls per second (default 4); with aws-buckets, a total cap"),
    Flag("limit-ipam-api-burst", None, "EC2 call burst (default 20); with aws-buckets, a total cap"),
    Flag("parallel-alloc-workers", "50", "nodes worked on in parallel"),
    Flag("subnet-ids-filter", "", "only use these subnet IDs (comma separated)"),
    Flag("subnet-tags-filter", "", "only use subnets with these tags (k1=v1,...)"),
    Flag("instance-tags-filter", "", "only manage instances with these tags (k1=v1,...)"),
    Flag("update-ec2-adapter-limit-via-api", "true", "read instance limits with DescribeInstanceTypes",
         boolean=True),
    Flag("aws-instance-limit-mapping", "", "override limits: <type>=<adapters>,<ipv4>,<ipv6>,..."),
    Flag("enable-metrics", "false", "serve ENI-MET-1 metrics on --operator-prometheus-serve-addr",
         boolean=True),
)

MULTI_POOL_FLAGS: tuple[Flag, ...] = (
    Flag("ipam-multi-pool-pre-allocation", "default=8", "per-pool pre-allocation (pool=count,...), MP-PRE-1"),
    Flag("auto-create-cilium-pod-ip-pools", "", "pools to create at start (MP-CFG-1 flag form)"),
)

RUNTIME_FLAGS: tuple[Flag, ...] = (
    Flag("ipam", None, "IPAM mode: eni or multi-pool"),
    Flag("kubeconfig", "", "kubeconfig path; empty = in-cluster service account"),
    Flag("ec2-endpoint", "", "EC2 endpoint URL (e.g. a moto server); empty = AWS"),
    Flag("aws-region", "", "AWS region; empty = from the environment / instance metadata"),
    Flag("leader-election-namespace", "kube-system", "namespace of the leader election Lease"),
    Flag("leader-election-lease-name", LEASE_NAME, "name of the leader election Lease"),
    Flag("leader-election-identity", "", "this candidate's identity; default <hostname>-<pid>"),
    Flag("leader-election-lease-duration", "15s", "how long a lease is valid without renewal"),
    Flag("leader-election-renew-deadline", "10s", "the leader stops working if it cannot renew in this time"),
    Flag("leader-election-retry-period", "2s", "interval between acquire / renew attempts"),
    Flag("operator-prometheus-serve-addr", ":9963", "[host]:port for /metrics; empty host = 127.0.0.1"),
    Flag("health-addr", ":9234", "[host]:port for /healthz and /readyz; empty host = 127.0.0.1"),
    Flag("ec2-api-rate-limiter", "aws-buckets",
         "client-side EC2 limiter: aws-buckets (a bucket per action, AWS's sizes) or single (Cilium's)"),
    Flag("dry-run", "false", "plan and log every EC2 mutation with its reason, perform none", boolean=True),
    Flag("log-level", "info", "debug, info, warning or error"),
    Flag("ec2-simulated-world", "", "TEST ONLY: JSON world for an in-process SimulatedEc2", hidden=True),
    Flag("resync-interval", "1m", "TEST ONLY: interval of the IPAM scan (Cilium: fixed 1m)", hidden=True),
)

ALL_FLAGS: tuple[Flag, ...] = RUNTIME_FLAGS + ENI_FLAGS + MULTI_POOL_FLAGS
_BY_NAME = {f.name: f for f in ALL_FLAGS}


@dataclass(frozen=True)
class OperatorConfig:
    ipam: str
    kubeconfig: str
    ec2_endpoint: str
    aws_region: str
    lease_namespace: str
    lease_name: str
    identity: str
    lease: LeaseTimings
    metrics_addr: tuple[str, int] | None
    health_addr: tuple[str, int] | None
    dry_run: bool
    log_level: str
    eni: EniOperatorConfig
    multi_pool_pre_allocation: Mapping[str, int] = field(default_factory=dict)
    auto_create_pools: str = ""
    simulated_world: str = ""
    resync_interval: float = 60.0
    ec2_api_rate_limiter: str = "aws-buckets"
    ec2_api_rate_cap: tuple[float, int] | None = None  # (qps, burst) over all calls, aws-buckets only


def add_flags(parser: argparse.ArgumentParser) -> None:
    """Every flag takes a value (`--dry-run` alone means true); defaults live in ALL_FLAGS, not here."""
    parser.add_argument("--config-file", default=None, help="YAML or JSON mapping of these flag names")
    for flag in ALL_FLAGS:
        kwargs: dict[str, Any] = {
            "dest": flag.name.replace("-", "_"),
            "default": None,
            "help": argparse.SUPPRESS if flag.hidden else _help(flag),
        }
        if flag.boolean:
            kwargs.update(nargs="?", const="true", metavar="BOOL")
        parser.add_argument(f"--{flag.name}", **kwargs)


def _help(flag: Flag) -> str:
    return flag.help if flag.default is None else f"{flag.help} (default {flag.default!r})"


def _normalise(key: str, where: str) -> str:
    name = str(key).strip().lstrip("-").replace("_", "-").lower()
    if name not in _BY_NAME:
        raise ConfigError(
            f"unknown flag {key!r} in {where}; remove it or use a flag from `cilium-ipam operator --help`"
        )
    return name


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return ",".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def read_config_file(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise ConfigError(f"cannot read --config-file {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text) if path.endswith(".json") else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError):
        raise ConfigError(f"--config-file {path} is not valid YAML or JSON; fix its syntax") from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"--config-file {path} must hold a mapping of flag names to values")
    return {_normalise(k, f"--config-file {path}"): v for k, v in data.items()}


def read_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in environ.items():
        if key.startswith(ENV_PREFIX) and key != f"{ENV_PREFIX}CONFIG_FILE":
            out[_normalise(key[len(ENV_PREFIX):], f"environment variable {key}")] = value
    return out


def merge_sources(args: argparse.Namespace, environ: Mapping[str, str]) -> dict[str, Any]:
    """defaults < config file < environment < command line."""
    values: dict[str, Any] = {f.name: f.default for f in ALL_FLAGS}
    config_file = args.config_file or environ.get(f"{ENV_PREFIX}CONFIG_FILE")
    if config_file:
        values.update(read_config_file(config_file))
    values.update(read_environment(environ))
    for flag in ALL_FLAGS:
        given = getattr(args, flag.name.replace("-", "_"), None)
        if given is not None:
            values[flag.name] = given
    return values


def _duration(flag: str, raw: Any) -> float:
    try:
        return parse_duration(flag, raw)
    except EniConfigError as exc:
        raise ConfigError(str(exc)) from None


def _address(flag: str, raw: Any) -> tuple[str, int] | None:
    text = _as_text(raw).strip()
    if not text:
        return None
    try:
        return parse_address(flag, text)
    except AddressError as exc:
        raise ConfigError(str(exc)) from None


def _pre_allocation(raw: Any) -> dict[str, int]:
    flag = "ipam-multi-pool-pre-allocation"
    try:
        entries = parse_map(flag, raw)
    except EniConfigError as exc:
        raise ConfigError(str(exc)) from None
    out: dict[str, int] = {}
    for pool, count in entries.items():
        if not count.strip().isdecimal():
            raise ConfigError(f"--{flag} entry {pool}={count} needs a whole number >= 0, e.g. default=8")
        out[pool] = int(count)
    return out


def build_config(values: Mapping[str, Any]) -> OperatorConfig:
    """Typed configuration from merged flag values, or ConfigError with one sentence."""
    ipam = _as_text(values.get("ipam") or "").strip()
    if ipam not in IPAM_MODES:
        raise ConfigError(f"--ipam must be eni or multi-pool (got {ipam!r}); set it on the command line")
    try:
        eni = EniOperatorConfig.from_flags(
            {f.name: _as_text(values[f.name]) for f in ENI_FLAGS if values.get(f.name) not in (None, "")}
            | {"dry-run": _as_text(values["dry-run"])}
        )
    except EniConfigError as exc:
        raise ConfigError(str(exc)) from None
    lease = LeaseTimings(
        lease_duration=_duration("leader-election-lease-duration", values["leader-election-lease-duration"]),
        renew_deadline=_duration("leader-election-renew-deadline", values["leader-election-renew-deadline"]),
        retry_period=_duration("leader-election-retry-period", values["leader-election-retry-period"]),
    )
    problem = lease.problem()
    if problem:
        raise ConfigError(problem)
    auto_create = _as_text(values.get("auto-create-cilium-pod-ip-pools") or "")
    if auto_create:
        if ipam != "multi-pool":
            raise ConfigError("--auto-create-cilium-pod-ip-pools only applies with --ipam=multi-pool")
        from reconciler.multipool.autocreate import parse_auto_create

        try:
            parse_auto_create(auto_create)
        except ValueError as exc:
            raise ConfigError(str(exc).rstrip(".")) from None
    level = _as_text(values["log-level"]).lower()
    if level not in ("debug", "info", "warning", "error"):
        raise ConfigError(f"--log-level must be debug, info, warning or error (got {level!r})")
    limiter = _as_text(values["ec2-api-rate-limiter"]).strip().lower()
    if limiter not in EC2_RATE_LIMITERS:
        raise ConfigError(f"--ec2-api-rate-limiter must be aws-buckets or single (got {limiter!r})")
    capped = limiter == "aws-buckets" and any(values.get(f) not in (None, "") for f in LIMIT_FLAGS)
    identity = _as_text(values.get("leader-election-identity") or "")
    identity = identity or f"{socket.gethostname()}-{os.getpid()}"
    return OperatorConfig(
        ipam=ipam,
        kubeconfig=_as_text(values["kubeconfig"]),
        ec2_endpoint=_as_text(values["ec2-endpoint"]),
        aws_region=_as_text(values["aws-region"]),
        lease_namespace=_as_text(values["leader-election-namespace"]),
        lease_name=_as_text(values["leader-election-lease-name"]),
        identity=identity,
        lease=lease,
        metrics_addr=_address("operator-prometheus-serve-addr", values["operator-prometheus-serve-addr"]),
        health_addr=_address("health-addr", values["health-addr"]),
        dry_run=eni.dry_run,
        log_level=level,
        eni=eni,
        multi_pool_pre_allocation=_pre_allocation(values["ipam-multi-pool-pre-allocation"]),
        auto_create_pools=auto_create,
        simulated_world=_as_text(values.get("ec2-simulated-world") or ""),
        resync_interval=_positive_duration("resync-interval", values["resync-interval"]),
        ec2_api_rate_limiter=limiter,
        ec2_api_rate_cap=(eni.limit_ipam_api_qps, eni.limit_ipam_api_burst) if capped else None,
    )


def _positive_duration(flag: str, raw: Any) -> float:
    seconds = _duration(flag, raw)
    if seconds <= 0:
        raise ConfigError(f"--{flag} must be a positive duration such as 1m")
    return seconds
