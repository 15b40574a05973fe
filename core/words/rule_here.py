"""What `calibrate` says: each twin sweep's outcome, and this machine's false-lead rate with its interval and design."""
from __future__ import annotations

from ..files.rule_here import HereCalibration, TwinDesign, TwinSweep
from ..analysis.verdict import State
from ..plurals import plural
from ..records import BUSY_SHARE
from .numbers import fmt_count, fmt_num, fmt_range


def _gap(sweep: TwinSweep) -> str:
    gap = f"; the widest gap between them {fmt_num(100 * (sweep.max_gap - 1), 2)}%" if sweep.max_gap >= 1 else ""
    if sweep.others_cpu >= BUSY_SHARE:  # NaN (not known) is never busy
        gap += f"; other work used up to {fmt_num(100 * sweep.others_cpu, 2)}% of their cores"
    return gap


def twin_sweep_line(number: int, asked: int, sweep: TwinSweep, design: TwinDesign) -> str:
    """One twin sweep's outcome as `analyze` of its file found it: "twin sweep 2 of 6: no lead between cpu1 and
    cpu1#2 (too close to call; the widest gap between them 4%)."."""
    head = f"twin sweep {number} of {asked}"
    pair = f"{design.lane} and {design.twin}"
    if not sweep.judged:
        return f"{head}: no width was measured on both {pair}, so it is not counted."
    if State.CROSSES.value in sweep.states:
        return f"{head}: a false lead: the lead changes hands between {pair}, two equal lanes{_gap(sweep)}."
    if sweep.false_lead:
        named = " and ".join(sweep.leaders) or design.twin
        return f"{head}: a false lead: {named} named faster, of two equal lanes{_gap(sweep)}."
    return f"{head}: no lead between {pair} (too close to call{_gap(sweep)})."


def rate_words(calibration: HereCalibration) -> str:
    """"0 false leads in 6 twin sweeps of cpu1 (95%: 0–46%)"."""
    rate = calibration.rate
    return (f"{rate.count} false {plural(rate.count, 'lead')} in {fmt_count(rate.trials, 'twin sweep')} of "
            f"{calibration.design.lane} ({fmt_num(100 * rate.level, 2)}%: "
            f"{fmt_range(100 * rate.low, 100 * rate.high)}%)")


def design_words(design: TwinDesign) -> str:
    """The design the rate holds for: "widths 16, 48, 152, 464, 1448, 4096, 2 layers, batch 128, 2 points measured
    twice"."""
    batches = ", ".join(map(str, design.batch_sizes))
    twice = fmt_count(design.rechecks, "point") + " measured twice" if design.rechecks else "no point measured twice"
    passes = f", every point in {design.passes} passes" if design.passes > 1 else ""
    return (f"{design.task}, {design.family}, widths {', '.join(map(str, design.widths))}, "
            f"{fmt_count(design.layers, 'layer')}, {plural(len(design.batch_sizes), 'batch', 'batches')} {batches}"
            f"{passes}, {twice}, up to {design.steady_steps} steady batches or {fmt_num(design.seconds_per_point)} s "
            "a point")


def calibration_lines(calibration: HereCalibration, path: str) -> list[str]:
    """The total, what it holds for, and where it and the sweeps are kept."""
    lines = [f"{rate_words(calibration)}: this machine's rate of a lead named between two equal lanes."]
    if calibration.rate.trials < calibration.asked:
        lines.append(f"{calibration.rate.trials} of the {calibration.asked} sweeps asked for "
                     f"{'was' if calibration.rate.trials == 1 else 'were'} judged: the rate is of "
                     f"{'that one' if calibration.rate.trials == 1 else 'those'}.")
    busy = [s.others_cpu for s in calibration.sweeps if s.others_cpu >= BUSY_SHARE]
    if busy:
        lines.append(f"{len(busy)} of the {calibration.rate.trials} sweeps ran beside other work (up to "
                     f"{fmt_num(100 * max(busy), 2)}% of the lanes' cores): the rate is of this machine as it was "
                     "then, load and all.")
    lines.append(f"It holds for sweeps of this design: {design_words(calibration.design)}.")
    lines.append(f"Written to {path}; every sweep's files are in {calibration.folder}.")
    return lines
