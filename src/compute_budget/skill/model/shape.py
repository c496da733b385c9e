"""The shape of a model as the memory formulas see it: layer sizes, MLP widths, experts.

Built three ways, in order of trust: from an :class:`~.architecture.Architecture` (a config or a
preset: exact), from a hidden size, layer and head count the user gives, or guessed from the
parameter count alone. Every formula downstream (activations, LoRA sizes, quantizable weights)
reads the shape, never a family name, so a new family only needs its config reader.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .architecture import Architecture, LatentAttention

__all__ = ["HEAD_DIM_GUESS", "ModelShape", "Projection", "ShapeOrigin", "guess_shape",
           "shape_from_architecture", "shape_given"]

HEAD_DIM_GUESS = 128
"""Head size assumed when the shape is guessed (GPT-3 and Llama families use 128)."""
ASPECT_RATIO_GUESS = 128
"""hidden / layers assumed when the shape is guessed (GPT-3 6.7B–175B: 4096/32 … 12288/96)."""
GATED_WIDTH_GUESS = 8 / 3
"""MLP width / hidden for a guessed gated (SwiGLU) MLP: 3·h·(8h/3) = 8h² weights, the same as a
plain 4h MLP (Shazeer 2020, "GLU Variants Improve Transformer"; Touvron et al. 2023, LLaMA)."""
WIDTH_ROUNDING = 256
"""Guessed MLP widths are rounded to a multiple of this (Llama rounds to 256)."""

GUESS_REFERENCE = "Brown et al. 2020, Table 2.1"
"""Where the guessed proportions come from (GPT-3's sizes)."""

ShapeOrigin = Literal["config", "given", "guessed"]
"""Where a shape comes from: a config or preset (exact); the layers, hidden size and heads the
user gave, with the Llama layout assumed for the rest (gated MLP of 8h/3, multi-head attention);
or guessed from N with GPT-3 proportions (N ≈ 12·L·h², h ≈ 128·L, head size 128) and a Llama
layer."""

Projection = tuple[str, int, int]
"""A linear layer of a decoder layer: (name, input features, output features)."""


class ModelShape(BaseModel):
    """What the memory formulas need to know about a decoder-only transformer."""

    model_config = ConfigDict(frozen=True)

    layers: int = Field(description="Decoder layers L.")
    hidden: int = Field(description="Hidden size h, in channels.")
    heads: int = Field(description="Query heads a.")
    kv_heads: int = Field(description="Key/value heads (GQA; equals heads for MHA).")
    head_dim: int = Field(description="Query/key channels per head.")
    v_head_dim: int = Field(description="Value channels per head.")
    intermediate: int = Field(description="Width of the dense MLP, in channels.")
    gated: bool = Field(description="Gated MLP (SwiGLU/GeGLU: 3 matrices) or plain (2).")
    experts: int = Field(default=0, description="Routed experts per MoE layer (0: dense).")
    experts_per_token: int = Field(default=0, description="Routed experts per token (top-k).")
    expert_intermediate: int = Field(default=0, description="Width of one routed expert's MLP.")
    shared_experts: int = Field(default=0, description="Experts every token uses per MoE layer.")
    shared_intermediate: int = Field(default=0, description="Width of one shared expert's MLP.")
    shared_expert_gate: bool = Field(default=False,
                                     description="A sigmoid gate on the shared expert's output.")
    moe_layers: int = Field(default=0, description="Layers whose MLP is a mixture of experts.")
    mla: LatentAttention | None = Field(default=None, description="Latent attention sizes.")
    vocab: int | None = Field(default=None, description="Vocabulary size V, when known.")
    dropout: float = Field(default=0.0, description="Hidden dropout probability in training.")
    origin: ShapeOrigin = Field(description="Where the shape comes from: config, given or guessed "
                                            "(see ShapeOrigin).")
    reference: str | None = Field(
        default=None,
        description="config: where the architecture comes from (a preset's reference, a config "
                    "path or model id); guessed: the source of the proportions; None if given.")
    guessed: bool = Field(default=False, description="True when guessed from N alone.")

    @property
    def dense_layers(self) -> int:
        """Layers with the dense MLP."""
        return self.layers - self.moe_layers

    def attention_projections(self) -> list[Projection]:
        """The attention's linear layers with their (input, output) sizes."""
        h, a = self.hidden, self.heads
        if self.mla is None:
            q, kv = a * self.head_dim, self.kv_heads * self.head_dim
            return [("q_proj", h, q), ("k_proj", h, kv), ("v_proj", h, kv), ("o_proj", q, h)]
        m = self.mla
        query: list[Projection] = (
            [("q_proj", h, a * m.qk_head_dim)] if m.q_lora_rank is None
            else [("q_a_proj", h, m.q_lora_rank), ("q_b_proj", m.q_lora_rank, a * m.qk_head_dim)])
        return [*query,
                ("kv_a_proj", h, m.kv_lora_rank + m.qk_rope_head_dim),
                ("kv_b_proj", m.kv_lora_rank, a * (m.qk_nope_head_dim + m.v_head_dim)),
                ("o_proj", a * m.v_head_dim, h)]

    def mlp_projections(self, width: int) -> list[Projection]:
        """An MLP's linear layers of hidden width ``width``."""
        h = self.hidden
        up: list[Projection] = ([("gate_proj", h, width), ("up_proj", h, width)] if self.gated
                                else [("up_proj", h, width)])
        return [*up, ("down_proj", width, h)]

    def linear_layers(self) -> list[tuple[Projection, int]]:
        """Every linear layer of the decoder with how many copies the model holds."""
        out = [(p, self.layers) for p in self.attention_projections()]
        out += [(p, self.dense_layers) for p in self.mlp_projections(self.intermediate)]
        if self.moe_layers:
            out += [(p, self.moe_layers * self.experts)
                    for p in self.mlp_projections(self.expert_intermediate)]
            if self.shared_experts:
                out += [(p, self.moe_layers * self.shared_experts)
                        for p in self.mlp_projections(self.shared_intermediate)]
        return [(p, n) for p, n in out if n]


def shape_from_architecture(arch: Architecture) -> ModelShape:
    """The exact shape of a config or preset."""
    return ModelShape(
        layers=arch.layers, hidden=arch.hidden, heads=arch.heads,
        kv_heads=arch.heads if arch.mla is not None else arch.kv_heads,
        head_dim=arch.mla.qk_head_dim if arch.mla is not None else arch.head_dim,
        v_head_dim=arch.mla.v_head_dim if arch.mla is not None else arch.head_dim,
        intermediate=arch.intermediate_size, gated=arch.gated_mlp,
        experts=arch.experts, experts_per_token=arch.experts_per_token,
        expert_intermediate=arch.expert_intermediate_size or 0,
        shared_experts=arch.shared_experts,
        shared_intermediate=(arch.shared_expert_intermediate_size
                             or arch.expert_intermediate_size or 0),
        shared_expert_gate=arch.shared_expert_gate,
        moe_layers=arch.moe_layers, mla=arch.mla, vocab=arch.vocab_size, dropout=arch.dropout,
        origin="config", reference=arch.source,
    )


def _round_width(width: float) -> int:
    return max(WIDTH_ROUNDING, round(width / WIDTH_ROUNDING) * WIDTH_ROUNDING)


def shape_given(layers: int, hidden: int, heads: int) -> ModelShape:
    """A shape from the layers, hidden size and heads the user gives; Llama layout otherwise
    (gated MLP of 8h/3, multi-head attention, no dropout)."""
    return ModelShape(
        layers=layers, hidden=hidden, heads=heads, kv_heads=heads, head_dim=hidden // heads,
        v_head_dim=hidden // heads, intermediate=_round_width(GATED_WIDTH_GUESS * hidden),
        gated=True, origin="given",
    )


def guess_shape(params: float) -> ModelShape:
    """Guess the shape from a parameter count alone.

    GPT-3 proportions for the size (Brown et al. 2020, Table 2.1): N ≈ 12·L·h², h = 128·L, head
    size 128, so L = (N / (12·128²))^(1/3). The layer layout is today's common one (Llama):
    a gated MLP of 8h/3 (the same 8h² weights as GPT-3's 4h MLP), multi-head attention, no
    dropout. Only a guess: give a config or preset for a real answer.
    """
    layers = max(1, round((params / (12 * ASPECT_RATIO_GUESS**2)) ** (1 / 3)))
    hidden = max(HEAD_DIM_GUESS, round(math.sqrt(params / (12 * layers)) / HEAD_DIM_GUESS)
                 * HEAD_DIM_GUESS)
    heads = hidden // HEAD_DIM_GUESS
    return ModelShape(
        layers=layers, hidden=hidden, heads=heads, kv_heads=heads, head_dim=HEAD_DIM_GUESS,
        v_head_dim=HEAD_DIM_GUESS, intermediate=_round_width(GATED_WIDTH_GUESS * hidden),
        gated=True, guessed=True, origin="guessed", reference=GUESS_REFERENCE,
    )
