"""The measured-versus-formula table of activation memory (README "Will it fit?").

Reads ``benchmarks/data/activation_memory.json`` (written by ``benchmarks/activation_memory.py``,
which needs torch and transformers) and compares each family's measured bytes per token per
layer with :func:`compute_budget.skill.memory.activations.layer_bytes_per_token` on the ``hf`` stack
for the same config. Needs neither torch nor transformers: run it with
``uv run python -m benchmarks.activation_table``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compute_budget import from_hf_config
from compute_budget.skill.memory.activations import layer_bytes_per_token
from compute_budget.skill.model.shape import shape_from_architecture

DATA = Path(__file__).parent / "data" / "activation_memory.json"
SEQ_LEN = 1024
EXCLUDED = {
    "deepseek_v2_lite": "CPU fallback: q/k and v head sizes differ, so SDPA ran its math path, "
                        "which keeps fp32 s×s scores no GPU kernel keeps",
    "gpt2_small": "CPU fallback: attention dropout sends SDPA to its math path (fp32 s×s "
                  "scores, masks)",
}
"""Families measured but not comparable: the CPU run kept tensors a GPU kernel would not."""


@dataclass(frozen=True)
class Row:
    """One family: measured and formula bytes per token per layer."""

    family: str
    checkpoint: str
    hidden: int
    measured: float
    formula: float

    @property
    def ratio(self) -> float:
        """Formula / measured."""
        return self.formula / self.measured


def load() -> dict[str, Any]:
    """The measurement file."""
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return data


def rows(data: dict[str, Any] | None = None) -> list[Row]:
    """Measured against formula for every comparable family, at SEQ_LEN tokens."""
    data = data or load()
    out = []
    for name, family in data["families"].items():
        if name in EXCLUDED:
            continue
        config = {**family["config_used"], "model_type": family["model_type"],
                  "num_hidden_layers": 2}
        shape = shape_from_architecture(from_hf_config(config))
        measured = next(r for r in family["results"] if r["seq_len"] == SEQ_LEN)
        c = layer_bytes_per_token(shape, "hf", moe=shape.moe_layers > 0, seq_len=SEQ_LEN)
        out.append(Row(family=name, checkpoint=family["checkpoint"], hidden=shape.hidden,
                       measured=measured["bytes_per_token_per_layer"],
                       formula=c.replicated + c.split + c.scores))
    return out


def render(data: dict[str, Any] | None = None) -> str:
    """The markdown table, with the versions measured."""
    data = data or load()
    v = data["versions"]
    lines = ["| shape of | hidden | measured | formula (hf) | formula / measured |",
             "|---|---|---|---|---|"]
    for r in rows(data):
        lines.append(f"| {r.checkpoint} | {r.hidden} | "
                     f"{r.measured:,.0f} B ({r.measured / r.hidden:.1f}·h) | "
                     f"{r.formula:,.0f} B ({r.formula / r.hidden:.1f}·h) | {r.ratio:.4f} |")
    lines.append("")
    lines.append(f"Bytes kept for the backward pass per token per decoder layer, measured with "
                 f"torch {v['torch']} and transformers {v['transformers']} (random weights, "
                 f"bf16, SDPA, train mode, CPU, saved-tensor hooks, {data['date'][:10]}). Not "
                 f"compared: " + "; ".join(f"{k} ({why})" for k, why in EXCLUDED.items()) + ".")
    return "\n".join(lines)


if __name__ == "__main__":
    print(render())
