"""The README's first demo driven as a presenter does it (benchmarks/demo_drive.py: Xvfb, xdotool, OCR), once at
1600×1000 and once at 1024×700, one after the other; keeps what a reader looks at and the waits:

    .venv/bin/python benchmarks/demo_screens.py OUT      # e.g. docs/results/<folder>/demo

writes OUT/window-1600x1000.png and OUT/presentation-1600x1000.png (the run's end, then View > Presentation),
OUT/window-1024x700.png, and OUT/demo-screens.txt: per screen the waits (launch → the first thing on screen and →
the window mapped; F5 → each lane's first batch in the autosave, which a batch reaches within a second; the typed
width → both lanes' point, 10 steady batches each), the 1-minute load average beside each, the headline as OCR read
it and the exported report's answer. Each drive is a fresh process on a fresh CROSSOVER_HOME, on the defaults (the
window maximised, as a presenter does). About 4 minutes. Needs xvfb, xdotool, tesseract-ocr and imagemagick.
"""
from __future__ import annotations

import argparse
import datetime
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import demo_drive

ROOT = Path(__file__).resolve().parent.parent
WAITS = (("launch_to_card_s", "launch → first thing on screen"), ("launch_to_window_s", "launch → window mapped"),
         ("start_to_first_lane_s", "F5 → first lane's first batch"),
         ("start_to_both_lanes_s", "F5 → both lanes' first batch"),
         ("typed_to_point_both_lanes_s", "width 1024 typed → both lanes' point"),
         ("start_to_run_end_s", "F5 → run ended (time limit 30 s a lane)"))


def _commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                           text=True).stdout.strip()
    return (out.stdout.strip() or "?") + (" with uncommitted changes" if dirty else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder for the screenshots and demo-screens.txt")
    args = parser.parse_args()
    missing = demo_drive.missing_tools()
    if missing:
        print(f"needs {', '.join(missing)}: apt-get install {' '.join(missing)}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    lines = [f"# .venv/bin/python benchmarks/demo_screens.py {args.out}   ({now}, Crossover at {_commit()}, "
             f"Xvfb + xdotool, fresh CROSSOVER_HOME each, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} "
             "at the start)"]
    with tempfile.TemporaryDirectory(prefix="crossover-demo-") as work:
        for size, presentation in (((1600, 1000), True), ((1024, 700), False)):
            name = f"{size[0]}x{size[1]}"
            print(f"driving the demo at {name}…", flush=True)
            shown = demo_drive.drive(Path(work) / name, size, presentation=presentation, budget_s=400)
            for path in shown.screenshots.values():
                shutil.copy(path, args.out / path.name)
            loads = ", ".join(f"{k} {v:.1f}" for k, v in shown.loads.items())
            lines.append(f"\n{name} (load at {loads})")
            lines += [f"  {words}: {shown.timings[key]:.1f} s" for key, words in WAITS if key in shown.timings]
            lines += [f"  headline ({view}, OCR): {text}" for view, text in shown.headlines.items()]
            lines.append(f"  report's answer: {shown.report_answer}")
            lines.append("  steady batches: " + "; ".join(
                f"{w}: " + ", ".join(f"{lane} {n}" for lane, n in counts.items()) for w, counts in shown.steady.items()))
    lines.append(f"\nload at the end {os.getloadavg()[0]:.1f}")
    (args.out / "demo-screens.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
