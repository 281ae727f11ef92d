"""Regenerate `reconciler/ec2/data/instance_types.json` from moto's copy of DescribeInstanceTypes.

moto ships the real DescribeInstanceTypes output (collected from AWS); we keep only the network
fields EC2-SIM-1 / ENI-CACHE-1 need, for the families the simulator and tests use. Run:

    python -m reconciler.ec2.gen_limits            # rewrite the bundled table
    python -m reconciler.ec2.gen_limits --check    # exit 1 if the bundled table is stale
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

FAMILIES: tuple[str, ...] = (
    "t2", "t3", "t3a", "t4g",
    "m4", "m5", "m5a", "m5n", "m6i", "m6g", "m7i",
    "c4", "c5", "c5n", "c6i", "c7i",
    "r5", "r6i",
)  # fmt: skip

OUTPUT = Path(__file__).parent / "data" / "instance_types.json"


def load_moto_instance_types() -> Mapping[str, Any]:
    """The full DescribeInstanceTypes records bundled with moto, keyed by type name."""
    raw = resources.files("moto.ec2").joinpath("resources/instance_types.json.gz").read_bytes()
    data: Mapping[str, Any] = json.loads(gzip.decompress(raw))
    return data


def network_limits(record: Mapping[str, Any]) -> dict[str, Any]:
    """The five fields we keep from one DescribeInstanceTypes record."""
    net = record["NetworkInfo"]
    return {
        "MaximumNetworkInterfaces": int(net["MaximumNetworkInterfaces"]),
        "Ipv4AddressesPerInterface": int(net["Ipv4AddressesPerInterface"]),
        "Ipv6AddressesPerInterface": int(net.get("Ipv6AddressesPerInterface", 0)),
        "Hypervisor": str(record.get("Hypervisor") or ""),
        "BareMetal": bool(record.get("BareMetal", False)),
    }


def build_table(records: Mapping[str, Any], families: Iterable[str] = FAMILIES) -> dict[str, Any]:
    wanted = set(families)
    types = {
        name: network_limits(rec) for name, rec in sorted(records.items()) if name.split(".", 1)[0] in wanted
    }
    return {
        "source": "moto/ec2/resources/instance_types.json.gz (AWS DescribeInstanceTypes)",
        "families": sorted(wanted),
        "instance_types": types,
    }


def render(table: Mapping[str, Any]) -> str:
    return json.dumps(table, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the bundled table is stale")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    text = render(build_table(load_moto_instance_types()))
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale; run `python -m reconciler.ec2.gen_limits`.", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text)
    print(f"wrote {len(json.loads(text)['instance_types'])} instance types to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
