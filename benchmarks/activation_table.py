"""The measured-versus-formula table of activation memory (README "Will it fit?").

Reads ``benchmarks/data/activation_memory.json`` (written by ``benchmarks/activation_memory.py``,
which needs torch and transformers) and compares each family's measured bytes per token per
layer with :func:`compute_budget.skill.memory.activations.activation_bytes` on the ``hf`` stack
for the same config, differenced over the same two layer counts as the measurement (so a local
or global layer is compared with its own kind). Needs neither torch nor transformers: run it
with ``uv run python -m benchmarks.activation_table``.

Each family is compared at the attention transformers picks for it by default (eager for Gemma
2, SDPA elsewhere), in the variant :data:`PINNED` names, and at every other variant measured
on a path a GPU also runs (eager, a FlashAttention stand-in). One CPU artefact is corrected: CPU
dropout saves its keep-mask in bf16 where CUDA's native_dropout saves a bool, so those masks
(marked in the breakdown) count at half their measured bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compute_budget import from_hf_config
from compute_budget.skill.memory.activations import activation_bytes
from compute_budget.skill.model.shape import ModelShape, shape_from_architecture

DATA = Path(__file__).parent / "data" / "activation_memory.json"
SEQ_LEN = 1024
VARIANT_LABELS = {
    "default": "{attention}", "eager": "eager", "flash": "FlashAttention stand-in",
    "gpu_kernel": "SDPA, GPU-kernel stand-in",
    "no_attention_dropout": "SDPA, attention dropout off",
    "window_1024": "SDPA, window 1024 (masked)",
}
"""How the table names each variant measured ({attention}: the implementation that ran)."""


@dataclass(frozen=True)
class Row:
    """One family at one attention implementation: measured and formula bytes per token per
    layer."""

    family: str
    variant: str
    checkpoint: str
    attention: str
    default: bool
    """Whether this is the family's default attention (the pinned variant)."""
    hidden: int
    measured: float
    """Measured bytes per token per layer, CPU dropout masks counted as bool."""
    formula: float

    @property
    def ratio(self) -> float:
        """Formula / measured."""
        return self.formula / self.measured


def load() -> dict[str, Any]:
    """The measurement file."""
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return data


def comparable(variant: dict[str, Any]) -> bool:
    """Whether a variant ran a path a GPU also runs: not SDPA's CPU math fallback."""
    return variant["sdpa_backend"] != "math fallback"


def shape_of(family: dict[str, Any], variant: dict[str, Any], layers: int) -> ModelShape:
    """The formula's shape for the config measured, at ``layers`` layers."""
    layer_key = "n_layer" if family["model_type"] == "gpt2" else "num_hidden_layers"
    config = {**variant["config_used"], "model_type": family["model_type"], layer_key: layers}
    return shape_from_architecture(from_hf_config(config))


def formula_per_layer(family: dict[str, Any], variant: dict[str, Any], seq_len: int) -> float:
    """The formula's bytes per token per layer, differenced over the measured layer counts."""
    flash = variant["attn_implementation"] != "eager"
    small, large = variant["layer_counts"]
    totals = [activation_bytes(shape_of(family, variant, n), stack="hf", seq_len=seq_len,
                               micro_batch=1, flash_attention=flash)[0] for n in (small, large)]
    return (totals[1] - totals[0]) / (large - small) / seq_len


def measured_per_layer(variant: dict[str, Any], seq_len: int) -> float:
    """Measured bytes per token per layer with CPU dropout masks counted as bool (1 byte)."""
    measured = next(r for r in variant["results"] if r["seq_len"] == seq_len)
    mask: float = variant.get("cpu_dropout_mask_bytes_per_token_per_layer", 0.0)
    return float(measured["bytes_per_token_per_layer"]) - mask / 2


def rows(data: dict[str, Any] | None = None, seq_len: int = SEQ_LEN) -> list[Row]:
    """Measured against formula for every comparable variant of every family."""
    data = data or load()
    out = []
    for name, family in data["families"].items():
        for label, variant in family["variants"].items():
            if not comparable(variant):
                continue
            implementation = variant["attn_implementation"]
            attention = VARIANT_LABELS.get(label, label).format(
                attention="SDPA" if implementation == "sdpa" else implementation)
            out.append(Row(family=name, variant=label, checkpoint=family["checkpoint"],
                           attention=attention, default=label == family["pinned"],
                           hidden=family["hidden_size"],
                           measured=measured_per_layer(variant, seq_len),
                           formula=formula_per_layer(family, variant, seq_len)))
    return out


def pinned(data: dict[str, Any] | None = None) -> dict[str, Row]:
    """Each family's row at its default attention implementation."""
    return {r.family: r for r in rows(data) if r.default}


def not_compared(data: dict[str, Any]) -> list[str]:
    """The variants left out (SDPA's CPU math fallback), named."""
    return [f"{name} ({label})" for name, family in data["families"].items()
            for label, variant in family["variants"].items() if not comparable(variant)]


def render(data: dict[str, Any] | None = None) -> str:
    """The markdown table, with the versions measured."""
    data = data or load()
    v = data["versions"]
    lines = ["| shape of | attention | hidden | measured | formula (hf) | formula / measured |",
             "|---|---|---|---|---|---|"]
    for r in rows(data):
        attention = f"{r.attention}{' (default)' if r.default else ''}"
        lines.append(f"| {r.checkpoint} | {attention} | {r.hidden} | "
                     f"{r.measured:,.0f} B ({r.measured / r.hidden:.1f}·h) | "
                     f"{r.formula:,.0f} B ({r.formula / r.hidden:.1f}·h) | {r.ratio:.4f} |")
    lines.append("")
    lines.append(
        f"Bytes kept for the backward pass per token per decoder layer at {SEQ_LEN} tokens, "
        f"measured with torch {v['torch']} and transformers {v['transformers']} (random weights, "
        f"bf16, train mode, CPU, saved-tensor hooks, {data['date'][:10]}; dropout masks counted "
        "as the bool a GPU keeps). GPU-kernel stand-in: torch's CPU flash kernel needs equal q/k "
        "and v head sizes, so DeepSeek's attention core is a stand-in keeping what the GPU "
        "memory-efficient kernel keeps. FlashAttention stand-in: SDPA set on Gemma 2 after "
        "building (transformers refuses it), soft-capping off. GPT-2 with attention dropout "
        "off: on a GPU the flash kernel drops inside and keeps only its RNG state. Not compared "
        "(SDPA's CPU math path, fp32 s×s scores no GPU kernel keeps): "
        + ", ".join(not_compared(data)) + ".")
    return "\n".join(lines)


if __name__ == "__main__":
    print(render())
