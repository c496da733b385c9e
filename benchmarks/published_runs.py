"""The published runs of the calibration set, as the derivation and the benchmark read them.

``src/compute_budget/skill/data/calibration_runs.csv`` has one row per published training run:
parameters (and active parameters for a mixture of experts), tokens, hardware, device count,
GPU-hours, the source with the quoted figure, how the GPU-hours were derived and what is assumed.
:func:`load_runs` reads every row, maps its hardware to the catalog and records why a row cannot
be used (no hours, no tokens, hardware not in the catalog, hours only an upper bound); each run
knows its lineage (family and organisation, :mod:`.calibration_groups`) and its architecture
class. Rows that are usable but do not measure end-to-end utilisation are left out of the
derivation with the reason (:data:`EXCLUDED`), and so are FP8 runs (the priors are against the
BF16 peak) and encoder runs (their prior is their own median, family ``encoder``: the benchmark
scores them estimated as dense, as a user's estimate without that family would be).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from compute_budget.skill.errors import UnknownAcceleratorError
from compute_budget.skill.hardware.catalog import Accelerator, Precision, get_accelerator
from compute_budget.skill.hardware.mfu_table import CalibratedFamily

from .calibration_groups import ArchitectureClass, Grouping, architecture_class, group_of

__all__ = [
    "CSV_PATH",
    "EXCLUDED",
    "KEPT_WITH_CAVEAT",
    "PublishedRun",
    "load_runs",
    "map_hardware",
    "usable_runs",
]

CSV_PATH = (Path(__file__).resolve().parents[1] / "src" / "compute_budget" / "skill" / "data"
            / "calibration_runs.csv")

_MOBILELLM_DAYS = (
    "left out of the derivation: the README's days are a cost guide ('It takes the following "
    "number of days to train MobileLLM on 1T tokens', rounded with '~'), not a logged run; at 1B "
    "and 1.5B they imply 30k tokens/s per A100 (0.58 end to end), faster than TinyLlama's "
    "fused-kernel steady-state 24k at 1.1B, so they cannot include restarts and evaluation"
)

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
    **dict.fromkeys(
        [f"MobileLLM-{size}" for size in ("125M", "350M", "600M", "1B", "1.5B")],
        _MOBILELLM_DAYS,
    ),
    **dict.fromkeys(["Pythia 12B", "Pythia 1B"], (
        "left out of the derivation: the paper computes its GPU-hours as iteration time × "
        "iterations × GPUs ('at the throughputs that we achieve', App. D Table 5), a steady-state "
        "rate, not a measured end-to-end run, so restarts and evaluation are missing"
    )),
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
    architecture: ArchitectureClass = "dense"
    """dense, moe or encoder (encoder-only and encoder–decoder), :func:`architecture_class`."""

    def group(self, grouping: Grouping) -> str:
        """The run's family or organisation (:mod:`.calibration_groups`)."""
        return group_of(self.name, grouping)

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
        """Whether the derivation uses it: usable, not excluded, not FP8, not an encoder."""
        return (self.usable and self.name not in EXCLUDED and self.precision != "fp8"
                and self.architecture != "encoder")

    @property
    def note(self) -> str:
        if self.name in EXCLUDED:
            return EXCLUDED[self.name]
        if self.architecture == "encoder" and self.usable:
            return ("encoder or encoder–decoder: left out of the dense fit (the encoder prior, "
                    "family encoder, is the median of these runs) and scored with the dense "
                    "prior, as a user's estimate without family encoder would be")
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


_DEVICES: tuple[tuple[str, str], ...] = (
    (r"\bv100", "v100"),
    (r"\ba100\b.*\b40\s*g|\ba100-40", "a100-40gb"),
    (r"\ba100", "a100-80gb"),
    (r"\ba800", "a800"),
    (r"\bgh200", "gh200"),
    (r"\bh100\b.*pcie|\bh100-pcie", "h100-pcie"),
    (r"\bh100", "h100-sxm"),
    (r"\bh800", "h800"),
    (r"\bh200", "h200"),
    (r"\bh20\b", "h20"),
    (r"\bgb200", "gb200"),
    (r"\bb200", "b200"),
    (r"\bmi250x\b.*\bgcd", "mi250x-gcd"),
    (r"\bmi250x\b", "mi250x"),
    (r"\bmi250\b.*\bgcd", "mi250-gcd"),
    (r"\bmi250\b", "mi250"),
    (r"\bmi300x?\b", "mi300x"),
    (r"\bmi325x\b", "mi325x"),
    (r"\bgaudi\s*-?2", "gaudi2"),
    (r"\bgaudi\s*-?3", "gaudi3"),
    (r"\btrainium\s*-?2|\btrn2", "trainium2"),
    (r"\btpu\s*-?v5\s*(e|lite)", "tpu-v5e"),
    (r"\btpu\s*-?v5p?\b", "tpu-v5p"),
    (r"\btpu\s*-?v6e?\b|\btrillium", "tpu-v6e"),
    (r"\btpu\s*-?v4", "tpu-v4"),
    (r"\btpu\s*-?v3", "tpu-v3"),
    (r"\btpu\s*-?v2", "tpu-v2"),
)
"""Hardware text → catalog key, most specific first; every key a row's text matches counts (two
different devices make the row mixed). An A100 without a memory size is the 80 GB part and an
H100 without a form factor the SXM part (each has the same BF16 peak as the other); an MI250 or
MI250X is the whole module (two GCDs) unless the text says GCD."""


def map_hardware(text: str) -> tuple[Accelerator | None, str | None]:
    """The catalog accelerator a row's ``hardware`` text names, or None and the reason."""
    t = text.lower()
    if "not stated" in t:
        return None, f"hardware not stated ({text!r})"
    keys: list[str] = []
    for part in re.split(r"/|\+| and ", t):
        for pattern, key in _DEVICES:
            if re.search(pattern, part):
                keys.append(key)
                break
    keys = list(dict.fromkeys(keys))
    if not keys:
        return None, f"hardware {text!r} is not in the catalog"
    if len(keys) > 1:
        return None, f"mixed hardware ({text!r})"
    try:
        return get_accelerator(keys[0]), None
    except UnknownAcceleratorError:
        return None, f"hardware {text!r} is not in the catalog"


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
            params, active = float(row["params"]), _number(row["active_params"])
            runs.append(PublishedRun(
                name=row["model"],
                params=params,
                active_params=active,
                tokens=tokens,
                hardware=row["hardware"],
                gpu_count=None if count is None else int(count),
                gpu_hours=gpu_hours,
                accelerator=accelerator,
                skip_reason="; ".join(reasons) or None,
                gpu_hours_basis=basis or "reported",
                assumptions=row.get("assumptions") or "",
                architecture=architecture_class(row["model"], params, active, row),
            ))
    return runs


def usable_runs(runs: Sequence[PublishedRun]) -> list[PublishedRun]:
    """The runs with tokens, GPU-hours and known hardware."""
    return [run for run in runs if run.usable]


