"""`main.py sweep --task predict --arrival-rates 50,100,200`: serving at each of several arrival rates.

Each rate is one run of every lane, one lane after another (a lane's requests would queue while another had
its turn), under the same schedule of requests (core/lane/arrivals.py). The file is the per-call CSV and its
sidecar that `run --csv` writes, one run per rate, growing as calls arrive: `analyze` reads it back into the
same RatePoints (core/analysis/serving_rates.py) and says the same words (core/words/rates.py).
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import threading

from ..analysis.serving_rates import RatePoint, run_points
from ..config import MAX_RATE, MIN_HOLD_S, ConfigError, RunConfig, Schedule, parse_lanes
from ..engine.devices import host_info
from ..engine.pool import LanePool, run_comparison
from ..engine.tracking import RunTracker
from ..files import autosave
from ..records import LaneEvent, Status, now_iso
from ..results import RunResult, new_run_id
from ..words.rates import sweep_lines
from ..words.numbers import fmt_count, fmt_duration, fmt_rate, fmt_rates
from .common import (EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, check_memory, check_schedule, config_from_args, lanes_can_run,
                     open_run_files, report_safely, say, write_or_rescue)
from .machines import prices_from, remote_settings
from .printing import Progress, print_rates
from .stopping import StopSignals

MAX_RATES = 32


def parse_rates(text: str) -> tuple[float, ...]:
    """"50,100,200" → (50.0, 100.0, 200.0), ascending and distinct; ConfigError with the reason otherwise, naming
    the entry that is wrong (an empty one too: "50,,100" is a typing slip, not two rates)."""
    shown = shown_arg(text)
    entries = [t.strip() for t in text.split(",")]
    if len(entries) > MAX_RATES:
        raise ConfigError(f"--arrival-rates {shown}: give 1 to {MAX_RATES} rates, not {len(entries):,}")
    rates = []
    for n, entry in enumerate(entries, 1):
        if not entry:
            raise ConfigError(f"--arrival-rates {shown}: entry {n} is empty; give requests per second separated by "
                              "commas, e.g. 50,100,200")
        try:
            rates.append(float(entry))
        except ValueError:
            raise ConfigError(f"--arrival-rates {shown}: {shown_arg(entry, 24)} is not a number; give requests per "
                              "second, e.g. 50,100,200") from None
    bad = [r for r in rates if not (0 < r <= MAX_RATE) or not math.isfinite(r)]
    if bad:
        raise ConfigError(f"--arrival-rates: {bad[0]:g} is not a rate; choose above 0, at most {MAX_RATE:,.0f} "
                          "requests per second")
    return tuple(sorted(set(rates)))


def shown_arg(text: str, limit: int = 60) -> str:
    """An argument as an error quotes it: whole where short, else its start and its length (a 24 KB list of rates
    is not echoed back)."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}… ({len(text):,} characters)"


def check_bound(p99_ms: float | None) -> float | None:
    if p99_ms is not None and not (0 < p99_ms < 3.6e6 and math.isfinite(p99_ms)):
        raise ConfigError(f"--p99-ms {p99_ms}: choose a bound above 0 ms, below an hour")
    return p99_ms


def rate_configs(base: RunConfig, rates: tuple[float, ...]) -> list[RunConfig]:
    return [dataclasses.replace(base, train=dataclasses.replace(base.train, arrival_rate=r)) for r in rates]


def cmd_rate_sweep(args: argparse.Namespace) -> int:
    rates = parse_rates(args.arrival_rates)
    if getattr(args, "arrival_rate", None) is not None:
        raise ConfigError("--arrival-rate and --arrival-rates: a sweep takes the rates (--arrival-rates)")
    args.arrival_rate = rates[0]  # so the config is checked as a rate's (and takes a rate's defaults)
    base = config_from_args(args)
    bound = check_bound(args.p99_ms)
    if base.model.saved is not None or base.model.factory is not None:
        raise ConfigError("--arrival-rates with --model: not built yet; time your model at one rate with "
                          "`run --task predict --arrival-rate R --model FILE`")
    lanes = list(parse_lanes(args.lanes))
    configs = rate_configs(base, rates)
    for config in configs:
        check_schedule(config, "--arrival-rates")
    check_memory(configs[:1], lanes)
    prices = prices_from(args, [lane.name for lane in lanes])
    host = host_info()
    files = open_run_files(args.csv, host, {"prices": prices} if prices else None)
    pool = LanePool(remote_settings(args), watchdog_s=args.watchdog_s)
    results: list[RunResult] = []
    points: list[RatePoint] = []
    code, written = EXIT_OK, ""
    progress = Progress()
    with StopSignals(measured=lambda: bool(results)) as stop:  # a rate's run is written from its first moment
        try:
            if not lanes_can_run(lanes, pool):
                return EXIT_BAD_INPUT
            say(f"rate sweep: model {base.model.label()}, requests of {fmt_count(base.train.batch_size, 'sample')}, "
                f"{_requests_words(configs)} per lane and rate, {base.train.arrivals} arrivals at "
                f"{fmt_rates(rates)}; lanes {', '.join(l.name for l in lanes)}, "
                "one after another")
            for line in schedule_lines(configs, len(lanes)):
                say(line)

            def work(cancel: threading.Event) -> None:
                pool.ready(lanes, cancel, data_of=base)
                for config in configs:
                    if cancel.is_set():
                        return
                    tracker = RunTracker(new_run_id(), config, lanes, Schedule.SEQUENTIAL, now_iso())
                    results.append(tracker.result)
                    if files is not None:
                        files.begin(list(results))

                    def on_event(event: LaneEvent) -> None:
                        progress(event)
                        if files is not None:
                            files.take([event], list(results))

                    done = run_comparison(pool, lanes, config, schedule=Schedule.SEQUENTIAL, tracker=tracker,
                                          on_event=on_event, cancel=cancel)
                    results[-1] = done
                    at = run_points([done])
                    points.extend(at)
                    report_safely(lambda: print_rates(at))

            stop.run(work, on_hurry=lambda: pool.close(0.2))
        finally:
            report_safely(progress.done)
            pool.close(0.2 if stop.hurry.is_set() else 2.0)
            if files is not None:
                if results:
                    code, written = write_or_rescue(lambda: list(files.finish(results)),
                                                    lambda: [autosave.save_run(r, host) for r in results],
                                                    "the rate sweep's records")
                files.close()
            pool.close()
    if stop.received is not None and not results:
        say("stopped before any rate was measured: nothing was written" + (f" to {args.csv}" if args.csv else ""))
    report_safely(lambda: _report(points, bound, prices))
    if written:
        report_safely(lambda: print(written, file=sys.stderr if code else sys.stdout))
    if stop.exit_code is not None:
        return stop.exit_code
    if code != EXIT_OK or any(lane.status == Status.FAILED for r in results for lane in r.lanes.values()):
        return EXIT_FAILED
    return EXIT_OK


LONG_RATE_S = 180.0  # a rate whose schedule runs longer than this is said, with how to shorten it


def _requests_words(configs: list[RunConfig]) -> str:
    """How many requests each rate's schedule holds: "1,000", or "1,000 to 10,000" where the rates differ."""
    counts = sorted({c.train.rate_requests for c in configs})
    return f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,} to {counts[-1]:,}"


def schedule_lines(configs: list[RunConfig], lanes: int) -> list[str]:
    """The sweep's expected length before its first request (the arrivals' schedules, lane after lane, rate after
    rate; each lane's start and a queue left to drain come on top), and each rate whose schedule alone runs longer
    than LONG_RATE_S, with how to shorten it."""
    per_rate = [(c.train.arrival_rate or 1.0, c.train.rate_requests) for c in configs]
    total = lanes * sum(n / rate for rate, n in per_rate)
    lines = [f"expected length: about {fmt_duration(total)} of arrivals ({fmt_count(lanes, 'lane')} × "
             f"{fmt_count(len(per_rate), 'rate')}), plus each lane's start"]
    for rate, n in per_rate:
        if n / rate > LONG_RATE_S:
            lines.append(f"at {fmt_rate(rate)} its {n:,} requests take {fmt_duration(n / rate)} a lane: to shorten "
                         f"it, give fewer with --requests (a p99 needs 662; a rate is judged held from "
                         f"{MIN_HOLD_S:g} s of arrivals)")
    return lines


def _report(points: list[RatePoint], bound: float | None, prices: dict[str, float]) -> None:
    if not points:
        return
    print()
    for line in sweep_lines(points, bound, prices):
        print(line + ".")
    sys.stdout.flush()

