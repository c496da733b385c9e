"""Derive the calibrated MFU priors from the calibration set of published runs.

    uv run python -m benchmarks.derive_priors          # rewrite the packaged mfu_priors.json
    uv run python -m benchmarks.derive_priors --check  # exit 1 if the packaged file is stale

Reads ``benchmarks/data/published_runs.csv`` (a copy of the project's reference data) and writes
``src/compute_budget/skill/data/mfu_priors.json``, which the package reads at run time.

The rule, in one sentence: the default MFU is the median end-to-end MFU of the published dense
runs on the same hardware generation (a generation with fewer than ``MIN_RUNS`` takes the
calibrated generation nearest in dense peak, at run time; the pooled prior, also derived here,
only serves devices whose peak is unknown), times the median MoE-to-dense ratio for
mixture-of-experts models, and the band is the central ×/÷ the factor that covers ``COVERAGE`` of
the dense runs around their median.

End-to-end MFU = 6·N·T / (GPU-hours · 3600 · BF16 dense peak), N = active parameters for MoE. It
is lower than the MFU papers quote because reported hours include restarts, evaluation and
downtime; it is the figure an hours-and-dollars estimator needs.

Why this rule: it has three numbers per generation, each a median or a percentile an outsider can
recompute by hand from the CSV, and nothing is fitted to individual runs (no size or token terms),
so it should carry over to runs outside the calibration set; ``benchmarks/accuracy.py`` checks that
with leave-one-out. Runs whose numbers do not measure end-to-end utilisation are kept in the
benchmark but left out of the derivation (:data:`EXCLUDED`); FP8 runs are left out because the
priors are against the BF16 peak and converting an FP8 run would assume the very FP8 speed-up the
package applies on top (:data:`compute_budget.skill.mfu.FP8_SPEEDUP`).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from compute_budget.skill.catalog import Accelerator, Precision, get_accelerator
from compute_budget.skill.mfu import (
    FAMILY_PRIORS,
    POOLED,
    CalibratedFamily,
    CalibrationRun,
    MfuPriorEntry,
    MfuPriorTable,
    SkippedRun,
    generation_label,
)

__all__ = [
    "AS_OF",
    "COVERAGE",
    "CSV_PATH",
    "EXCLUDED",
    "KEPT_WITH_CAVEAT",
    "MIN_RUNS",
    "PRIORS_PATH",
    "PublishedRun",
    "derive",
    "load_runs",
    "map_hardware",
    "render",
    "usable_runs",
]

ROOT = Path(__file__).resolve().parents[1]
CSV_PATH = Path(__file__).resolve().parent / "data" / "published_runs.csv"
PRIORS_PATH = ROOT / "src" / "compute_budget" / "skill" / "data" / "mfu_priors.json"

AS_OF = "2026-11-30"
"""Date of the calibration set: when the shared reference data was copied into the project."""

MIN_RUNS = 3
"""Dense runs a generation needs for its own prior; fewer and it gets the pooled prior."""

COVERAGE = 0.9
"""Share of the calibration runs the band factor covers around their generation's median."""

SKILL_MOE_RATIO = FAMILY_PRIORS["moe"].central / FAMILY_PRIORS["dense"].central
"""The skill's MoE/dense ratio, used only if no published MoE run is usable."""

EXCLUDED: dict[str, str] = {
    "Phi-2 2.7B": (
        "left out of the derivation: the data README flags its 14-day duration as likely "
        "understated, and the MFU it implies (0.63) is above what any A100 run reports"
    ),
    "Llama 3.2 1B": (
        "left out of the derivation: pruned from Llama 3.1 8B and distilled from larger models, "
        "so 6·N·T misses the teacher's forward passes and its MFU measures that, not the hardware"
    ),
    "Llama 3.2 3B": (
        "left out of the derivation: pruned and distilled from larger models, so 6·N·T misses "
        "the teacher's forward passes and its MFU measures that, not the hardware"
    ),
    "TinyLlama 1.1B": (
        "left out of the derivation: its GPU-hours come from a planned duration and a "
        "steady-state throughput rate, not a measured end-to-end run, so restarts and "
        "evaluation are missing"
    ),
}
"""Usable rows the derivation leaves out (they stay in the benchmark), with the reason."""

KEPT_WITH_CAVEAT: dict[str, str] = {
    "Llama 3 8B": (
        "kept: the token count ('15T+') is a lower bound, so its MFU is one too, by a little"
    ),
    "Llama 3.1 8B": (
        "kept: the token count ('15T+', '~15T') is a lower bound, so its MFU is one too, "
        "by a little"
    ),
    "Falcon-180B": (
        "kept: '~7,000,000 GPU hours' has one significant figure (±7%), small next to the band"
    ),
}
"""Shaky rows the derivation keeps, with what to keep in mind."""


@dataclass(frozen=True)
class PublishedRun:
    """One row of the calibration set, with its hardware mapped to the catalog."""

    name: str
    params: float
    active_params: float | None
    tokens: float | None
    hardware: str
    gpu_count: int | None
    gpu_hours: float | None
    accelerator: Accelerator | None
    skip_reason: str | None

    @property
    def precision(self) -> Precision | None:
        """FP8 when the hardware text says so; None means the device's default (BF16)."""
        return "fp8" if "fp8" in self.hardware.lower() else None

    @property
    def family(self) -> CalibratedFamily:
        """MoE when fewer parameters are active than exist (as the package infers it)."""
        if self.active_params is not None and self.active_params < self.params:
            return "moe"
        return "dense"

    @property
    def compute_params(self) -> float:
        return self.active_params if self.active_params is not None else self.params

    @property
    def usable(self) -> bool:
        return self.skip_reason is None

    @property
    def used(self) -> bool:
        """Whether the derivation uses it: usable, not excluded, not FP8."""
        return self.usable and self.name not in EXCLUDED and self.precision != "fp8"

    @property
    def note(self) -> str:
        if self.name in EXCLUDED:
            return EXCLUDED[self.name]
        if self.precision == "fp8":
            return (
                "flagged FP8 and left out of the derivation: the priors are against the BF16 "
                "peak, and converting an FP8 run needs the assumed FP8 speed-up the package "
                "applies anyway; the benchmark checks it through the FP8 path"
            )
        return KEPT_WITH_CAVEAT.get(self.name, "")

    @property
    def end_to_end_mfu(self) -> float:
        """6·N·T / (GPU-hours · 3600 · BF16 dense peak)."""
        if self.accelerator is None or self.tokens is None or self.gpu_hours is None:
            raise ValueError(f"{self.name}: not usable ({self.skip_reason})")
        peak = self.accelerator.peak_tflops.bf16 or self.accelerator.peak_tflops.fp16
        if peak is None:
            raise ValueError(f"{self.name}: no BF16/FP16 peak for {self.accelerator.name}")
        return 6 * self.compute_params * self.tokens / (self.gpu_hours * 3600 * peak * 1e12)


def map_hardware(text: str) -> tuple[Accelerator | None, str | None]:
    """The catalog accelerator a row's ``hardware`` text names, or None and the reason.

    H100 without a form factor is taken as SXM (the 80 GB training part); A100 without a memory
    size as the 80 GB part (both have the same 312 TFLOP/s BF16 peak).
    """
    t = text.lower()
    if "not stated" in t:
        return None, f"hardware not stated ({text!r})"
    keys: list[str] = [f"tpu-v{m}" for m in re.findall(r"tpu\s*v(\d+[a-z]?)", t)]
    if "a100" in t:
        keys.append("a100-40gb" if re.search(r"40\s*g", t) else "a100-80gb")
    if "a800" in t:
        keys.append("a800")
    if "h100" in t:
        keys.append("h100-pcie" if "pcie" in t else "h100-sxm")
    if "h800" in t:
        keys.append("h800")
    keys = list(dict.fromkeys(keys))
    if not keys:
        return None, f"hardware {text!r} is not in the catalog"
    if len(keys) > 1:
        return None, f"mixed hardware ({text!r})"
    return get_accelerator(keys[0]), None


def _number(cell: str) -> float | None:
    return float(cell) if cell.strip() else None


def load_runs(path: Path = CSV_PATH) -> list[PublishedRun]:
    """Every row of the calibration set; rows that cannot be used carry a ``skip_reason``."""
    runs: list[PublishedRun] = []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            accelerator, hardware_problem = map_hardware(row["hardware"])
            tokens, gpu_hours = _number(row["tokens"]), _number(row["gpu_hours"])
            count = _number(row["gpu_count"])
            reasons = []
            if gpu_hours is None:
                reasons.append("no accelerator-hours reported (throughput or MFU only)")
            if tokens is None:
                reasons.append("token count not disclosed")
            if hardware_problem is not None:
                reasons.append(hardware_problem)
            if gpu_hours is not None and "basis: upper bound" in row["source"]:
                reasons.append("GPU-hours only an upper bound")
            runs.append(PublishedRun(
                name=row["model"],
                params=float(row["params"]),
                active_params=_number(row["active_params"]),
                tokens=tokens,
                hardware=row["hardware"],
                gpu_count=None if count is None else int(count),
                gpu_hours=gpu_hours,
                accelerator=accelerator,
                skip_reason="; ".join(reasons) or None,
            ))
    return runs


def usable_runs(runs: Sequence[PublishedRun]) -> list[PublishedRun]:
    """The runs with tokens, GPU-hours and known hardware."""
    return [run for run in runs if run.usable]


def _generation(run: PublishedRun) -> str:
    if run.accelerator is None:
        raise ValueError(f"{run.name}: no catalog accelerator ({run.skip_reason})")
    return run.accelerator.generation


def _quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default) of a non-empty sequence."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def _spread(mfus: Sequence[float], centrals: Sequence[float]) -> float:
    """The ×/÷ factor around the centrals that covers COVERAGE of the runs, to 2 digits."""
    logs = [abs(math.log(m / c)) for m, c in zip(mfus, centrals, strict=True)]
    return float(f"{math.exp(_quantile(logs, COVERAGE)):.2g}")


def _labels(generations: Sequence[str]) -> str:
    names = [generation_label(g) for g in generations]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def derive(runs: Sequence[PublishedRun]) -> MfuPriorTable:
    """The prior table for ``runs`` (the benchmark calls this without one run for leave-one-out).

    Rows that are not usable are recorded as skipped; usable rows left out of the derivation are
    recorded with the reason.
    """
    usable = usable_runs(runs)
    used = [run for run in usable if run.used]
    dense = [run for run in used if run.family == "dense"]
    moe = [run for run in used if run.family == "moe"]
    if not dense:
        raise ValueError("no usable dense runs to calibrate on")
    source = (
        f"compute-budget calibration set published_runs.csv: {len(runs)} published training "
        f"runs, GPU-hours as their authors report them in papers and model cards, {AS_OF}"
    )

    by_generation: dict[str, list[PublishedRun]] = {}
    for run in dense:
        by_generation.setdefault(_generation(run), []).append(run)
    calibrated = {g: rs for g, rs in by_generation.items() if len(rs) >= MIN_RUNS}
    raw_central = {g: statistics.median(r.end_to_end_mfu for r in rs)
                   for g, rs in calibrated.items()}
    raw_pooled = statistics.median(r.end_to_end_mfu for r in dense)

    def dense_central(generation: str) -> float:
        return raw_central.get(generation, raw_pooled)

    pooled_factor = _spread([r.end_to_end_mfu for r in dense], [raw_pooled] * len(dense))
    in_calibrated = [r for r in dense if _generation(r) in calibrated]
    factor = _spread([r.end_to_end_mfu for r in in_calibrated],
                     [dense_central(_generation(r)) for r in in_calibrated]) \
        if in_calibrated else pooled_factor

    if moe:
        ratios = [r.end_to_end_mfu / dense_central(_generation(r)) for r in moe]
        moe_ratio = round(min(1.0, statistics.median(ratios)), 2)
        moe_generations = sorted({_generation(r) for r in moe})
        moe_basis = (f"the median ratio of the {len(moe)} published BF16 MoE runs (on "
                     f"{_labels(moe_generations)}) to the dense prior of their generation")
    else:
        moe_ratio = round(SKILL_MOE_RATIO, 2)
        moe_basis = "the skill's MoE-to-dense ratio, no published MoE run being usable"

    peak_note = "6·N·T ÷ reported GPU-hours ÷ BF16 dense peak"
    entries: list[MfuPriorEntry] = []

    def add(family: CalibratedFamily, generation: str, central: float, k: float,
            members: Sequence[PublishedRun], basis: str) -> None:
        low, high = round(central / k, 2), round(central * k, 2)
        entries.append(MfuPriorEntry(
            family=family, generation=generation, central=central, low=low, high=high,
            n_runs=len(members), runs=tuple(r.name for r in members),
            basis=basis.format(lo=low, hi=high), source=source, as_of=AS_OF,
        ))

    for generation in sorted(calibrated, key=lambda g: -len(calibrated[g])):
        members = calibrated[generation]
        label = generation_label(generation)
        central = round(raw_central[generation], 2)
        add("dense", generation, central, factor, members,
            f"Median end-to-end MFU ({peak_note}) of the {len(members)} published dense runs on "
            f"{label}, {central:.2f}, with a band of ×/÷ {factor:g} ({{lo:.2f}}–{{hi:.2f}}) that "
            f"covers {COVERAGE:.0%} of the published dense runs around their generation's "
            "median.")
        moe_central = round(central * moe_ratio, 2)
        add("moe", generation, moe_central, factor, [*members, *moe],
            f"The {label} dense prior {central:.2f} ({len(members)} published runs) × "
            f"{moe_ratio:.2f}, {moe_basis}, with a band of ×/÷ {factor:g} "
            "({lo:.2f}–{hi:.2f}).")

    all_generations = sorted(by_generation, key=lambda g: -len(by_generation[g]))
    pooled = round(raw_pooled, 2)
    add("dense", POOLED, pooled, pooled_factor, dense,
        f"Median end-to-end MFU ({peak_note}) of the {len(dense)} published dense runs pooled "
        f"across {_labels(all_generations)}, {pooled:.2f}, with a band of ×/÷ "
        f"{pooled_factor:g} ({{lo:.2f}}–{{hi:.2f}}) that covers {COVERAGE:.0%} of them.")
    pooled_moe = round(pooled * moe_ratio, 2)
    add("moe", POOLED, pooled_moe, pooled_factor, [*dense, *moe],
        f"The pooled dense prior {pooled:.2f} ({len(dense)} published runs across "
        f"{_labels(all_generations)}) × {moe_ratio:.2f}, {moe_basis}, with a band of ×/÷ "
        f"{pooled_factor:g} ({{lo:.2f}}–{{hi:.2f}}).")

    rule = (
        "Default MFU = the median end-to-end MFU of the published dense runs on the same hardware "
        f"generation (one with fewer than {MIN_RUNS} takes the calibrated generation nearest in "
        "dense peak; the pooled prior only when the device's peak is unknown), × the median "
        "MoE-to-dense ratio of the published BF16 MoE runs (at most 1) for MoE, with a band of "
        f"×/÷ the factor that covers {COVERAGE:.0%} of the dense runs around their median; "
        "against the BF16 dense peak, rescaled for FP8."
    )
    records = tuple(
        CalibrationRun(
            name=r.name, accelerator=r.accelerator.key, generation=r.accelerator.generation,
            family=r.family, fp8=r.precision == "fp8", end_to_end_mfu=round(r.end_to_end_mfu, 4),
            used=r.used, note=r.note,
        )
        for r in usable if r.accelerator is not None
    )
    skipped = tuple(SkippedRun(name=r.name, reason=r.skip_reason)
                    for r in runs if r.skip_reason is not None)
    return MfuPriorTable(
        calibration_set=source, as_of=AS_OF, rule=rule, min_runs=MIN_RUNS,
        coverage_target=COVERAGE, band_factor=factor, pooled_band_factor=pooled_factor,
        moe_ratio=moe_ratio, priors=tuple(entries), runs=records, skipped=skipped,
    )


def render(table: MfuPriorTable) -> str:
    """The JSON text of ``table`` as it is packaged."""
    return json.dumps(table.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the packaged priors differ from a fresh derivation")
    args = parser.parse_args(argv)
    text = render(derive(load_runs()))
    if args.check:
        current = PRIORS_PATH.read_text(encoding="utf-8") if PRIORS_PATH.exists() else ""
        if current != text:
            print(f"{PRIORS_PATH} is stale: run `uv run python -m benchmarks.derive_priors`")
            return 1
        print(f"{PRIORS_PATH} is up to date")
        return 0
    PRIORS_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {PRIORS_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
