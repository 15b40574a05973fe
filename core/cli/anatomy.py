"""`main.py anatomy`: why a lane's step takes what it takes — the five rungs of core/analysis/anatomy.py and the parts
of a step, per lane and model, as a table or as JSON."""
from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Sequence, TextIO

from ..analysis.anatomy import TRAIN_LADDER
from ..study.anatomy import DEFAULT_SECONDS_PER_RUNG, AnatomyOutcome, anatomy_configs, measure_anatomies
from ..words.anatomy import (anatomy_json, anatomy_notes, clock_lines, clocks_of, fmt_part, fmt_rung, floor_sentence,
                             why_sentence)
from .common import (EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, add_config_args, add_stop_args, config_from_args,
                     lanes_can_run, report_safely, resolve_saved, say)
from .machines import add_remote_arg, remote_settings
from ..config import ConfigError, parse_lanes
from ..json_data import JsonValue
from ..json_data import json_clean
from ..files.atomic import ExportError, atomic_write_text
from ..files.live import check_output_path
from ..files.measured import check_keeps_measurements
from ..presets import PRESETS
from .printing import table
from ..engine.pool import LanePool
from .stopping import StopSignals
from ..study.sweep import parse_sweep_widths
from ..words.numbers import fmt_num


MAX_SECONDS_PER_RUNG = 600.0  # ten minutes a rung: more is a mistake, not a measurement


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("anatomy", help="time the parts of a training step (fit, its pipelined twin, a bare step "
                       "loop synced and pipelined, an on-device loop) or, with --task predict, of a served call "
                       "(predict_on_batch, the compiled forward from the host and on the device, pipelined, "
                       "an on-device loop)")
    p.add_argument("--preset", choices=sorted(PRESETS), help="a seed's model and settings (without --widths: "
                   "that model itself)")
    add_config_args(p, widths_help="widths to dissect, each a model of --layers hidden layers of that width, "
                    "e.g. 16,2048 (default: the preset's or the default model itself)")
    p.add_argument("--layers", type=int, help="hidden layers of each --widths model (default 2)")
    p.add_argument("--seconds-per-rung", type=float, default=DEFAULT_SECONDS_PER_RUNG,
                   help=f"timed steps per rung, in seconds, over two turns (default {DEFAULT_SECONDS_PER_RUNG:g})")
    p.add_argument("--check-loss", action="store_true", help="also train the same K steps by every rung from the "
                   "same weights and report the loss after each (they must agree: the same arithmetic)")
    p.add_argument("--json", action="store_true", help="print every figure as JSON instead of tables")
    p.add_argument("--json-file", metavar="PATH", help="also write the JSON here (the tables still print)")
    add_remote_arg(p)
    add_stop_args(p)
    p.set_defaults(func=cmd_anatomy)


def cmd_anatomy(args: argparse.Namespace) -> int:
    if args.csv:
        raise ConfigError("anatomy writes no CSV: --json prints every figure, --json-file writes them")
    if args.json_file:
        check_output_path(args.json_file, "--json-file")
        check_keeps_measurements(args.json_file, "--json-file")
    if args.serve:
        raise ConfigError("--serve: the anatomy of a call times both ways (predict_on_batch and the compiled "
                          "forward pass) as rungs of one ladder")
    if not (math.isfinite(args.seconds_per_rung) and 0 < args.seconds_per_rung <= MAX_SECONDS_PER_RUNG):
        raise ConfigError(f"--seconds-per-rung {args.seconds_per_rung}: choose more than 0 and at most "
                          f"{MAX_SECONDS_PER_RUNG:g}")
    lanes = parse_lanes(args.lanes)
    widths = parse_sweep_widths(args.widths) if args.widths is not None else None
    base = config_from_args(argparse.Namespace(**{**vars(args), "widths": None}))
    if base.model.factory is not None and args.layers is not None:
        raise ConfigError(f"--layers: {base.model.factory.function}(width) builds the whole model from its width")
    configs = anatomy_configs(base, widths, 1 if base.model.factory is not None and widths else args.layers)
    pool = LanePool(remote_settings(args), watchdog_s=args.watchdog_s)
    arrived: list[AnatomyOutcome] = []  # what is printed if the measuring ends in an error
    outcomes = arrived
    with StopSignals() as stop:
        try:
            if not lanes_can_run(lanes, pool):
                return EXIT_BAD_INPUT
            configs = [resolve_saved(config, pool, lanes) for config in configs]  # a user's model, as a lane found it
            say(f"anatomy: {len(configs)} model(s) × {len(lanes)} lane(s), about "
                f"{fmt_num(5 * args.seconds_per_rung)} s of timed steps each plus compiling")

            def on_outcome(outcome: AnatomyOutcome) -> None:
                arrived.append(outcome)
                took = f"{outcome.point.seconds:.1f} s" if outcome.point else outcome.error
                say(f"{outcome.lane:>10} {outcome.config.model.label()}: {took}")

            try:
                outcomes = stop.run(lambda cancel: measure_anatomies(
                    pool, lanes, configs, seconds_per_rung=args.seconds_per_rung, check_loss=args.check_loss,
                    cancel=cancel, on_outcome=on_outcome), on_hurry=lambda: pool.close(0.2))
            finally:
                pool.close(0.2 if stop.hurry.is_set() else 2.0)
        finally:
            pool.close()
    text = json.dumps(as_json(outcomes), indent=1, allow_nan=False)
    if args.json_file:
        try:
            atomic_write_text(args.json_file, text + "\n")
        except (ExportError, OSError) as exc:
            say(f"error: {exc}")
            return EXIT_FAILED
    if args.json:
        report_safely(lambda: print(text))
    else:
        report_safely(lambda: print_anatomy(outcomes))
    if stop.exit_code is not None:
        return stop.exit_code
    return EXIT_FAILED if any(o.point is None for o in outcomes) else EXIT_OK


def as_json(outcomes: Sequence[AnatomyOutcome]) -> dict[str, JsonValue]:
    """{"points": [one per lane and model], "failures": [lane, width, reason], "clocks": {name: meaning}}."""
    return json_clean(anatomy_json(
        [o.point for o in outcomes if o.point is not None],
        [{"lane": o.lane, "width": o.width, "widths": list(o.config.model.widths), "reason": o.error}
         for o in outcomes if o.point is None]))


def print_anatomy(outcomes: Sequence[AnatomyOutcome], out: TextIO | None = None) -> None:
    out = out or sys.stdout
    points = [o.point for o in outcomes if o.point is not None]
    model = (lambda p: "-".join(map(str, p.widths)) or "as saved")
    ladder = points[0].ladder if points else TRAIN_LADDER  # one command dissects one task
    unit = ladder.unit
    print(f"ms per {unit}, median (p10–p90):", file=out)
    print(table(["lane", "hidden", "batch", *ladder.rungs],
                [[p.lane, model(p), p.batch_size, *(fmt_rung(p, r) for r in ladder.rungs)] for p in points]), file=out)
    if ladder is TRAIN_LADDER:
        print("\nparts of a step, ms (≈0: within the rungs' spread); cost of timing = fit / fit_pipelined:", file=out)
        print(table(["lane", "hidden", *ladder.parts, "timing cost", "K"],
                    [[p.lane, model(p), *(fmt_part(part) for part in p.parts().values()),
                      f"{fmt_num(p.timing_cost)}x" if math.isfinite(p.timing_cost) else "–", p.window_steps]
                     for p in points]), file=out)
    else:
        print(f"\nparts of a {unit}, ms (≈0: within the rungs' spread):", file=out)
        print(table(["lane", "hidden", *ladder.parts, "K"],
                    [[p.lane, model(p), *(fmt_part(part) for part in p.parts().values()), p.window_steps]
                     for p in points]), file=out)
    for p in points:
        for rung, why in p.reasons.items():
            print(f"{p.lane} {model(p)}: {rung} is not measured: {why}", file=out)
    for o in outcomes:
        if o.point is None:
            print(f"{o.lane} {o.config.model.label()} failed: {o.error}", file=out)
    print("", file=out)
    for widths in dict.fromkeys(p.widths for p in points):
        same = [p for p in points if p.widths == widths]
        print(f"{'hidden ' + '-'.join(map(str, widths)) if widths else 'the saved model'}: "
              + " ".join(why_sentence(p) for p in same)
              + (" " + floor_sentence(same) if len(same) > 1 else ""), file=out)
        for p in same:
            if p.losses:
                print(f"  {p.lane}: loss after the same {p.window_steps} steps from the same weights: "
                      + ", ".join(f"{rung} {v:.6g}" for rung, v in p.losses.items()), file=out)
    for line in clock_lines(points):
        print(line + ".", file=out)
    notes = dict.fromkeys((p.lane, note) for p in points for note in anatomy_notes(p))
    for lane, note in notes:
        print(f"note ({lane}): {note}.", file=out)
    for name, meaning in clocks_of(points).items():
        print(f"{name}: {meaning}.", file=out)
