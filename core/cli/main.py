"""The headless command line: devices, run, sweep, analyze, anatomy, rule, report, profile, predict, calibrate. Exit 0 done, 1 a run failed, 2 bad input, 130 stopped.

Each command lives in its own module of core/cli/ (analyze.py, report.py, rule.py, …) with an `add_parser`;
this one assembles them. What they print (tables, progress) is core/cli/printing.py.
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from . import analyze as cli_analyze, anatomy as cli_anatomy, report as cli_report, rule as cli_rule, run as cli_run
from . import calibrate as cli_calibrate, profile as cli_profile, sweep as cli_sweep
from .common import EXIT_BAD_INPUT, EXIT_OK
from .machines import add_remote_arg, remote_settings
from ..machine import HostInfo
from ..config import ConfigError, DeviceKind
from ..files.inputs import check_input_file
from ..engine.devices import LaneOption, discover, host_info
from ..paths import PROG
from ..engine.remote.devices import list_remote_lanes
from .printing import table
from ..engine.pool import LanePool

COMMANDS = (cli_run, cli_sweep, cli_analyze, cli_anatomy, cli_rule, cli_report, cli_profile, cli_calibrate)


def cmd_devices(args: argparse.Namespace) -> int:
    if args.host:
        remote = list_remote_lanes(args.host, remote_settings(args))
        machine = HostInfo.from_json(remote.machine)
        print(f"{remote.url}: {machine.machine or '?'}, Crossover {machine.app_version or '?'} for {remote.python}")
        print_machine(machine)
        print_lanes(list(remote.options), "there")
        return EXIT_OK
    print_machine(HostInfo.from_json(host_info()))
    pool = LanePool()
    try:
        options = discover(pool)
    finally:
        pool.close()
    print_lanes(options, "here")
    return EXIT_OK


def print_machine(host: HostInfo) -> None:
    print(f"CPU: {host.cpu} ({host.cpu_cores} cores usable)")
    for gpu in host.gpus:
        print(f"NVIDIA driver sees: {gpu.name} (driver {gpu.driver}, {gpu.memory})")
    if not host.gpus:
        print("NVIDIA driver: none found (no nvidia-smi)")


def print_lanes(options: list[LaneOption], where: str) -> None:
    print(table(["lane", "device", "available"],
                [[o.name, o.device, "yes" if o.available else f"no: {o.reason}"] for o in options]))
    if not any(o.available and o.spec.kind == DeviceKind.GPU for o in options):
        print(f"No GPU lane is available {where}: compare cpu with cpu1 (all cores against one thread).")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=(
        "Crossover: where the GPU starts to win. With no command, opens the window."), epilog=(
        f"The window: {PROG} [--screenshot PATH [--size WxH] [--run | --ramp WIDTHS] [--after SECONDS] "
        "[--tab compare|sweep|why]]. "
        "Each command has its own --help. Installed (crossover): --install-desktop adds the window to the "
        "desktop's launcher, --uninstall-desktop removes it."))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("devices", help="list the lanes this machine (or another, over SSH) offers")
    p.add_argument("--host", metavar="ssh://[USER@]HOST[:PORT]", help="list another machine's lanes, as "
                   "ssh://HOST/LANE names them in --lanes")
    add_remote_arg(p)
    p.set_defaults(func=cmd_devices)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


# What reading a damaged file raises where a value is of the wrong kind (a list for a number, 10^400, null).
DAMAGE = (KeyError, TypeError, ValueError, AttributeError, OverflowError, IndexError, RecursionError)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    files = getattr(args, "files", None) or []
    try:
        for path in files:  # analyze, report, rule: regular files only
            check_input_file(path)
        return args.func(args)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except DAMAGE as exc:
        if not files:
            raise
        # The commands that only read files (analyze, report, rule): a value of a wrong kind deep in a damaged
        # sidecar or row is a sentence and exit 2, never a traceback (the fuzz test, tests/core/files/).
        names = ", ".join(str(p) for p in files)
        print(f"error: {names}: a value in it is not what Crossover writes there, so it cannot be read "
              f"({type(exc).__name__}: {str(exc)[:200]}); it is damaged, or was not written by Crossover",
              file=sys.stderr)
        return EXIT_BAD_INPUT
