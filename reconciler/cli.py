"""`cilium-ipam` command line: one entry point, one sub-command per job."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cilium-ipam", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    simulate = sub.add_parser("simulate", help="run the reconciler on a simulated cluster and simulated EC2")
    from reconciler.sim.cli import add_simulate_arguments

    add_simulate_arguments(simulate)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "simulate":
        from reconciler.sim.cli import run_simulate

        return run_simulate(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
