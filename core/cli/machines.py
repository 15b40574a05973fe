"""The CLI options about machines and money that run, sweep, analyze and devices share: --remote-python, --price."""
from __future__ import annotations

import argparse
import sys
from typing import Mapping, Sequence, TextIO

from ..analysis.costs import cost_analysis, dollars_per_million, parse_prices, price_for
from ..analysis.points import SweepPoint
from ..config import ConfigError
from ..engine.remote.channel import RemoteSettings
from ..engine.remote.wire import DEFAULT_PYTHON, SSH_COMMAND_ENV
from .printing import table
from ..results import RunResult
from ..words.numbers import fmt_dollars
from ..words.sweep import cost_lines
from .streams import STDOUT


def add_remote_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--remote-python", default=DEFAULT_PYTHON, metavar="PATH",
                   help="the Python that has Crossover on the machines of ssh:// lanes (default python3); "
                        f"${SSH_COMMAND_ENV} replaces the plain ssh command, e.g. 'ssh -F ~/lab/ssh_config'")


def add_price_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--price", metavar="LANE=$/h,…",
                   help="dollars per hour per lane, e.g. gpu0=2.50,cpu=0.40: adds dollars per million samples "
                        "and where the cheaper lane changes (recorded in the sidecar)")


def remote_settings(args: argparse.Namespace) -> RemoteSettings:
    return RemoteSettings(python=getattr(args, "remote_python", None) or DEFAULT_PYTHON)


def prices_from(args: argparse.Namespace, lanes: Sequence[str] = ()) -> dict[str, float]:
    """The --price option as lane → dollars per hour ({} without it); ConfigError on a bad one, or (given the
    command's `lanes`) on one that prices none of them."""
    text = getattr(args, "price", None)
    prices = parse_prices(text) if text else {}
    if lanes:
        for name in prices:
            if not any(price_for(lane, {name: 1.0}) is not None for lane in lanes):
                raise ConfigError(f"--price {name}=…: no lane of this command is {name} (its lanes: "
                                  f"{', '.join(lanes)})")
    return prices


def print_costs(groups: Mapping[str, list[SweepPoint]], prices: Mapping[str, float], out: TextIO = STDOUT) -> None:
    """Dollars per million samples per priced lane and width, then where the cheaper lane changes."""
    for label, points in groups.items():
        costs = cost_analysis(points, prices)
        per_lane = costs.dollars_per_million
        if not per_lane:
            continue
        widths = sorted({w for per in per_lane.values() for w in per})
        print(f"\n{'' if len(groups) == 1 else label + ': '}dollars per million samples, by width", file=out)
        print(table(["lane", "$/h", *map(str, widths)],
                    [[lane, fmt_dollars(costs.prices[lane]), *(fmt_dollars(per.get(w)) for w in widths)]
                     for lane, per in per_lane.items()]), file=out)
    for line in cost_lines(groups, prices):
        print(line + ".", file=out)


def print_run_costs(result: RunResult, prices: Mapping[str, float], out: TextIO = STDOUT) -> None:
    """What a million samples cost on each priced lane of one run (from its median step time)."""
    parts = []
    for name, lane in result.lanes.items():
        price = price_for(name, prices)
        if price is not None and lane.summary is not None:
            cost = dollars_per_million(lane.summary.median_ms, result.config.train.batch_size, price)
            parts.append(f"{name} {fmt_dollars(cost)} (at {fmt_dollars(price)}/h)")
    if parts:
        print("per million samples: " + ", ".join(parts), file=out)
