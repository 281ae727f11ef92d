"""`cilium-ipam` command line: one entry point, one sub-command per job."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn


class OneLineErrorParser(argparse.ArgumentParser):
    """Usage mistakes are one sentence on stderr and exit 2 -- no usage dump, no traceback."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: {message}; see `{self.prog} --help`\n")
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(prog="cilium-ipam", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineErrorParser)
    operator = sub.add_parser(
        "operator",
        help="run the IPAM operator against a Kubernetes API (leader-elected; ENI or multi-pool)",
        description="Flags may also come from --config-file and CILIUM_IPAM_<FLAG> environment variables.",
    )
    from reconciler.controller.config import add_flags

    add_flags(operator)
    pools = sub.add_parser("pools", help="CiliumPodIPPool procedures (multi-pool mode)")
    pools_sub = pools.add_subparsers(dest="pools_command", required=True, parser_class=OneLineErrorParser)
    migrate = pools_sub.add_parser(
        "migrate", help="plan (and optionally start) the MP-MIG-1 procedure for changing a pool's CIDRs"
    )
    from reconciler.controller.migrate_cli import add_arguments

    add_arguments(migrate)
    simulate = sub.add_parser("simulate", help="run the reconciler on a simulated cluster and simulated EC2")
    from reconciler.sim.cli import add_simulate_arguments

    add_simulate_arguments(simulate)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "operator":
        return run_operator_command(args)
    if args.command == "pools":
        from reconciler.controller.migrate_cli import run_migrate

        return run_migrate(args)
    if args.command == "simulate":
        from reconciler.sim.cli import run_simulate

        return run_simulate(args)
    return 2


def run_operator_command(args: argparse.Namespace) -> int:
    import os

    from reconciler.controller.config import ConfigError, build_config, merge_sources

    try:
        config = build_config(merge_sources(args, os.environ))
    except ConfigError as exc:
        sys.stderr.write(f"cilium-ipam operator: {exc}\n")
        return 2
    from reconciler.controller.runtime import run_operator

    return run_operator(config)


if __name__ == "__main__":
    sys.exit(main())
