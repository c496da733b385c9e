"""Derive the calibrated MFU priors from the calibration set of published runs.

    uv run python -m benchmarks.derive_priors          # rewrite the packaged mfu_priors.json
    uv run python -m benchmarks.derive_priors --check  # exit 1 if the packaged file is stale

Reads the packaged calibration set ``src/compute_budget/skill/data/calibration_runs.csv`` (one
row per published run: parameters, tokens, hardware, device count, GPU-hours, the source with
the quoted figure, how the GPU-hours were derived and what is assumed) and writes
``src/compute_budget/skill/data/mfu_priors.json``, which the package reads at run time.

The rule, in one sentence: log10 of the end-to-end MFU is a level per hardware generation plus
one slope in log10 of the active parameters shared by all generations, fitted robustly (soft-L1,
scipy.optimize.least_squares) to the published dense runs of the generations with at least
``MIN_RUNS`` of them; MoE runs take the dense prior at their active parameters times the median
ratio of the published MoE runs to it (at most 1); the band is the central ×/÷ the factor that
covers ``COVERAGE`` of the runs around the fit, each run's residual taken with the fit redone
without it, so that it covers what it claims on new runs (a generation with fewer runs takes, at
run time, the calibrated generation nearest in dense peak, or the lower pooled level, with the
wider pooled band).

End-to-end MFU = 6·N·T / (GPU-hours · 3600 · BF16 dense peak), N = active parameters for MoE. It
is lower than the MFU papers quote because reported hours include restarts, evaluation and
downtime; it is the figure an hours-and-dollars estimator needs.

Why this rule: per generation it has one level, plus one slope for all, each an outsider can
check against the CSV; ``benchmarks/accuracy.py`` checks with leave-one-out that it carries over
to runs it has not seen, and that the size term earns its place (the per-generation median alone
is kept there as a baseline). Cluster size was not added: too few rows report a device count.
Runs whose numbers do not measure end-to-end utilisation are kept in the benchmark but left out
of the derivation (:data:`EXCLUDED`); FP8 runs are left out because the priors are against the
BF16 peak and converting an FP8 run would assume the very FP8 speed-up the package applies on top
(:data:`compute_budget.skill.hardware.mfu.FP8_SPEEDUP`).
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

import numpy as np
from scipy import optimize  # type: ignore[import-untyped]

from compute_budget.skill.hardware.catalog import Accelerator, Precision, get_accelerator
from compute_budget.skill.hardware.mfu import FAMILY_PRIORS
from compute_budget.skill.hardware.mfu_table import (
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
    "REFERENCE_PARAMS",
    "PublishedRun",
    "derive",
    "load_runs",
    "map_hardware",
    "render",
    "usable_runs",
]

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "compute_budget" / "skill" / "data"
CSV_PATH = DATA / "calibration_runs.csv"
PRIORS_PATH = DATA / "mfu_priors.json"

AS_OF = "2026-12-01"
"""Date of the calibration set (when its rows were last sourced)."""

MIN_RUNS = 3
"""Dense runs a generation needs for its own level; fewer and it borrows the nearest one's."""

COVERAGE = 0.9
"""Share of the calibration runs the band factor covers around the fit, each run's residual
taken with the fit redone without it (the earlier per-generation rule: in-sample residuals)."""

REFERENCE_PARAMS = 1e10
"""Active parameters at which the generation levels are quoted (10B)."""

ROBUST_SCALE = 0.05
"""Soft-L1 scale of the fit, in log10 MFU (a factor of 1.12): residuals beyond it count less."""

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
    gpu_hours_basis: str = "reported"
    assumptions: str = ""

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
        if self.precision == "fp8" and self.usable:
            return (
                "flagged FP8 and left out of the derivation: the priors are against the BF16 "
                "peak, and converting an FP8 run needs the assumed FP8 speed-up the package "
                "applies anyway; the benchmark checks it through the FP8 path"
            )
        if self.name in KEPT_WITH_CAVEAT:
            return KEPT_WITH_CAVEAT[self.name]
        return f"assumed: {self.assumptions}" if self.assumptions else ""

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
    size as the 80 GB part (both have the same 312 TFLOP/s BF16 peak); V100 as the catalog's
    (both memory sizes have the same 125 TFLOP/s FP16 peak).
    """
    t = text.lower()
    if "not stated" in t:
        return None, f"hardware not stated ({text!r})"
    keys: list[str] = [f"tpu-v{m}" for m in re.findall(r"tpu\s*v(\d+[a-z]?)", t)]
    if "v100" in t:
        keys.append("v100")
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
            basis = row.get("gpu_hours_basis") or ""
            if gpu_hours is not None and (basis.startswith("upper bound")
                                          or "basis: upper bound" in row["source"]):
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
                gpu_hours_basis=basis or "reported",
                assumptions=row.get("assumptions") or "",
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


def _spread(residuals: Sequence[float]) -> float:
    """The ×/÷ factor that covers COVERAGE of the log10 residuals, to 3 digits."""
    return float(f"{10 ** _quantile([abs(r) for r in residuals], COVERAGE):.3g}")


def _labels(generations: Sequence[str]) -> str:
    names = [generation_label(g) for g in generations]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _x(run: PublishedRun) -> float:
    return math.log10(run.compute_params / REFERENCE_PARAMS)


def _y(run: PublishedRun) -> float:
    return math.log10(run.end_to_end_mfu)


def _fit(by_generation: dict[str, list[PublishedRun]], size_term: bool) -> tuple[
        dict[str, float], float]:
    """Per-generation log10 levels and the shared slope (0 without the size term)."""
    generations = sorted(by_generation)
    if not size_term:
        return ({g: statistics.median(_y(r) for r in by_generation[g]) for g in generations},
                0.0)
    rows = [(i, r) for i, g in enumerate(generations) for r in by_generation[g]]
    design = np.zeros((len(rows), len(generations) + 1))
    target = np.array([_y(r) for _, r in rows])
    for k, (i, r) in enumerate(rows):
        design[k, i] = 1.0
        design[k, -1] = _x(r)
    start = np.append([statistics.median(_y(r) for r in by_generation[g]) for g in generations],
                      0.0)
    solution = optimize.least_squares(lambda b: design @ b - target, start, loss="soft_l1",
                                      f_scale=ROBUST_SCALE).x
    return {g: float(solution[i]) for i, g in enumerate(generations)}, float(solution[-1])


def _held_out_residuals(calibrated: dict[str, list[PublishedRun]], moe: Sequence[PublishedRun],
                        size_term: bool) -> list[float]:
    """log10(MFU / prior) of each run with the fit (levels, slope, MoE ratio) redone without it:
    the band is set on these, so that it covers what it claims on runs it has not seen."""
    out: list[float] = []
    levels, slope = _fit(calibrated, size_term)
    for generation, members in calibrated.items():
        for run in members:
            rest = {g: [r for r in rs if r is not run] for g, rs in calibrated.items()}
            if len(rest[generation]) < MIN_RUNS:
                continue
            held_levels, held_slope = _fit(rest, size_term)
            out.append(_y(run) - held_levels[generation] - held_slope * _x(run))
    for run in moe:
        generation = _generation(run)
        if generation not in levels:
            continue
        others = [10 ** (_y(r) - levels[_generation(r)] - slope * _x(r))
                  for r in moe if r is not run and _generation(r) in levels]
        ratio = min(1.0, statistics.median(others)) if others else SKILL_MOE_RATIO
        out.append(_y(run) - levels[generation] - slope * _x(run) - math.log10(ratio))
    return out


def derive(runs: Sequence[PublishedRun], *, size_term: bool = True) -> MfuPriorTable:
    """The prior table for ``runs`` (the benchmark calls this without one run for leave-one-out;
    ``size_term=False`` gives the earlier per-generation-median rule, kept as a baseline).

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
        f"compute-budget calibration set calibration_runs.csv: {len(runs)} published training "
        f"runs from papers, model cards and technical reports, GPU-hours as reported or derived "
        f"from device count × duration as each row says, {AS_OF}"
    )

    by_generation: dict[str, list[PublishedRun]] = {}
    for run in dense:
        by_generation.setdefault(_generation(run), []).append(run)
    calibrated = {g: rs for g, rs in by_generation.items() if len(rs) >= MIN_RUNS}
    if not calibrated:
        calibrated = {POOLED: dense}
    levels, slope = _fit(calibrated, size_term)
    slope = round(slope, 3)
    pooled_level = statistics.median(_y(r) - slope * _x(r) for r in dense)

    def predicted(run: PublishedRun) -> float:
        """log10 of the dense prior's central for ``run``'s generation and size."""
        generation = _generation(run)
        return levels.get(generation, pooled_level) + slope * _x(run)

    in_calibrated = [r for r in dense if _generation(r) in calibrated]
    dense_residuals = [_y(r) - predicted(r) for r in in_calibrated]
    if moe:
        ratios = [10 ** (_y(r) - predicted(r)) for r in moe]
        moe_ratio = round(min(1.0, statistics.median(ratios)), 2)
        moe_generations = sorted({_generation(r) for r in moe})
        moe_basis = (f"the median ratio of the {len(moe)} published BF16 MoE runs (on "
                     f"{_labels(moe_generations)}) to the dense prior at their active parameters")
    else:
        moe_ratio = round(SKILL_MOE_RATIO, 2)
        moe_basis = "the skill's MoE-to-dense ratio, no published MoE run being usable"
    moe_residuals = [_y(r) - predicted(r) - math.log10(moe_ratio) for r in moe]
    factor = _spread(_held_out_residuals(calibrated, moe, size_term)
                     if size_term else dense_residuals + moe_residuals)
    pooled_factor = _spread([_y(r) - pooled_level - slope * _x(r) for r in dense]
                            + moe_residuals)

    if size_term:
        size_note = (f"at {REFERENCE_PARAMS / 1e9:g}B active parameters, ×{10 ** slope:.2f} per "
                     "tenfold more (one slope fitted across generations)")
    else:
        size_note = "whatever the model size"
    peak_note = "6·N·T ÷ reported GPU-hours ÷ BF16 dense peak"
    entries: list[MfuPriorEntry] = []

    def add(family: CalibratedFamily, generation: str, central: float, k: float,
            members: Sequence[PublishedRun], basis: str) -> None:
        low, high = round(central / k, 3), round(central * k, 3)
        entries.append(MfuPriorEntry(
            family=family, generation=generation, central=central, low=low, high=high,
            n_runs=len(members), runs=tuple(r.name for r in members),
            basis=basis.format(lo=low, hi=high), source=source, as_of=AS_OF,
            reference_params=REFERENCE_PARAMS,
        ))

    for generation in sorted(calibrated, key=lambda g: -len(calibrated[g])):
        if generation == POOLED:
            continue
        members = calibrated[generation]
        label = generation_label(generation)
        central = round(10 ** levels[generation], 3)
        add("dense", generation, central, factor, members,
            f"End-to-end MFU ({peak_note}) fitted to the {len(members)} published dense runs on "
            f"{label}: {central:.2f} {size_note}, with a band of ×/÷ {factor:g} that covers "
            f"{COVERAGE:.0%} of the published runs around the fit.")
        moe_central = round(central * moe_ratio, 3)
        add("moe", generation, moe_central, factor, [*members, *moe],
            f"The {label} dense prior ({len(members)} published runs, {central:.2f} "
            f"{size_note}) × {moe_ratio:.2f}, {moe_basis}, with a band of ×/÷ {factor:g}.")

    all_generations = sorted(by_generation, key=lambda g: -len(by_generation[g]))
    pooled = round(10 ** pooled_level, 3)
    add("dense", POOLED, pooled, pooled_factor, dense,
        f"End-to-end MFU ({peak_note}) of the {len(dense)} published dense runs pooled across "
        f"{_labels(all_generations)}: {pooled:.2f} {size_note}, with a band of ×/÷ "
        f"{pooled_factor:g} that covers {COVERAGE:.0%} of them.")
    pooled_moe = round(pooled * moe_ratio, 3)
    add("moe", POOLED, pooled_moe, pooled_factor, [*dense, *moe],
        f"The pooled dense prior ({len(dense)} published runs across "
        f"{_labels(all_generations)}, {pooled:.2f} {size_note}) × {moe_ratio:.2f}, {moe_basis}, "
        f"with a band of ×/÷ {pooled_factor:g}.")

    rule = (
        "Default MFU = a level per hardware generation (fitted to its published dense runs; one "
        f"with fewer than {MIN_RUNS} takes the calibrated generation nearest in dense peak with "
        "the pooled band) "
        + ("× a size term, one slope in log10 active parameters shared by all generations and "
           "clamped to the calibration range, " if size_term else "")
        + "× the median MoE-to-dense ratio of the published BF16 MoE runs (at most 1) for MoE, "
        f"with a band of ×/÷ the factor that covers {COVERAGE:.0%} of the runs around the fit; "
        "end-to-end 6·N·T over the BF16 dense peak, rescaled for FP8."
    )
    fit_runs = [r for r in used if _generation(r) in calibrated or POOLED in calibrated]
    sizes = [r.compute_params for r in fit_runs] or [REFERENCE_PARAMS]

    def fitted(run: PublishedRun) -> float | None:
        if not run.used:
            return None
        ratio = moe_ratio if run.family == "moe" else 1.0
        return round(10 ** predicted(run) * ratio, 4)

    records = tuple(
        CalibrationRun(
            name=r.name, accelerator=r.accelerator.key, generation=r.accelerator.generation,
            family=r.family, fp8=r.precision == "fp8", end_to_end_mfu=round(r.end_to_end_mfu, 4),
            params=r.compute_params, fitted_mfu=fitted(r), used=r.used, note=r.note,
        )
        for r in usable if r.accelerator is not None
    )
    skipped = tuple(SkippedRun(name=r.name, reason=r.skip_reason)
                    for r in runs if r.skip_reason is not None)
    return MfuPriorTable(
        calibration_set=source, as_of=AS_OF, rule=rule, min_runs=MIN_RUNS,
        coverage_target=COVERAGE, band_factor=factor, pooled_band_factor=pooled_factor,
        moe_ratio=moe_ratio, size_slope=slope, reference_params=REFERENCE_PARAMS,
        params_range=(min(sizes), max(sizes)),
        priors=tuple(entries), runs=records, skipped=skipped,
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
