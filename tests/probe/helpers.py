"""Small models of three families, and the direct measurement of several depths side by side."""

from __future__ import annotations

import time
from typing import Any

WIDTH = {"hidden_size": 512, "num_attention_heads": 8, "num_key_value_heads": 2,
         "head_dim": 64, "vocab_size": 2048, "max_position_embeddings": 4096,
         "num_hidden_layers": 8}
FAMILIES: dict[str, dict[str, Any]] = {
    "dense_gqa": {"model_type": "llama", **WIDTH, "intermediate_size": 1536},
    "moe": {"model_type": "qwen3_moe", **WIDTH, "moe_intermediate_size": 384,
            "num_experts": 8, "num_experts_per_tok": 2},
    "gemma": {"model_type": "gemma3_text", **WIDTH, "intermediate_size": 1536},
}
"""Full width 512, GQA 8:2 heads, 8 layers, a 2k vocabulary: the decoder layers take most of
a step (the embedding and LM head little), so a layer's time is not lost in the noise."""
SEQ_LEN = 512
PROBED = (1, 2)
DIRECT = (4, 8)


def direct_peak(depth: Any) -> int:
    """A measured depth's peak: its highest phase peak plus the allocator's reserve."""
    return max(depth.peaks.values()) + depth.reserve_bytes


def side_by_side(config: dict[str, Any], depths: tuple[int, ...], rounds: int) -> dict[int, Any]:
    """Measure ``config`` at each of ``depths`` as the probe measures its two on a CPU
    (:func:`compute_budget.probe.measure.measure_together`: every depth built, warmed up and
    metered, then ``rounds`` rounds of one timed step of each), the steps timed by the
    process's CPU time (on one thread, the wall time of a core no other process shares)."""
    import torch

    from compute_budget.probe.allocator import kept_freed_memory
    from compute_budget.probe.build import full_config
    from compute_budget.probe.measure import Setup, measure_together

    setup = Setup(seq_len=SEQ_LEN, micro_batch=1, precision="bf16", recompute="none",
                  lora_rank=None, steps=rounds, attn_implementation=None,
                  shallowest=min(depths), clock=time.process_time)
    with kept_freed_memory("cpu"):
        return measure_together(full_config(config), depths, setup, torch.device("cpu"))
