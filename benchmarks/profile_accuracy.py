"""How far `predict` is from measurement: profile this machine's lanes, then measure models no line of the profile
was built from and compare each with its prediction; and the same on the stored H200 files, each seed left out of
the profile in turn.

    .venv/bin/python benchmarks/profile_accuracy.py --out docs/results/cpu-2026-12-06 [--lanes cpu,cpu1,jax:cpu,jax:cpu1]
    .venv/bin/python benchmarks/profile_accuracy.py --out DIR --analyze-only   # again, from the files DIR holds

Measuring: held-out sweeps (DIR/held-out/a/: depths, widths and batch sizes between those the profile measures, each
family, every point once, each as a user runs `sweep`, with the profile's steady steps and time per point), then
`profile` (core/study/profile.py's plan) into DIR/profile-here.json, then the held-out sweeps again in the reverse
order (DIR/held-out/b/): a point's measured time is the geometric mean of its two passes, so that a drift of the
machine over the half hour falls on it about as on the profile measured between them. Printed, and written to
DIR/profile-accuracy.txt and .json: how far the two passes agree with each other per lane (no prediction can be
checked more closely than the measurement repeats) and the most a perfect prediction could score were the lanes'
run-to-run noise (the profile's rechecks) the only error; per lane and family, the share of predictions within ±10%
and ±25% of the measured time, the median error, how many fell inside their 95% interval; extrapolations apart (never
counted as predictions); and per pair of lanes, the predicted crossing against the measured one (the one rule's
range, core/analysis/points.py Crossover). The machine's load is printed before and after each part: a busy machine
moves every figure. A folder of an older run, one pass in DIR/held-out/, is read as one pass.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT.parent))
PY = sys.executable
from crossover_lab.core.study.profile import POINT_SECONDS, STEADY_STEPS  # noqa: E402  # the profile's own

# Held-out sweeps: (file stem, family, widths, layers, batch sizes, extra options). Depth 3 lies between the
# profile's 2 and 4, batch sizes 64 and 256 between its 32, 128 and 512, widths between its widths.
HELD_OUT = (
    ("mlp-3", "mlp", (32, 96, 300, 1024, 2048), 3, (64, 256), ()),
    ("mlp-1", "mlp", (48, 700), 1, (128,), ()),
    ("cnn", "cnn", (12, 20, 40), 2, (64,), ()),
    ("lstm", "rnn", (24, 48, 96, 192), 1, (64,), ("--cell", "lstm")),
    ("transformer", "transformer", (48, 80, 160), 2, (64,), ("--heads", "4")),
)
H200 = ROOT / "docs" / "results" / "h200-2026-11-30"
SEEDS = ("qa", "qa-100", "blog-small", "blog-wide")


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"


def run(cmd: list[str], log: Path) -> int:
    print(f"$ {' '.join(cmd)}   ({load()})", flush=True)
    with log.open("w") as fh:
        return subprocess.call(cmd, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)


PASSES = ("a", "b")  # the held-out sweeps measured before the profile and again after it, in the reverse order


def measure_held_out(folder: Path, lanes: str, order: tuple) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for stem, family, widths, layers, batches, extra in order:
        started = time.monotonic()
        code = run([PY, "main.py", "sweep", "--family", family, "--widths", ",".join(map(str, widths)),
                    "--layers", str(layers), "--batch-sizes", ",".join(map(str, batches)), "--lanes", lanes,
                    "--steady-steps", str(STEADY_STEPS), "--seconds-per-point", f"{POINT_SECONDS:g}",
                    "--no-calibrate", "--no-recheck",
                    "--csv", str(folder / f"{stem}.csv"), *extra], folder / f"{stem}.log")
        print(f"held-out {folder.name}/{stem}: exit {code} after {time.monotonic() - started:.0f} s ({load()})",
              flush=True)


def measure(out: Path, lanes: str) -> None:
    """Held-out pass a, the profile, held-out pass b (its sweeps in the reverse order): a drift of the machine's
    speed over the half hour falls on the held-out points' mean about as it falls on the profile."""
    out.mkdir(parents=True, exist_ok=True)
    measure_held_out(out / "held-out" / PASSES[0], lanes, HELD_OUT)
    started = time.monotonic()
    code = run([PY, "main.py", "profile", "--lanes", lanes, "-o", str(out / "profile-here.json")],
               out / "profile-here.log")
    print(f"profile: exit {code} after {time.monotonic() - started:.0f} s ({load()})", flush=True)
    measure_held_out(out / "held-out" / PASSES[1], lanes, tuple(reversed(HELD_OUT)))


BOUNDS = (0.10, 0.25)  # "within ±10%" and "within ±25%": |figure / measured − 1| at most this, in every table here


def within(rel: list[float], bound: float) -> float | None:
    """The share of `rel` (each |figure / measured − 1|) at most `bound`; None for none."""
    return sum(r <= bound for r in rel) / len(rel) if rel else None


def summarise(errors: list[dict]) -> dict:
    inside = [e for e in errors if not e["outside"]]
    rel = [abs(e["error"]) for e in inside]
    return {"predictions": len(inside), "extrapolations": len(errors) - len(inside),
            "within_10": within(rel, BOUNDS[0]), "within_25": within(rel, BOUNDS[1]),
            "median_error": statistics.median(rel) if rel else None,
            "in_interval": sum(e["in_interval"] for e in inside) / len(inside) if inside else None,
            "extrapolation_median_error": statistics.median(abs(e["error"]) for e in errors if e["outside"])
            if len(errors) > len(inside) else None}


def share(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def analyze_here(out: Path) -> tuple[list[str], dict]:
    from crossover_lab.core.analysis.crossings import analyze_points
    from crossover_lab.core.families import kind_word
    from crossover_lab.core.analysis.prediction import crossing, predict
    from crossover_lab.core.files.profile import read_profile
    from crossover_lab.core.files.sweeps import read_sweep_rows
    from crossover_lab.core.words.profile import outside_words

    profile = read_profile(out / "profile-here.json")
    passes = [out / "held-out" / name for name in PASSES if (out / "held-out" / name).is_dir()] or [out / "held-out"]
    by_pass: list[dict[tuple, object]] = []
    for folder in passes:
        got = {}
        for stem, *_ in HELD_OUT:
            path = folder / f"{stem}.csv"
            if path.exists():
                for r in read_sweep_rows(str(path))[0]:
                    if r.status == "completed" and r.median_ms > 0:
                        got[(r.lane, r.family, r.layers, r.batch_size, r.width)] = r
        by_pass.append(got)
    # A point's measured time: the geometric mean of its passes' medians (a point one pass lacks: the other's).
    rows, repeat = [], []
    for key in sorted(set().union(*by_pass), key=str):
        measured = [p[key] for p in by_pass if key in p]
        ms = math.exp(statistics.fmean(math.log(r.median_ms) for r in measured))
        rows.append(dataclasses.replace(measured[0], median_ms=ms))
        if len(measured) == 2:
            repeat.append({"lane": key[0], "family": key[1],
                           "log_ratio": math.log(measured[1].median_ms / measured[0].median_ms)})
    errors, by_point = [], {}
    for r in rows:
        lane = profile.lane(r.lane)
        if lane is None:
            continue
        p = predict(lane.lines, r.family, r.task, r.batch_size, r.flops_per_batch / r.batch_size, r.layers)
        if p.refused:
            continue
        e = {"lane": r.lane, "family": r.family, "width": r.width, "layers": r.layers, "batch": r.batch_size,
             "measured_ms": r.median_ms, "predicted_ms": p.ms, "lo": p.lo if p.has_interval else None,
             "hi": p.hi if p.has_interval else None, "error": p.ms / r.median_ms - 1,
             "in_interval": p.contains(r.median_ms), "outside": "; ".join(outside_words(o) for o in p.outside)}
        errors.append(e)
        by_point[(r.lane, r.family, r.layers, r.batch_size, r.width)] = (r, p)
    lines = [f"# predictions on this machine's profile ({profile.name}, {profile.host.cpu}, "
             f"{profile.host.cpu_cores} cores, {profile.versions}) of {len(rows)} held-out points, "
             + (f"each measured in {len(passes)} passes (the measured time: their geometric mean)" if len(passes) > 1
                else "each measured once")]
    agreement, ceiling = {}, {}
    if repeat:
        lines.append("# how far the held-out passes agree with each other (pass b against pass a, per lane): no "
                     "prediction can be checked more closely than the measurement repeats")
        for lane in sorted({e["lane"] for e in repeat}):
            logs = [e["log_ratio"] for e in repeat if e["lane"] == lane]
            rel = [abs(math.exp(x) - 1) for x in logs]  # pass b against pass a, as a prediction against its measurement
            a = agreement[lane] = {"points": len(logs), "within_10": within(rel, BOUNDS[0]),
                                   "within_25": within(rel, BOUNDS[1]), "median_apart": statistics.median(rel),
                                   "b_against_a": math.exp(statistics.fmean(logs)) - 1}
            lines.append(f"{lane:>9} {a['points']} points: {share(a['within_10'])} of the passes within ±10% of each "
                         f"other, {share(a['within_25'])} within ±25%, median {share(a['median_apart'])} apart; pass b "
                         f"{100 * a['b_against_a']:+.0f}% on average")
    lines.append("# the most a perfect prediction could score here: the share of a mean of the passes' measurements "
                 "that falls within ±10% and ±25% of the truth, were the lane's run-to-run noise the profile's rechecks "
                 "measured (SD of logs) the only error")
    for lane in profile.lanes:
        sd = lane.noise_log_sd / math.sqrt(len(passes))
        if math.isfinite(sd) and sd > 0:
            noise = statistics.NormalDist(0.0, sd)  # the log of measured / truth
            # measured / truth − 1 within ±bound: the log between log(1 − bound) and log(1 + bound)
            c = ceiling[lane.lane] = {"noise_log_sd": lane.noise_log_sd, "repeats": lane.noise_repeats, **{
                f"within_{round(100 * b)}": noise.cdf(math.log1p(b)) - noise.cdf(math.log1p(-b)) for b in BOUNDS}}
            lines.append(f"{lane.lane:>9} noise ±{100 * lane.noise_log_sd:.0f}% over {lane.noise_repeats} repeats: "
                         f"{share(c['within_10'])} within ±10%, {share(c['within_25'])} within ±25%")
    table = {}
    for lane in sorted({e["lane"] for e in errors}):
        for family in sorted({e["family"] for e in errors}) + ["all"]:
            group = [e for e in errors if e["lane"] == lane and (family == "all" or e["family"] == family)]
            if not group:
                continue
            s = summarise(group)
            table[f"{lane}/{family}"] = s
            lines.append(f"{lane:>9} {family:<22} {s['predictions']:>3} predictions: {share(s['within_10']):>4} within "
                         f"±10%, {share(s['within_25']):>4} within ±25%, median error {share(s['median_error']):>4}, "
                         f"{share(s['in_interval']):>4} inside their 95% interval; {s['extrapolations']} "
                         f"extrapolations (median error {share(s['extrapolation_median_error'])})")
    lines.append("# each held-out point: lane, family, layers, batch, width: measured → predicted (error), interval")
    for e in errors:
        interval = f"95% {e['lo']:.3g}–{e['hi']:.3g}" if e["lo"] is not None else f"extrapolation: {e['outside']}"
        lines.append(f"{e['lane']:>9} {e['family']:<22} L{e['layers']} b{e['batch']:<4} w{e['width']:<5} "
                     f"{e['measured_ms']:8.3g} → {e['predicted_ms']:8.3g} ms ({100 * e['error']:+.0f}%), {interval}")
    crossings = []
    lanes = sorted({e["lane"] for e in errors})
    lines.append("# predicted crossing against the measured one (the one rule's range), per held-out sweep and pair")
    for stem, family, widths, layers, batches, extra in HELD_OUT:
        kind = kind_word(family, *(extra[1:] if family == "rnn" else ()),
                         **({"heads": int(extra[1])} if family == "transformer" else {}))
        for batch in batches:
            for i, a in enumerate(lanes):
                for b in lanes[i + 1:]:
                    got = [(by_point[(a, kind, layers, batch, w)], by_point[(b, kind, layers, batch, w)])
                           for w in widths if (a, kind, layers, batch, w) in by_point
                           and (b, kind, layers, batch, w) in by_point]
                    if len(got) < 2:
                        continue
                    ws = [x[0].width for x, _ in got]
                    predicted = crossing(ws, [x[1] for x, _ in got], [y[1] for _, y in got], a, b)
                    measured = [c for c in analyze_points([x[0].point() for x, _ in got] + [y[0].point() for _, y in got]).crossovers
                                if set(c.lanes) == {a, b}]
                    m = measured[0] if measured else None
                    # A predicted change is clear where the intervals lie apart on both sides of it; else the
                    # predictions cannot tell the lanes apart there, as the rule says "no change" of a tie.
                    clear = predicted is not None and predicted.clear_below and predicted.clear_above
                    if m is not None and predicted is not None:
                        verdict = "inside" if m.width_lo <= predicted.width <= m.width_hi else \
                            "overlaps" if predicted.tie_from <= m.width_hi and m.width_lo <= predicted.tie_to else "MISS"
                    else:
                        verdict = "agree: no clear change" if m is None and not clear else "MISS"
                    crossings.append({"sweep": stem, "batch": batch, "lanes": [a, b],
                                      "predicted": predicted.width if predicted else None, "clear": clear,
                                      "predicted_range": [predicted.tie_from, predicted.tie_to] if predicted else None,
                                      "measured": [m.width_lo, m.width_hi] if m else None, "verdict": verdict})
                    said = (f"{predicted.width:.3g} (cannot tell apart {predicted.tie_from:g}–{predicted.tie_to:g}"
                            f"{'' if clear else ', no clear change'})" if predicted else "no change")
                    lines.append(f"{stem} b{batch} {a} vs {b}: predicted {said}, measured "
                                 f"{f'{m.width_lo:.3g}–{m.width_hi:.3g}' if m else 'no change'}: {verdict}")
    verdicts = [c["verdict"] for c in crossings]
    lines.append(f"crossings: {verdicts.count('inside')} predicted inside the measured range, "
                 f"{verdicts.count('overlaps')} overlapping it, {verdicts.count('agree: no clear change')} agreeing "
                 f"that there is no clear change, {verdicts.count('MISS')} misses, of {len(verdicts)} pairs")
    return lines, {"profile": profile.name, "passes": len(passes), "passes_agree": agreement,
                   "perfect_prediction": ceiling, "summary": table, "points": errors, "crossings": crossings}


def analyze_h200() -> tuple[list[str], dict]:
    """Each H200 seed predicted from a profile of the sweeps and the other three seeds (stored files, no lanes)."""
    from crossover_lab.core.analysis.prediction import predict
    from crossover_lab.core.files.profile import profile_from_files
    from crossover_lab.core.presets import PRESETS

    lines = ["# the stored H200 files: each seed left out of a profile of the width sweeps and the other three seeds"]
    out = []
    sweeps = [str(H200 / "sweep-b32.csv"), str(H200 / "sweep-b128.csv")]
    for seed in SEEDS:
        others = [str(H200 / f"seed-{s}.csv") for s in SEEDS if s != seed]
        profile, _ = profile_from_files(sweeps + others, f"h200 without {seed}", "", "")
        config = PRESETS[seed].config
        with (H200 / f"seed-{seed}.csv").open() as fh:
            rows = list(csv.DictReader(fh))
        for lane in ("jax:cpu", "jax:gpu0"):
            measured = statistics.median(float(r["ms"]) for r in rows if r["lane"] == lane and r["warmup"] == "0")
            p = predict(profile.lane(lane).lines, config.model.kind, "train", config.train.batch_size,
                        config.model.flops_per_batch(1), len(config.model.widths))
            error = p.ms / measured - 1
            out.append({"seed": seed, "lane": lane, "measured_ms": measured, "predicted_ms": p.ms,
                        "error": error, "interval": [p.lo, p.hi] if p.has_interval else None,
                        "extrapolation": bool(p.outside)})
            interval = f"95% {p.lo:.3g}–{p.hi:.3g}" if p.has_interval else "an extrapolation, no interval"
            lines.append(f"{seed:>10} {lane:>8}: measured {measured:.3g} ms, predicted {p.ms:.3g} ms "
                         f"({100 * error:+.0f}%), {interval}")
    within = sum(abs(e["error"]) <= 0.25 for e in out)
    lines.append(f"{within} of {len(out)} within ±25%")
    return lines, {"h200_seeds": out}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--lanes", default="cpu,cpu1,jax:cpu,jax:cpu1")
    parser.add_argument("--analyze-only", action="store_true")
    args = parser.parse_args()
    from crossover_lab.core.json_data import json_clean
    begun = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, {load()}"
    if not args.analyze_only:
        measure(args.out, args.lanes)
    here, here_json = analyze_here(args.out)
    h200, h200_json = analyze_h200()
    text = "\n".join([f"# benchmarks/profile_accuracy.py --out {args.out} --lanes {args.lanes}; begun {begun}, "
                      f"analysed {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, {load()}"]
                     + here + [""] + h200) + "\n"
    print(text)
    (args.out / "profile-accuracy.txt").write_text(text)
    (args.out / "profile-accuracy.json").write_text(json.dumps(json_clean({**here_json, **h200_json}), indent=1)
                                                    + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
