"""How far `predict` is from measurement: profile this machine's lanes, then measure models no line of the profile
was built from and compare each with its prediction; and the same on the stored H200 files, each seed left out of
the profile in turn.

    .venv/bin/python benchmarks/profile_accuracy.py --out docs/results/cpu-2026-12-06 [--lanes cpu,cpu1,jax:cpu,jax:cpu1]
    .venv/bin/python benchmarks/profile_accuracy.py --out DIR --analyze-only   # again, from the files DIR holds
    .venv/bin/python benchmarks/profile_accuracy.py --rescore DIR   # the predictor before and after, measuring nothing

Measuring, family by family, interleaved: the family's held-out sweeps (DIR/held-out/a/: depths, widths and batch
sizes between those the profile measures, every point once, each as a user runs `sweep`, with the profile's steady
steps and time per point), then the profile's sweeps of that family (core/study/profile.py's plan, each as `profile`
runs it, into DIR/profile-here-sweeps/), then the family's held-out sweeps again in the reverse order
(DIR/held-out/b/); at the end `profile --from` those sweeps makes DIR/profile-here.json. A point's measured time is
the geometric mean of its two passes, so that a drift of the machine falls on it about as on the profile's points of
its family, measured between them minutes apart. Printed, and written to
DIR/profile-accuracy.txt and .json: how far the two passes agree with each other per lane (no prediction can be
checked more closely than the measurement repeats) and the most a perfect prediction could score were the lanes'
run-to-run noise (the profile's rechecks) the only error; per lane and family, the share of predictions within ±10%
and ±25% of the measured time, the median error, how many fell inside their 95% interval; extrapolations apart (never
counted as predictions); and per pair of lanes, the predicted crossing against the measured one (the one rule's
range, core/analysis/points.py Crossover). The machine's load is printed before and after each part: a busy machine
moves every figure. A folder of an older run, one pass in DIR/held-out/, is read as one pass.

Rescoring (--rescore DIR) measures nothing: it builds the profile again from the sweeps stored in
DIR/profile-here-sweeps/ and scores two predictors on the stored held-out points, the cost line alone (every line
`fit_line(..., models=(LINE,))`, as `predict` was before the families' terms) and the model each line chooses
(core/analysis/prediction.py), per lane and family: the share within ±10% and ±25%, the median and mean error, how
many fell inside their 95% interval; each line's chosen terms with what they cost; and each point before and after.
It checks first that the cost line alone gives the predictions DIR/profile-accuracy.json stored, and writes
DIR/rescore.txt.
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
    """Interleaved, family by family: the family's held-out sweeps (pass a), the profile's sweeps of that family
    (core/study/profile.py's plan, each exactly as `profile` runs it, with its rechecks), the family's held-out sweeps
    again in the reverse order (pass b); then the profile made from the sweeps (`profile --from`). A drift of the
    machine's speed falls on a family's held-out points within the few minutes its profile sweeps took, not over the
    whole half hour (the last run measured the held-out points all before and all after the profile, and the machine
    moved between them)."""
    from crossover_lab.core.study.profile import PLAN

    out.mkdir(parents=True, exist_ok=True)
    sweeps = out / "profile-here-sweeps"
    sweeps.mkdir(parents=True, exist_ok=True)
    families = list(dict.fromkeys(s.family for s in PLAN))
    for family in families:
        held = tuple(h for h in HELD_OUT if h[1] == family)
        measure_held_out(out / "held-out" / PASSES[0], lanes, held)
        for part in (s for s in PLAN if s.family == family):
            started = time.monotonic()
            code = run([PY, "main.py", *part.argv(lanes, str(sweeps / f"{part.name}.csv"))],
                       sweeps / f"{part.name}.log")
            print(f"profile {part.name}: exit {code} after {time.monotonic() - started:.0f} s ({load()})",
                  flush=True)
        measure_held_out(out / "held-out" / PASSES[1], lanes, tuple(reversed(held)))
    sources = [str(sweeps / f"{s.name}.csv") for s in PLAN if (sweeps / f"{s.name}.csv").is_file()]
    code = run([PY, "main.py", "profile", "--from", *sources, "-o", str(out / "profile-here.json"),
                "--name", "profile-here"], out / "profile-here.log")
    print(f"profile --from: exit {code} ({load()})", flush=True)


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
            "mean_error": statistics.fmean(rel) if rel else None,
            "in_interval": sum(e["in_interval"] for e in inside) / len(inside) if inside else None,
            "extrapolation_median_error": statistics.median(abs(e["error"]) for e in errors if e["outside"])
            if len(errors) > len(inside) else None}


def share(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def read_held_out(out: Path) -> tuple[list[Path], list, list[dict]]:
    """The held-out folders of `out` (its passes), each held-out point once with its measured time (the geometric
    mean of its passes' medians; a point one pass lacks: the other's), and per point measured twice the log ratio
    of pass b to pass a."""
    from crossover_lab.core.files.sweeps.files import read_sweep_rows

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
    rows, repeat = [], []
    for key in sorted(set().union(*by_pass), key=str):
        measured = [p[key] for p in by_pass if key in p]
        ms = math.exp(statistics.fmean(math.log(r.median_ms) for r in measured))
        rows.append(dataclasses.replace(measured[0], median_ms=ms))
        if len(measured) == 2:
            repeat.append({"lane": key[0], "family": key[1],
                           "log_ratio": math.log(measured[1].median_ms / measured[0].median_ms)})
    return passes, rows, repeat


def analyze_here(out: Path) -> tuple[list[str], dict]:
    from crossover_lab.core.analysis.crossings import analyze_points
    from crossover_lab.core.families import kind_word
    from crossover_lab.core.analysis.predicted_crossing import crossing
    from crossover_lab.core.analysis.prediction import predict
    from crossover_lab.core.files.device_profile import read_profile
    from crossover_lab.core.words.profile import outside_words

    profile = read_profile(out / "profile-here.json")
    passes, rows, repeat = read_held_out(out)
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
    from crossover_lab.core.files.device_profile import profile_from_files
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


def stored_profile(out: Path) -> tuple[object, str]:
    """The profile made again from the sweeps stored beside it (`out`/profile-here-sweeps/, in the order the stored
    profile names them), or the stored profile where they are not all there; and which of the two it is."""
    from crossover_lab.core.files.device_profile import profile_from_files, read_profile

    stored = read_profile(out / "profile-here.json")
    sweeps = out / "profile-here-sweeps"
    paths = [str(sweeps / name) for name in stored.sources if (sweeps / name).is_file()]
    if not paths or len(paths) < len(stored.sources):
        return stored, "profile-here.json (its sweeps are not all stored)"
    made, _ = profile_from_files(paths, stored.name, stored.command, stored.made_at)
    return made, f"its {len(paths)} sweeps in profile-here-sweeps/ ({', '.join(stored.sources)})"


def cost_line_alone(lane) -> list:
    """The lane's lines with the cost line alone (fixed + per layer + FLOPs), as `predict` was before the families'
    terms: the 'before' of a rescoring."""
    from crossover_lab.core.analysis.prediction import LINE, fit_line

    refit = (fit_line(x.kind, x.task, x.batch_size, x.points, x.noise_log_sd, models=(LINE,)) for x in lane.lines)
    return [x for x in refit if x is not None]


def chosen_models(lane) -> list:
    """The lane's lines as a profile reads them: each with the model its points support."""
    return list(lane.lines)


def score(profile, rows: list, lines_of, between: str = "straight") -> list[dict]:
    """Each held-out row that its lane's lines (`lines_of(lane)`) give a figure for: measured, predicted, the
    relative error, the interval and whether the measurement fell inside it, whether it is an extrapolation; a batch
    size between two lines as `between` says (core/analysis/prediction.py predict)."""
    from crossover_lab.core.analysis.prediction import predict

    out = []
    for r in rows:
        lane = profile.lane(r.lane)
        if lane is None:
            continue
        p = predict(lines_of(lane), r.family, r.task, r.batch_size, r.flops_per_batch / r.batch_size, r.layers,
                    between=between)
        if p.refused:
            continue
        out.append({"lane": r.lane, "between_lines": len(p.lines) == 2, "family": r.family, "width": r.width, "layers": r.layers, "batch": r.batch_size,
                    "measured_ms": r.median_ms, "predicted_ms": p.ms, "lo": p.lo if p.has_interval else None,
                    "hi": p.hi if p.has_interval else None, "error": p.ms / r.median_ms - 1,
                    "in_interval": p.contains(r.median_ms), "outside": "; ".join(o.what for o in p.outside),
                    "model": " and ".join("+".join(map(str, x.terms)) for x in p.lines)})
    return out


def neighbours(lane, kind: str, task: str, batch: int, layers: int, width: int) -> tuple[float, float] | None:
    """The medians the profile measured at the nearest width below and above `width` (same kind, task, batch size
    and depth): a model whose time grows with size and passes near its own points predicts between them."""
    line = next((x for x in lane.lines if x.kind == kind and x.task == task and x.batch_size == batch), None)
    if line is None:
        return None
    same = [p for p in line.points if p.layers == layers]
    below = [p for p in same if p.width < width]
    above = [p for p in same if p.width > width]
    if not below or not above:
        return None
    return max(below, key=lambda p: p.width).ms, min(above, key=lambda p: p.width).ms


def _term_words(line) -> str:
    """What a line's chosen terms cost over all its points, each ± its jackknife standard error."""
    units = {"fixed": (1.0, "ms"), "layer": (1.0, "ms per layer"), "flops": (1e9, "ms per GFLOP"),
             "bytes": (1e6, "ms per MB")}
    parts = []
    for t in line.term_fits():
        factor, unit = units[t.term.value]
        se = f" ± {t.se * factor:.2g}" if math.isfinite(t.se) else ""
        parts.append(f"{t.term.value} {t.ms_per_unit * factor:.3g}{se} {unit}")
    return "; ".join(parts)


def rescore(out: Path) -> tuple[list[str], dict]:
    """The cost line alone and the chosen models, scored on the held-out points stored in `out`, measuring nothing
    (see the module's docstring); the text's lines and the figures."""
    profile, made_from = stored_profile(out)
    passes, rows, _ = read_held_out(out)
    # Both with a batch size between two lines a power law, as every stored run was predicted: `before` gives back its
    # predictions, and the two differ in the lines' model alone. The straight line in batch size is scored apart.
    before = score(profile, rows, cost_line_alone, between="power")
    after = score(profile, rows, chosen_models, between="power")
    key = ("lane", "family", "layers", "batch", "width")
    lines = [f"# offline: stored measurements re-scored, nothing measured. The profile made again from {made_from}; "
             f"{len(rows)} held-out points, each the geometric mean of its {len(passes)} stored passes",
             "# before: every line the cost line alone (fixed + per layer + FLOPs); after: each line the simplest "
             "model its points support, by leave-one-out on its own points (core/analysis/prediction.py)"]
    reproduced = {}
    stored_path = out / "profile-accuracy.json"
    stored = json.loads(stored_path.read_text()) if stored_path.is_file() else {}
    then = {tuple(e[k] for k in key): e for e in stored.get("points", [])}
    apart = [abs(e["predicted_ms"] / then[tuple(e[k] for k in key)]["predicted_ms"] - 1)
             for e in before if tuple(e[k] for k in key) in then]
    if apart:  # a folder whose run stored its predictions: the 'before' must give them back
        table_then = stored.get("summary", {})
        differ = []
        for group, figures in summarise_groups(before).items():
            old = table_then.get(group)
            for name in ("within_10", "within_25", "median_error", "in_interval"):
                if old is None or old.get(name) is None or figures[name] is None \
                        or round(100 * old[name]) != round(100 * figures[name]):
                    differ.append(f"{group} {name}")
        reproduced = {"points": len(apart), "of": len(then), "largest_difference": max(apart) if apart else None,
                      "table_differences": differ}
        lines.append(f"# before reproduces the stored run's predictions (profile-accuracy.json): {len(apart)} of "
                     f"{len(then)} points, the largest difference {100 * max(apart):.2g}%; its table "
                     + ("equal to the percent in every figure" if not differ else f"differs in {', '.join(differ)}"))
    table_before, table_after = summarise_groups(before), summarise_groups(after)
    lines.append("# per lane and family, before → after: the share within ±10% and ±25% of the measured time, the "
                 "median and mean error, the share inside their 95% interval; the model each line chose, with its "
                 "leave-one-out error on the profile's points (the cost line's → the chosen model's)")
    header = (f"{'lane':>9} {'family':<20} {'n':>3}  {'±10%':>11}  {'±25%':>11}  {'median':>11}  {'mean':>11}  "
              f"{'in 95%':>11}  model")
    lines.append(header)
    rows_of_table = []
    for group, b in table_before.items():
        a = table_after[group]
        lane_name, family = group.split("/", 1)
        models = ""
        lane = profile.lane(lane_name)
        if family != "all" and lane is not None:
            chosen = [x for x in lane.lines if x.kind == family]
            models = ", ".join(f"b{x.batch_size} {'+'.join(map(str, x.terms))} ({share(x.line_loo_log_sd)} → "
                               f"{share(x.loo_log_sd)})" for x in chosen)
        cells = [f"{share(b[k]):>4} → {share(a[k]):>4}" for k in ("within_10", "within_25", "median_error",
                                                                   "mean_error", "in_interval")]
        rows_of_table.append(f"{lane_name:>9} {family:<20} {b['predictions']:>3}  " + "  ".join(cells)
                             + f"  {models}".rstrip())
    b, a = summarise(before), summarise(after)
    cells = [f"{share(b[k]):>4} → {share(a[k]):>4}" for k in ("within_10", "within_25", "median_error", "mean_error",
                                                               "in_interval")]
    rows_of_table.append(f"{'all lanes':>9} {'all':<20} {b['predictions']:>3}  " + "  ".join(cells))
    lines += rows_of_table
    lines.append("# what each line's chosen terms cost, fitted to all its points alike (± jackknife standard error)")
    for lane in profile.lanes:
        for x in lane.lines:
            lines.append(f"{lane.lane:>9} {x.kind:<20} b{x.batch_size:<4} {'+'.join(map(str, x.terms)):<24} "
                         f"{_term_words(x)}")
    lines.append("# each held-out point: lane, family, layers, batch, width: measured → before (error), after "
                 "(error, 95% interval); where the profile measured widths on both sides, the medians there (a "
                 "measurement outside them is one no model growing with size can reach from the profile's points)")
    after_of = {tuple(e[k] for k in key): e for e in after}
    outside_both = 0
    for b in before:
        a = after_of[tuple(b[k] for k in key)]
        interval = f"95% {a['lo']:.3g}–{a['hi']:.3g}" if a["lo"] is not None else f"no interval ({a['outside']})"
        lane = profile.lane(b["lane"])
        near = neighbours(lane, b["family"], "train", b["batch"], b["layers"], b["width"]) if lane else None
        beside = ""
        if near is not None:
            lo, hi = min(near), max(near)
            off = b["measured_ms"] / hi - 1 if b["measured_ms"] > hi else b["measured_ms"] / lo - 1 \
                if b["measured_ms"] < lo else 0.0
            outside_both += off != 0.0
            beside = f"; the profile's neighbours {near[0]:.3g} and {near[1]:.3g} ms" + (
                f", the measurement {100 * off:+.0f}% beyond them" if off else "")
        lines.append(f"{b['lane']:>9} {b['family']:<20} L{b['layers']} b{b['batch']:<4} w{b['width']:<5} "
                     f"{b['measured_ms']:8.3g} → {b['predicted_ms']:8.3g} ({100 * b['error']:+4.0f}%), "
                     f"{a['predicted_ms']:8.3g} ({100 * a['error']:+4.0f}%, {interval}){beside}")
    bracketed = sum(1 for b in before if (lane := profile.lane(b["lane"])) is not None and neighbours(
        lane, b["family"], "train", b["batch"], b["layers"], b["width"]) is not None)
    lines.append(f"# {outside_both} of the {bracketed} held-out points between two widths the profile measured lie "
                 "beyond both of the profile's medians there")
    straight = score(profile, rows, chosen_models, between="straight")
    lines += batch_lines(after, straight)
    return lines, {"made_from": made_from, "reproduced": reproduced, "before": table_before, "after": table_after,
                   "straight": summarise_groups(straight),
                   "table": rows_of_table,
                   "points_before": before, "points_after": after, "beyond_neighbours": outside_both,
                   "between_neighbours": bracketed}


def batch_lines(power: list[dict], straight: list[dict]) -> list[str]:
    """The chosen models at a batch size between two of the profile's lines, a power law between them (log-log, as
    every stored run was predicted) against a straight line in batch size (what predict does now), per lane: over
    all its held-out points the share within ±10% and ±25% and the median error, and over those between two lines
    the mean signed error (a bias: above zero, predicted slow)."""
    out = ["# between two lines of batch size: a power law (log-log, as predicted before) → a straight line in batch "
           "size (predict now), the chosen models; per lane over all its points ±10%, ±25%, median error, and over "
           "the points between two lines the mean signed error"]
    for lane in sorted({e["lane"] for e in power}):
        a, b = (summarise([e for e in x if e["lane"] == lane]) for x in (power, straight))
        cells = [f"{share(a[name]):>4} → {share(b[name]):>4}" for name in ("within_10", "within_25", "median_error")]
        bias = [statistics.fmean([e["error"] for e in x if e["lane"] == lane and e["between_lines"]] or [math.nan])
                for x in (power, straight)]
        between = sum(1 for e in straight if e["lane"] == lane and e["between_lines"])
        out.append(f"{lane:>9}  ±10% {cells[0]}  ±25% {cells[1]}  median {cells[2]}  bias over {between} points "
                   f"between lines {100 * bias[0]:+.1f}% → {100 * bias[1]:+.1f}%")
    return out


def summarise_groups(errors: list[dict]) -> dict[str, dict]:
    """`summarise` per lane and family ("cpu/cnn"), and per lane over all its families ("cpu/all")."""
    table = {}
    for lane in sorted({e["lane"] for e in errors}):
        for family in sorted({e["family"] for e in errors}) + ["all"]:
            group = [e for e in errors if e["lane"] == lane and (family == "all" or e["family"] == family)]
            if group:
                table[f"{lane}/{family}"] = summarise(group)
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--lanes", default="cpu,cpu1,jax:cpu,jax:cpu1")
    parser.add_argument("--analyze-only", action="store_true")
    parser.add_argument("--rescore", type=Path, metavar="DIR",
                        help="score the predictor before and after on a stored folder's held-out points, measuring "
                             "nothing; writes DIR/rescore.txt")
    args = parser.parse_args()
    if args.rescore is not None:
        shown = args.rescore.resolve()
        shown = shown.relative_to(ROOT) if shown.is_relative_to(ROOT) else shown
        lines, _ = rescore(args.rescore)
        text = "\n".join([f"# .venv/bin/python benchmarks/profile_accuracy.py --rescore {shown}"] + lines) + "\n"
        print(text, end="")
        (args.rescore / "rescore.txt").write_text(text)
        return 0
    if args.out is None:
        parser.error("give --out DIR to measure (or analyse) there, or --rescore DIR")
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
