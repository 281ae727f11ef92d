"""Operator configuration for ENI mode (ENI-CFG-1) and cluster-name / GC-tag resolution (ENI-CFG-2).

Flag names and defaults match Cilium's operator so a platform team can reuse its Helm values. Values
may arrive typed (from Python callers) or as strings (CLI flags, config file, environment); both go
through `EniOperatorConfig.from_flags`, which rejects unknown or malformed values with one sentence.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

DEFAULT_CLUSTER_NAME = "default"
EKS_CLUSTER_NAME_TAG = "aws:eks:cluster-name"
GC_MANAGED_TAG = "io.cilium/cilium-managed"
GC_CLUSTER_TAG = "io.cilium/cluster-name"


class ConfigError(ValueError):
    """A flag value the operator cannot start with; the message is one sentence naming the fix."""


@dataclass(frozen=True)
class EniOperatorConfig:
    """Every knob of the ENI engine; defaults are Cilium's."""

    cluster_name: str = ""
    eni_tags: Mapping[str, str] = field(default_factory=dict)
    eni_gc_tags: Mapping[str, str] = field(default_factory=dict)
    eni_gc_interval: float = 300.0
    aws_release_excess_ips: bool = False
    excess_ip_release_delay: float = 180.0
    aws_enable_prefix_delegation: bool = False
    limit_ipam_api_qps: float = 4.0
    limit_ipam_api_burst: int = 20
    parallel_alloc_workers: int = 50
    subnet_ids_filter: tuple[str, ...] = ()
    subnet_tags_filter: Mapping[str, str] = field(default_factory=dict)
    instance_tags_filter: Mapping[str, str] = field(default_factory=dict)
    update_ec2_adapter_limit_via_api: bool = True
    aws_instance_limit_mapping: Mapping[str, str] = field(default_factory=dict)
    enable_metrics: bool = False
    dry_run: bool = False
    # Engine timings (not Cilium flags, but named so the simulator can shorten them).
    cache_refresh_interval: float = 60.0
    triggered_refresh_min_interval: float = 1.0
    allocation_min_interval: float = 1.0
    gc_max_deletions_per_run: int = 25
    adoption_grace: float = 30.0

    def __post_init__(self) -> None:
        checks: list[tuple[bool, str]] = [
            (self.eni_gc_interval >= 0, "--eni-gc-interval must be >= 0 (0 disables ENI garbage collection)"),
            (self.excess_ip_release_delay >= 0, "--excess-ip-release-delay must be >= 0 seconds"),
            (self.limit_ipam_api_qps > 0, "--limit-ipam-api-qps must be > 0"),
            (self.limit_ipam_api_burst >= 1, "--limit-ipam-api-burst must be >= 1"),
            (self.parallel_alloc_workers >= 1, "--parallel-alloc-workers must be >= 1"),
            (self.gc_max_deletions_per_run >= 1, "gc_max_deletions_per_run must be >= 1"),
        ]
        for ok, message in checks:
            if not ok:
                raise ConfigError(message)
        for itype, spec in self.aws_instance_limit_mapping.items():
            parse_limit_mapping_entry(itype, spec)

    @classmethod
    def from_flags(cls, flags: Mapping[str, Any]) -> EniOperatorConfig:
        """Build from `--flag-name` style keys (dashes or underscores, leading dashes optional)."""
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for raw_key, raw in flags.items():
            key = raw_key.lstrip("-").replace("-", "_")
            if key not in known:
                raise ConfigError(
                    f"unknown ENI operator flag --{raw_key.lstrip('-')}; remove it or fix its name"
                )
            values[key] = _coerce(key, known[key].type, raw)
        return cls(**values)

    @classmethod
    def from_env(cls, environ: Mapping[str, str], prefix: str = "CILIUM_") -> EniOperatorConfig:
        """Flags from the environment the way Cilium's operator reads them: `--eni-gc-interval` ->
        `CILIUM_ENI_GC_INTERVAL`. Unrelated variables are ignored."""
        names = {f.name for f in fields(cls)}
        picked = {
            key[len(prefix) :].lower(): value
            for key, value in environ.items()
            if key.startswith(prefix) and key[len(prefix) :].lower() in names
        }
        return cls.from_flags(picked)

    def limit_override(self, instance_type: str) -> tuple[int, int, int] | None:
        """`--aws-instance-limit-mapping` entry (adapters, IPv4 per adapter, IPv6 per adapter)."""
        spec = self.aws_instance_limit_mapping.get(instance_type)
        return None if spec is None else parse_limit_mapping_entry(instance_type, spec)


def parse_limit_mapping_entry(instance_type: str, spec: str) -> tuple[int, int, int]:
    parts = str(spec).split("+")
    if len(parts) != 3 or not all(p.strip().isdecimal() for p in parts):
        raise ConfigError(
            f"--aws-instance-limit-mapping entry {instance_type}={spec} is malformed; "
            "use <type>=<adapters>+<ipv4-per-adapter>+<ipv6-per-adapter> as Cilium does"
        )
    a, b, c = (int(p) for p in parts)
    return a, b, c


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_SCALE = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(flag: str, raw: Any) -> float:
    """Seconds from `300`, `180s`, `5m`, `1h`, `500ms` (Go duration subset) or a number."""
    if isinstance(raw, bool):
        raise ConfigError(f"--{flag} expects a duration such as 5m or 180s, got {raw!r}")
    if isinstance(raw, int | float):
        return float(raw)
    match = _DURATION.match(str(raw))
    if not match:
        raise ConfigError(f"--{flag} expects a duration such as 5m or 180s, got {raw!r}")
    return float(match.group(1)) * _SCALE[match.group(2)]


def parse_map(flag: str, raw: Any) -> dict[str, str]:
    """A `k1=v1,k2=v2` flag value (or an already-built mapping)."""
    if isinstance(raw, Mapping):
        return {str(k): str(v) for k, v in raw.items()}
    text = str(raw).strip()
    if not text:
        return {}
    out: dict[str, str] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--{flag} expects key=value pairs separated by commas, got {raw!r}")
        out[key.strip()] = value.strip()
    return out


def _parse_bool(flag: str, raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ConfigError(f"--{flag} expects true or false, got {raw!r}")


def _coerce(key: str, annotation: Any, raw: Any) -> Any:
    flag = key.replace("_", "-")
    kind = str(annotation)
    try:
        if kind == "bool":
            return _parse_bool(flag, raw)
        if kind == "str":
            return str(raw)
        if kind == "int":
            if isinstance(raw, bool):
                raise ValueError
            return int(raw)
        if kind == "float":
            if key in (
                "eni_gc_interval",
                "excess_ip_release_delay",
                "cache_refresh_interval",
                "triggered_refresh_min_interval",
                "allocation_min_interval",
                "adoption_grace",
            ):
                return parse_duration(flag, raw)
            if isinstance(raw, bool):
                raise ValueError
            return float(raw)
        if kind.startswith("tuple"):
            if isinstance(raw, str):
                return tuple(s.strip() for s in raw.split(",") if s.strip())
            return tuple(str(s) for s in raw)
        if kind.startswith("Mapping"):
            return parse_map(flag, raw)
    except ConfigError:
        raise
    except (TypeError, ValueError):
        raise ConfigError(f"--{flag} has a malformed value {raw!r}") from None
    raise ConfigError(f"--{flag} has an unsupported type")  # pragma: no cover - fields are fixed


def resolve_cluster_name(flag_value: str, own_instance_tags: Mapping[str, str] | None) -> str:
    """ENI-CFG-2: `--cluster-name`, else the EKS tag of the operator's own instance, else `default`."""
    if flag_value:
        return flag_value
    tag = (own_instance_tags or {}).get(EKS_CLUSTER_NAME_TAG, "")
    return tag or DEFAULT_CLUSTER_NAME


def gc_tags(config: EniOperatorConfig, cluster_name: str) -> dict[str, str]:
    """ENI-CFG-2: the tags that mark an ENI as ours for garbage collection."""
    if config.eni_gc_tags:
        return dict(config.eni_gc_tags)
    return {GC_MANAGED_TAG: "true", GC_CLUSTER_TAG: cluster_name}


def creation_tags(config: EniOperatorConfig, cluster_name: str) -> dict[str, str]:
    """ENI-CREATE-3: `--eni-tags` plus the GC tags (GC tags win on a clash so GC stays correct)."""
    return {**dict(config.eni_tags), **gc_tags(config, cluster_name)}
