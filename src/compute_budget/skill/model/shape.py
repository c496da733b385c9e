"""The shape of a model as the memory formulas see it: layer sizes, MLP widths, experts.

Built three ways, in order of trust: from an :class:`~.architecture.Architecture` (a config or a
preset: exact), from a hidden size, layer and head count the user gives, or guessed from the
parameter count alone. Every formula downstream (activations, LoRA sizes, quantizable weights)
reads the shape, never a family name, so a new family only needs its config reader.

A mixture of experts given by its counts alone (``params`` N and ``active_params`` A < N, no
config) gets its experts from :func:`moe_by_counts`: every layer's MLP becomes E routed experts
of which a token uses k, each expert of P_e weights, such that the experts a token skips hold
exactly what the active count leaves out::

    N − A = (E − k) · P_e · L        routed experts in all   R = E · P_e · L = (N − A) · E / (E − k)

so expert parallelism shards R and the rest, N − R, stays on every expert-parallel rank. E and k
are the user's when given; else k = 8 and E the power of two at which the k experts a token uses
hold the dense MLP's share of the active parameters (module constants below, with sources).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .architecture import Architecture, LatentAttention, NormKind, QkNorm
from .modeling import ModelingFacts
from .param_count import counts_of

__all__ = ["ACTIVE_EXPERT_SHARE", "DEFAULT_EXPERTS_PER_TOKEN", "HEAD_DIM_GUESS", "ExpertsOrigin",
           "ModelShape", "Projection", "ShapeOrigin", "default_experts",
           "default_experts_per_token", "guess_shape", "moe_by_counts", "moe_fits_counts",
           "routed_params", "shape_count_range", "shape_from_architecture", "shape_given"]

HEAD_DIM_GUESS = 128
VOCAB_GUESS = 32_000
"""Vocabulary assumed when the shape is guessed: Llama 2's and Mistral's (Touvron et al. 2023),
at the low end of today's (GPT-2 50,257; Llama 3 128,256; Qwen 151,936), so the fp32 logits
the loss keeps are counted rather than left out, and not overstated."""
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

ExpertsOrigin = Literal["config", "given", "default", "derived"]
"""Where a mixture of experts' expert count or top-k comes from: its config or preset; the user;
the documented default (top-k: :data:`DEFAULT_EXPERTS_PER_TOKEN`); or derived from params and
active_params with the other one (:func:`default_experts`, :func:`default_experts_per_token`)."""

DEFAULT_EXPERTS_PER_TOKEN = 8
"""Routed experts per token assumed for a mixture of experts given by its counts: the top-8 of
the fine-grained MoEs of 2024-25 (DeepSeek-V3, DeepSeek-AI 2024, Sec. 2.1 and 4.2: 256 routed
experts, top-8; Qwen3-30B-A3B and Qwen3-235B-A22B, Yang et al. 2025, Table 2: 128 experts, top-8;
OLMoE-1B-7B, Muennighoff et al. 2024: 64 experts, top-8)."""
ACTIVE_EXPERT_SHARE = 2 / 3
"""Share of the active parameters the k routed experts a token uses hold, when the expert count
is derived: the dense MLP's 8h² of a layer's 12h² (GPT-3 proportions, as :func:`guess_shape`).
Fine-grained MoEs size their active experts like the dense MLP they replace (Krajewski et al.
2024, "Scaling Laws for Fine-Grained Mixture of Experts", granularity; DeepSeek-V3: 8 × 2048 + a
shared 2048 ≈ 8h/3 at h = 7168). With it, DeepSeek-V3 (671B, 37B active) and Qwen3-30B-A3B and
-235B-A22B get their real 256 and 128 experts."""

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
    experts_origin: ExpertsOrigin | None = Field(
        default=None, description="Where the expert count comes from (ExpertsOrigin); None if "
                                  "dense.")
    experts_per_token_origin: ExpertsOrigin | None = Field(
        default=None, description="Where the top-k comes from (ExpertsOrigin); None if dense.")
    mla: LatentAttention | None = Field(default=None, description="Latent attention sizes.")
    vocab: int | None = Field(default=None, description="Vocabulary size V, when known.")
    dropout: float = Field(default=0.0, description="Hidden dropout probability in training.")
    norm: NormKind = Field(default="rmsnorm", description="layernorm or rmsnorm.")
    layer_norms: int = Field(default=2, description="Norms of width h per layer (2; Gemma: 4).")
    shared_norm_input: bool = Field(
        default=False, description="The layer's norms read one input (GPT-NeoX's parallel "
                                   "residual).")
    qk_norm: QkNorm = Field(default="none", description="Query/key norm: none, head, projection.")
    rotary: bool = Field(default=True, description="Rotary positions: the attention keeps "
                                                   "rotated copies of Q and K.")
    sliding_window: int | None = Field(default=None,
                                       description="Sliding window of the layers with one.")
    sliding_layers: int = Field(default=0, description="Layers with the sliding window.")
    modeling: ModelingFacts = Field(
        default_factory=ModelingFacts,
        description="What the family's Hugging Face modeling code keeps beyond the sizes.")
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
        norm=arch.norm, layer_norms=arch.layer_norms, shared_norm_input=arch.parallel_residual,
        qk_norm=arch.qk_norm, rotary=arch.position_embedding == "rotary",
        sliding_window=arch.sliding_window or arch.modeling.local_window,
        sliding_layers=arch.layers if arch.sliding_window else arch.modeling.local_layers,
        modeling=arch.modeling, origin="config", reference=arch.source,
        experts_origin="config" if arch.experts else None,
        experts_per_token_origin="config" if arch.experts else None,
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


WIDEST_MLP = 8
"""The widest MLP of a model by its layers, hidden size and heads, as a multiple of hidden: the
widest of the presets, gemma-2-27b's 36,864 = 8 × 4,608 (google/gemma-2-27b config.json)."""
LARGEST_VOCAB = 262_144
"""The largest vocabulary of the presets: gemma-3-1b's (google/gemma-3-1b-pt config.json)."""


def shape_count_range(layers: int, hidden: int, heads: int) -> tuple[float, float]:
    """The parameters a token uses in a model of this shape, as :func:`.param_count.count_params`
    counts them: at least those of the Llama layout :func:`shape_given` assumes (vocabulary
    :data:`VOCAB_GUESS`), at most with a gated MLP of :data:`WIDEST_MLP` × hidden and untied
    embeddings of :data:`LARGEST_VOCAB`; what the shape leaves open (MLP width, vocabulary,
    grouped key-value heads) puts every preset's count within 25% of this range."""
    def count(width: int, vocab: int) -> float:
        return float(counts_of(Architecture(source="layers, hidden and heads", layers=layers,
                                            hidden=hidden, heads=heads,
                                            intermediate_size=width, vocab_size=vocab)).total)

    given = shape_given(layers, hidden, heads)
    return count(given.intermediate, VOCAB_GUESS), count(WIDEST_MLP * hidden, LARGEST_VOCAB)


def guess_shape(params: float) -> ModelShape:
    """Guess the shape from a parameter count alone.

    GPT-3 proportions for the size (Brown et al. 2020, Table 2.1): N ≈ 12·L·h², h = 128·L, head
    size 128, so L = (N / (12·128²))^(1/3). The layer layout is today's common one (Llama):
    a gated MLP of 8h/3 (the same 8h² weights as GPT-3's 4h MLP), multi-head attention, no
    dropout, a vocabulary of :data:`VOCAB_GUESS`. Only a guess: give a config or preset for a
    real answer.
    """
    layers = max(1, round((params / (12 * ASPECT_RATIO_GUESS**2)) ** (1 / 3)))
    hidden = max(HEAD_DIM_GUESS, round(math.sqrt(params / (12 * layers)) / HEAD_DIM_GUESS)
                 * HEAD_DIM_GUESS)
    heads = hidden // HEAD_DIM_GUESS
    return ModelShape(
        layers=layers, hidden=hidden, heads=heads, kv_heads=heads, head_dim=HEAD_DIM_GUESS,
        v_head_dim=HEAD_DIM_GUESS, intermediate=_round_width(GATED_WIDTH_GUESS * hidden),
        gated=True, guessed=True, origin="guessed", reference=GUESS_REFERENCE,
        vocab=VOCAB_GUESS,
    )


# --- a mixture of experts given by its counts ---------------------------------------------

def routed_params(total: float, active: float, experts: int, experts_per_token: int) -> float:
    """R = (N − A)·E/(E − k): every routed expert's weights, when the E − k experts a token
    skips hold the N − A parameters it does not use (module docstring)."""
    return (total - active) * experts / (experts - experts_per_token)


def moe_fits_counts(total: float, active: float, experts: int, experts_per_token: int) -> bool:
    """Whether E experts of which k are active can hold N − A inactive parameters and leave
    some for the rest of the model (attention, embeddings): k < E and k·N < E·A."""
    return experts_per_token < experts and experts_per_token * total < experts * active


def _ideal_ratio(total: float, active: float) -> float:
    """E/k at which the k active experts hold ACTIVE_EXPERT_SHARE of the active parameters:
    (N − A)/(E − k) · k = s·A, so E/k = 1 + (N − A)/(s·A)."""
    return 1 + (total - active) / (ACTIVE_EXPERT_SHARE * active)


def default_experts(total: float, active: float, experts_per_token: int) -> int:
    """The expert count for k = ``experts_per_token``: the power of two at or above
    k·(1 + (N − A)/(s·A)), s = ACTIVE_EXPERT_SHARE (rounding up keeps the k active experts
    within s of the active parameters, so the rest of the model is never empty; published
    MoEs use powers of two: 8, 16, 64, 128, 256). Always more than k, so that some experts are
    skipped even when N is barely above A."""
    ideal = experts_per_token * _ideal_ratio(total, active) - 1e-9
    return 1 << math.ceil(math.log2(max(ideal, experts_per_token + 1)))


def default_experts_per_token(total: float, active: float, experts: int) -> int:
    """The top-k for E = ``experts``: E·A/(A + (N − A)/s) rounded, at least 1, and below
    E·A/N so that the rest of the model keeps some parameters (0 when even top-1 cannot)."""
    k = max(1, round(experts / _ideal_ratio(total, active)))
    while k > 0 and not moe_fits_counts(total, active, experts, k):
        k -= 1
    return k


def moe_by_counts(shape: ModelShape, total: float, active: float, experts: int,
                  experts_per_token: int, origins: tuple[ExpertsOrigin, ExpertsOrigin]
                  ) -> ModelShape:
    """``shape`` (guessed from A, or given) with every layer's MLP made E routed experts, top-k,
    each of width (N − A)/((E − k)·L·m·h) for an MLP of m matrices, so that the routed experts
    hold :func:`routed_params` (module docstring). ``origins``: of E and of k."""
    matrices = len(shape.mlp_projections(1))
    width = (total - active) / ((experts - experts_per_token) * shape.layers * matrices
                                * shape.hidden)
    return shape.model_copy(update={
        "experts": experts, "experts_per_token": experts_per_token,
        "expert_intermediate": max(1, round(width)), "moe_layers": shape.layers,
        "experts_origin": origins[0], "experts_per_token_origin": origins[1]})
