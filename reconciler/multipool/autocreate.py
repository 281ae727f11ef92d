"""Pools to auto-create at operator start (MP-CFG-1), from the Helm map or Cilium's flag form.

Helm form (`ipam.operator.autoCreateCiliumPodIPPools`)::

    default: {ipv4: {cidrs: [10.10.0.0/16], maskSize: 24}}
    other:   {ipv4: {cidrs: [10.20.0.0/16], maskSize: 24}, ipv6: {cidrs: [fd00::/104], maskSize: 120}}

Flag form (`--auto-create-cilium-pod-ip-pools`), one pool per map entry::

    default=ipv4-cidrs:10.10.0.0/16,10.11.0.0/16;ipv4-mask-size:24[;ipv6-cidrs:fd00::/104;ipv6-mask-size:120]

Several pools are separated the way Cilium parses its map flags: by commas, where a comma only starts
a new entry when the text up to the next comma contains `=` (so CIDR lists may contain commas), e.g.
`a=ipv4-cidrs:10.0.0.0/16,10.1.0.0/16;ipv4-mask-size:24,b=ipv4-cidrs:10.2.0.0/16;ipv4-mask-size:24`.
Like pflag, the flag may also be repeated (pass a list), and a JSON object `{"a": "<spec>"}` is
accepted. Inside a spec, fields are separated by `;`, spaces are ignored, and each field is cut at its
first `:` (IPv6 CIDRs keep theirs). Cilium 1.20 also accepts `allow-first-ip:<bool>` and
`allow-last-ip:<bool>`. Existing pools are never updated: `pools_to_create` skips their names.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from reconciler.multipool.operator import join_sentences
from reconciler.multipool.pools import CiliumPodIPPool, PoolFamily, pool_problems

FLAG = "--auto-create-cilium-pod-ip-pools"
SPEC_KEYS = (
    "ipv4-cidrs",
    "ipv4-mask-size",
    "ipv6-cidrs",
    "ipv6-mask-size",
    "allow-first-ip",
    "allow-last-ip",
)


class AutoCreateError(ValueError):
    """A malformed auto-create entry; one sentence naming the pool and the fix."""


def split_map_flag(value: str) -> list[str]:
    """Split `k1=v1,k2=v2` where values may contain commas (Cilium's map-flag rule)."""
    text = value.strip()
    if not text:
        return []
    pieces = text.split(",")
    entries: list[str] = []
    for piece in pieces:
        if "=" in piece or not entries:
            entries.append(piece)
        else:
            entries[-1] += "," + piece
    return entries


def parse_flag_entries(value: str | Sequence[str] | Mapping[str, str]) -> dict[str, str]:
    """name -> spec string, from a flag value, repeated flag values or a JSON/dict map."""
    raw: dict[str, str] = {}
    if isinstance(value, Mapping):
        return {str(k).strip(): str(v) for k, v in value.items()}
    values = [value] if isinstance(value, str) else list(value)
    for item in values:
        stripped = item.strip()
        if stripped.startswith("{"):
            try:
                obj = json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise AutoCreateError(
                    f"{FLAG} value {stripped!r} is not valid JSON ({exc.msg}); fix the JSON."
                ) from None
            if not isinstance(obj, dict):
                raise AutoCreateError(f"{FLAG} JSON value must be an object of pool name to spec string.")
            raw.update({str(k).strip(): str(v) for k, v in obj.items()})
            continue
        for entry in split_map_flag(stripped):
            name, sep, spec = entry.partition("=")
            if not sep or not name.strip():
                raise AutoCreateError(
                    f"{FLAG} entry {entry!r} is not of the form "
                    "<pool>=ipv4-cidrs:<cidr>[,<cidr>];ipv4-mask-size:<n>."
                )
            raw[name.strip()] = spec
    return raw


def parse_pool_spec(name: str, spec: str) -> CiliumPodIPPool:
    """One flag-form spec string -> a pool (validated)."""
    fields = [f for f in spec.replace(" ", "").split(";") if f]
    if not fields:
        raise AutoCreateError(
            f"auto-create pool {name} has an empty spec; give at least ipv4-cidrs and ipv4-mask-size."
        )
    cidrs: dict[int, tuple[str, ...]] = {}
    masks: dict[int, int] = {}
    allow = {"allow-first-ip": False, "allow-last-ip": False}
    for fld in fields:
        key, sep, val = fld.partition(":")
        if not sep:
            raise AutoCreateError(
                f"auto-create pool {name}: field {fld!r} has no ':'; write key:value, e.g. ipv4-mask-size:24."
            )
        if key not in SPEC_KEYS:
            raise AutoCreateError(
                f"auto-create pool {name}: unknown key {key!r}; use one of {', '.join(SPEC_KEYS)}."
            )
        version = 6 if key.startswith("ipv6") else 4
        if key.endswith("-cidrs"):
            cidrs[version] = tuple(c for c in val.split(",") if c)
        elif key.endswith("-mask-size"):
            if not val.isdecimal():  # isdigit() also takes "²", which int() refuses
                raise AutoCreateError(
                    f"auto-create pool {name}: {key} {val!r} is not a whole number; e.g. {key}:24."
                )
            masks[version] = int(val)
        else:
            if val.lower() not in ("true", "false"):
                raise AutoCreateError(f"auto-create pool {name}: {key} {val!r} must be true or false.")
            allow[key] = val.lower() == "true"
    families: dict[int, PoolFamily] = {}
    for version in (4, 6):
        if (version in cidrs) != (version in masks):
            missing = f"ipv{version}-mask-size" if version in cidrs else f"ipv{version}-cidrs"
            raise AutoCreateError(f"auto-create pool {name} sets IPv{version} only partly; add {missing}.")
        if version in cidrs:
            families[version] = PoolFamily(cidrs[version], masks[version])
    pool = CiliumPodIPPool(
        name=name,
        ipv4=families.get(4),
        ipv6=families.get(6),
        allow_first_ip=allow["allow-first-ip"],
        allow_last_ip=allow["allow-last-ip"],
    )
    _check(pool, "auto-create pool")
    return pool


def _helm_family(name: str, version: int, obj: Any) -> PoolFamily | None:
    if obj is None:
        return None
    if not isinstance(obj, Mapping):
        raise AutoCreateError(
            f"autoCreateCiliumPodIPPools.{name}.ipv{version} must be a map with cidrs and maskSize."
        )
    raw = obj.get("cidrs")
    if isinstance(raw, str):
        cidrs = tuple(c.strip() for c in raw.split(",") if c.strip())
    else:
        cidrs = tuple(str(c).strip() for c in raw or ())
    mask = obj.get("maskSize")
    if isinstance(mask, bool) or not str(mask).strip().isdecimal():
        raise AutoCreateError(
            f"autoCreateCiliumPodIPPools.{name}.ipv{version}.maskSize {mask!r} is not a whole number; "
            "set e.g. 24."
        )
    return PoolFamily(cidrs, int(str(mask).strip()))


def parse_helm_pools(values: Mapping[str, Any]) -> list[CiliumPodIPPool]:
    """The Helm map form -> pools, sorted by name (validated)."""
    pools: list[CiliumPodIPPool] = []
    for name, body in sorted(values.items()):
        if not isinstance(body, Mapping):
            raise AutoCreateError(f"autoCreateCiliumPodIPPools.{name} must be a map with ipv4 and/or ipv6.")
        unknown = sorted(set(body) - {"ipv4", "ipv6", "allowFirstIP", "allowLastIP"})
        if unknown:
            raise AutoCreateError(
                f"autoCreateCiliumPodIPPools.{name} has unknown key(s) {', '.join(unknown)}; "
                "use ipv4, ipv6, allowFirstIP, allowLastIP."
            )
        pool = CiliumPodIPPool(
            name=str(name),
            ipv4=_helm_family(str(name), 4, body.get("ipv4")),
            ipv6=_helm_family(str(name), 6, body.get("ipv6")),
            allow_first_ip=bool(body.get("allowFirstIP", False)),
            allow_last_ip=bool(body.get("allowLastIP", False)),
        )
        _check(pool, "autoCreateCiliumPodIPPools pool")
        pools.append(pool)
    return pools


def parse_flag_pools(value: str | Sequence[str] | Mapping[str, str]) -> list[CiliumPodIPPool]:
    """The flag form -> pools, sorted by name (validated)."""
    return [parse_pool_spec(name, spec) for name, spec in sorted(parse_flag_entries(value).items())]


def parse_auto_create(value: Any) -> list[CiliumPodIPPool]:
    """Either form: a map of maps is Helm form; strings, lists of strings or maps of strings are flag form."""
    if value is None or value == "" or value == {}:
        return []
    if isinstance(value, Mapping) and all(isinstance(v, Mapping) for v in value.values()):
        return parse_helm_pools(value)
    return parse_flag_pools(value)


def pools_to_create(
    wanted: Iterable[CiliumPodIPPool], existing_names: Iterable[str]
) -> list[CiliumPodIPPool]:
    """Pools not yet in the cluster; existing pools are never updated (Cilium skips them)."""
    existing = set(existing_names)
    return [p for p in wanted if p.name not in existing]


def _check(pool: CiliumPodIPPool, what: str) -> None:
    problems = pool_problems(pool)
    if problems:
        raise AutoCreateError(f"{what} {pool.name}: {join_sentences(problems)}")
