"""What `profile` measures: a short designed sweep over the families, sizes, depths and batch sizes that a profile's
lines need (core/files/device_profile.py), each an ordinary sweep with its own files, and how long it should take.

Dense models (the seeds' kind) get three batch sizes and three depths, so that predictions between them are
interpolations; each other family one depth and one batch size at four or five widths (a prediction at another
batch size or depth of those is said as an extrapolation). Sizes stay small enough that a step on one CPU thread
takes well under the point's time limit, so every point gets batches to stand on.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..config import ConfigError
from .sweep import THREE_RECHECKS_FROM, TWO_RECHECKS_FROM

POINT_SECONDS = 2.0  # steady time per point at most: a profile is many points, each needs a few dozen batches
STEADY_STEPS = 40
WARMUP_S = {"tensorflow": 2.5, "jax": 1.5, "torch": 1.5}  # a point's warm-up on a CPU lane here, about
START_S = 12.0  # a lane's framework import and data, once per sweep


@dataclass(frozen=True)
class ProfileSweep:
    """One sweep of the plan: a family at some widths, one depth, some batch sizes."""

    name: str  # the sweep's file stem: "mlp-2", "cnn"
    family: str
    widths: tuple[int, ...]
    layers: int
    batch_sizes: tuple[int, ...]
    cell: str = "lstm"
    heads: int = 4

    @property
    def points(self) -> int:
        return len(self.widths) * len(self.batch_sizes)

    def argv(self, lanes: str, csv: str) -> list[str]:
        """The `sweep` command line that measures it (with its rechecks: the lane's run-to-run noise)."""
        out = ["sweep", "--family", self.family, "--widths", ",".join(map(str, self.widths)),
               "--layers", str(self.layers), "--batch-sizes", ",".join(map(str, self.batch_sizes)),
               "--lanes", lanes, "--csv", csv, "--steady-steps", str(STEADY_STEPS),
               "--seconds-per-point", f"{POINT_SECONDS:g}", "--no-calibrate"]
        if self.family == "rnn":
            out += ["--cell", self.cell]
        if self.family == "transformer":
            out += ["--heads", str(self.heads)]
        return out


# A dense line per batch size: 8 points over three depths; the other families' lines 5 points each, the fewest on
# which a line can weigh the bytes its steps move (three terms, and two degrees of freedom left for the t of its
# interval: core/analysis/prediction.py MIN_DOF).
PLAN = (
    ProfileSweep("mlp-2", "mlp", (32, 128, 512, 2048), 2, (32, 128, 512)),
    ProfileSweep("mlp-1", "mlp", (64, 512), 1, (32, 128, 512)),
    ProfileSweep("mlp-4", "mlp", (64, 512), 4, (32, 128, 512)),
    ProfileSweep("cnn", "cnn", (8, 16, 24, 32, 48), 2, (64,)),
    ProfileSweep("lstm", "rnn", (16, 32, 64, 128, 256), 1, (64,)),
    ProfileSweep("transformer", "transformer", (32, 64, 96, 128, 192), 2, (64,)),
)
QUICK = tuple(s for s in PLAN if s.family == "mlp")


def plan_named(families: str | None, quick: bool) -> tuple[ProfileSweep, ...]:
    """The plan's sweeps for `families` ("mlp,cnn"; None: all), or with `quick` the dense ones only."""
    plan = QUICK if quick else PLAN
    if families is None:
        return plan
    wanted = [f.strip() for f in families.split(",") if f.strip()]
    known = sorted({s.family for s in PLAN})
    unknown = [f for f in wanted if f not in known]
    if unknown or not wanted:
        raise ConfigError(f"--families {families[:80]!r}: choose among {', '.join(known)}")
    return tuple(s for s in plan if s.family in wanted)


def expected_seconds(plan: tuple[ProfileSweep, ...], lanes: int, backends: dict[str, int]) -> float:
    """About how long the plan takes on `lanes` lanes: per point and lane its warm-up and its steady time, the
    sweeps' rechecks, and each sweep's start."""
    warm = sum(WARMUP_S.get(b, 2.5) * n for b, n in backends.items()) / max(sum(backends.values()), 1)
    total = 0.0
    for s in plan:
        points = s.points + (3 if s.points >= THREE_RECHECKS_FROM else 2 if s.points >= TWO_RECHECKS_FROM
                             else 1 if s.points > 1 else 0)  # as core/study/sweep.py rechecks()
        total += START_S + points * lanes * (warm + POINT_SECONDS)
    return total
