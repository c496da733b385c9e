"""The architecture model: the shape of a decoder-only transformer, as pydantic models.

:class:`Architecture` holds everything a parameter count depends on (counted in
:mod:`.param_count`); :class:`LatentAttention` the sizes of DeepSeek's latent attention;
:class:`ParamBreakdown` the exact count by component; :class:`ConfigNote` a default filled in or
an assumption made, as a code the reply words. Read from a Hugging Face config by
:mod:`.hf_config`, named by :mod:`.presets`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import ConfigError
from .modeling import ModelingFacts

__all__ = [
    "Architecture",
    "AttentionBias",
    "ConfigNote",
    "ConfigNoteCode",
    "LatentAttention",
    "NormKind",
    "ParamBreakdown",
    "PositionEmbedding",
    "QkNorm",
]


PositionEmbedding = Literal["rotary", "learned", "none"]
"""How positions enter: rotary (RoPE, no parameters), a learned table, or none."""
NormKind = Literal["layernorm", "rmsnorm"]
"""LayerNorm (weight and bias per channel) or RMSNorm (weight only)."""
AttentionBias = Literal["none", "qkv", "all"]
"""Which attention projections have a bias: none (Llama), q/k/v only (Qwen2), all (GPT-2)."""
QkNorm = Literal["none", "head", "projection"]
"""Normalisation of queries and keys before attention: none (Llama); per head, head_dim weights
each for q and k (Qwen3, Gemma 3); over the whole projection, H·Q and G·Q weights (OLMo 2)."""


ConfigNoteCode = Literal[
    "family_default", "kv_heads_default", "head_dim_derived", "n_inner_default",
    "sparse_step_default", "moe_layer_freq_default", "tied_lm_head", "partial_window",
    "mtp_not_counted", "preset_assumption",
]
"""What a :class:`ConfigNote` says. The config left ``field`` out (``missing``) and it took
``value``: family_default, the default of the configuration class ``reference``;
kv_heads_default, num_attention_heads (``reference``'s default: multi-head attention);
head_dim_derived, hidden_size / num_attention_heads; n_inner_default, 4 × n_embd (``reference``'s
default); sparse_step_default, 1 (``reference``'s default: every layer); moe_layer_freq_default,
1 (every layer after the dense ones); tied_lm_head, true (``reference`` ties the LM head to the
token embedding). Assumptions of the count: partial_window, a sliding window in some layers only,
so full attention is counted in every layer (an upper bound on attention FLOPs);
mtp_not_counted, ``field`` = ``value`` multi-token-prediction layers, not part of the main model,
not counted (``reference`` gives their size); preset_assumption, an assumption the preset's data
states (``reference``, with its source)."""


class ConfigNote(BaseModel):
    """A value the config left out and a documented default filled in, or an assumption of the
    count: a code with its field, value and reference; the reply words it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    code: ConfigNoteCode = Field(description="What the note says (see ConfigNoteCode).")
    field: str | None = Field(
        default=None, description="The config.json key it is about; None for a preset's "
                                  "assumption.")
    value: bool | int | float | None = Field(
        default=None, description="The value used for it; None when the note has none.")
    missing: Literal["absent", "null"] | None = Field(
        default=None, description="How the config left the field out (absent, or null); None "
                                  "for an assumption.")
    reference: str | None = Field(
        default=None,
        description="Whose default or figure it is: a transformers configuration class "
                    "(LlamaConfig), a model family (GPT-2) or a report; for a "
                    "preset_assumption, the preset data's own sentence, naming its source.")


class LatentAttention(BaseModel):
    """DeepSeek multi-head latent attention (MLA) sizes, as named in ``config.json``.

    DeepSeek-AI 2024, "DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts
    Language Model", Sec. 2.1.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    q_lora_rank: int | None = Field(
        default=None, gt=0,
        description="Rank of the low-rank query projection (d → r_q → heads); None: a full "
                    "d × heads·(Q_nope + Q_rope) query projection (DeepSeek-V2-Lite).",
    )
    kv_lora_rank: int = Field(gt=0, description="Rank r_kv of the compressed key-value latent.")
    qk_nope_head_dim: int = Field(gt=0, description="Per-head query/key size without RoPE.")
    qk_rope_head_dim: int = Field(gt=0, description="Per-head query/key size carrying RoPE.")
    v_head_dim: int = Field(gt=0, description="Per-head value size.")

    @property
    def qk_head_dim(self) -> int:
        """Query/key size per head: Q_nope + Q_rope."""
        return self.qk_nope_head_dim + self.qk_rope_head_dim


def _default_kv_heads(data: dict[str, Any]) -> Any:
    return data.get("heads")


def _default_head_dim(data: dict[str, Any]) -> Any:
    hidden, heads = data.get("hidden"), data.get("heads")
    if isinstance(hidden, int) and isinstance(heads, int) and heads > 0:
        return hidden // heads
    return None


class Architecture(BaseModel):
    """The shape of a decoder-only transformer: everything its parameter count depends on.

    Fields not given default to the Llama layout (gated MLP, untied embeddings, rotary positions,
    no biases, RMSNorm, two norms per layer, no query/key norm) and to a dense model;
    ``kv_heads`` defaults to ``heads`` (multi-head attention) and ``head_dim`` to
    ``hidden / heads``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(default=None, description="Model name, when known.")
    source: str = Field(
        description="Where the numbers come from: a preset and its reference, or a config path."
    )
    layers: int = Field(gt=0, description="Decoder layers (transformer blocks) L.")
    hidden: int = Field(gt=0, description="Hidden size d (model width), in channels.")
    heads: int = Field(gt=0, description="Query attention heads H per layer.")
    kv_heads: int = Field(
        default_factory=_default_kv_heads, gt=0,
        description="Key/value heads G per layer (GQA; 1 is MQA); defaults to heads (MHA).",
    )
    head_dim: int = Field(
        default_factory=_default_head_dim, gt=0,
        description="Channels per attention head Q; defaults to hidden / heads. For MLA the "
                    "query/key size Q_nope + Q_rope.",
    )
    intermediate_size: int = Field(
        gt=0, description="Hidden width f of the dense MLP (FFN size), in channels."
    )
    gated_mlp: bool = Field(
        default=True,
        description="True: gated MLP with 3 matrices (SwiGLU: gate, up, down); False: plain MLP "
                    "with 2 (up, down).",
    )
    vocab_size: int = Field(gt=0, description="Vocabulary size V, in tokens.")
    tied_embeddings: bool = Field(
        default=False,
        description="True when the LM head reuses the input embedding matrix (no separate V·d).",
    )
    position_embedding: PositionEmbedding = Field(
        default="rotary",
        description="rotary (RoPE, no parameters), learned (a max_positions × d table) or none.",
    )
    max_positions: int | None = Field(
        default=None, gt=0,
        description="Maximum sequence length in tokens; the size of the learned position table "
                    "(required when position_embedding is 'learned').",
    )
    attention_bias: AttentionBias = Field(
        default="none",
        description="Which attention projections have biases: none, qkv (q, k, v only) or all "
                    "(q, k, v and o).",
    )
    mlp_bias: bool = Field(
        default=False, description="Whether MLP (and expert) matrices have biases."
    )
    norm: NormKind = Field(
        default="rmsnorm",
        description="layernorm (weight + bias per channel) or rmsnorm (weight only).",
    )
    layer_norms: int = Field(
        default=2, ge=1,
        description="Normalisation layers of width d in each decoder layer: 2 for Llama (before "
                    "attention and MLP) and OLMo 2 (after each), 4 for Gemma 2 and 3 (before and "
                    "after each).",
    )
    qk_norm: QkNorm = Field(
        default="none",
        description="Query/key normalisation: none; head (head_dim weights for q and for k, "
                    "Qwen3, Gemma 3); projection (H·Q + G·Q weights, OLMo 2).",
    )
    parallel_residual: bool = Field(
        default=False,
        description="Attention and MLP read the same input (GPT-NeoX use_parallel_residual); "
                    "changes neither parameters nor FLOPs.",
    )
    dropout: float = Field(
        default=0.0, ge=0, lt=1,
        description="Hidden (residual) dropout probability in training; 0 for Llama-style "
                    "models. Dropout keeps a mask per element for the backward pass.",
    )
    sliding_window: int | None = Field(
        default=None, gt=0,
        description="Tokens each query attends to at most (sliding-window attention in every "
                    "layer, as Mistral-7B-v0.1); None: full causal attention.",
    )
    mla: LatentAttention | None = Field(
        default=None, description="Multi-head latent attention sizes (DeepSeek-V2/V3), or None."
    )
    experts: int = Field(
        default=0, ge=0, description="Routed experts per MoE layer E; 0 for a dense model."
    )
    experts_per_token: int = Field(
        default=0, ge=0, description="Routed experts each token uses (top-k); 0 for dense."
    )
    shared_experts: int = Field(
        default=0, ge=0,
        description="Experts every token uses in each MoE layer (DeepSeek n_shared_experts, "
                    "Qwen2-MoE's shared expert).",
    )
    expert_intermediate_size: int | None = Field(
        default=None, gt=0,
        description="Hidden width of one routed expert's MLP (moe_intermediate_size), channels.",
    )
    shared_expert_intermediate_size: int | None = Field(
        default=None, gt=0,
        description="Hidden width of one shared expert's MLP; defaults to "
                    "expert_intermediate_size.",
    )
    shared_expert_gate: bool = Field(
        default=False,
        description="A d × 1 sigmoid gate on the shared expert output (Qwen2-MoE).",
    )
    dense_layers: int = Field(
        default=0, ge=0,
        description="Layers of an MoE model that keep a dense MLP of intermediate_size "
                    "(DeepSeek first_k_dense_replace); the rest are MoE layers.",
    )
    modeling: ModelingFacts = Field(
        default_factory=ModelingFacts,
        description="What the family's Hugging Face modeling code keeps for the backward pass "
                    "beyond the sizes (norm dtype, fused QKV, activation, default attention, "
                    "soft-capping, local layers); the Llama layout's by default.")
    defaults_used: tuple[ConfigNote, ...] = Field(
        default=(),
        description="Every value that was absent from the source and filled with a documented "
                    "default, and every assumption made, as codes (see ConfigNote).",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Architecture:
        if "head_dim" not in self.model_fields_set and self.mla is None and (
            self.hidden % self.heads
        ):
            raise ConfigError(
                "heads", self.heads,
                f"a divisor of hidden ({self.hidden}), or give head_dim explicitly",
            )
        if self.heads % self.kv_heads:
            raise ConfigError("kv_heads", self.kv_heads, f"a divisor of heads ({self.heads})")
        if self.position_embedding == "learned" and self.max_positions is None:
            raise ConfigError(
                "max_positions", None,
                "the number of learned positions (required when position_embedding is 'learned')",
            )
        if self.qk_norm != "none" and self.mla is not None:
            raise ConfigError("qk_norm", self.qk_norm, "'none' with latent attention (mla)")
        self._check_moe()
        return self

    def _check_moe(self) -> None:
        if self.experts == 0:
            moe_only = {
                "experts_per_token": self.experts_per_token,
                "shared_experts": self.shared_experts,
                "dense_layers": self.dense_layers,
                "expert_intermediate_size": self.expert_intermediate_size,
                "shared_expert_intermediate_size": self.shared_expert_intermediate_size,
                "shared_expert_gate": self.shared_expert_gate,
            }
            for field, value in moe_only.items():
                if value not in (0, None, False):
                    raise ConfigError(field, value, "unset for a dense model (experts = 0)")
            return
        if not 1 <= self.experts_per_token <= self.experts:
            raise ConfigError(
                "experts_per_token", self.experts_per_token,
                f"between 1 and experts ({self.experts})",
            )
        if self.expert_intermediate_size is None:
            raise ConfigError(
                "expert_intermediate_size", None,
                "the hidden width of one expert (required when experts > 0)",
            )
        if self.dense_layers >= self.layers:
            raise ConfigError(
                "dense_layers", self.dense_layers,
                f"fewer than layers ({self.layers}) when experts > 0",
            )
        if self.shared_experts == 0 and (
            self.shared_expert_gate or self.shared_expert_intermediate_size is not None
        ):
            raise ConfigError(
                "shared_experts", 0, "at least 1 when a shared expert size or gate is given"
            )

    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is a mixture of experts (0 for a dense model)."""
        return self.layers - self.dense_layers if self.experts else 0

    @property
    def dense_mlp_layers(self) -> int:
        """Layers whose MLP is the dense one of ``intermediate_size``."""
        return self.layers - self.moe_layers

    @property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts model."""
        return self.experts > 0


class ParamBreakdown(BaseModel):
    """Exact parameter counts by component (integers, in parameters)."""

    model_config = ConfigDict(frozen=True)

    embedding: int = Field(description="Token embedding V·d.")
    position_embedding: int = Field(description="Learned position table P·d; 0 for rotary/none.")
    attention: int = Field(description="Attention projections and their biases, all layers.")
    dense_mlp: int = Field(description="Dense MLPs (and biases) of the dense layers.")
    routed_experts: int = Field(description="All routed experts of all MoE layers.")
    shared_experts: int = Field(description="Shared experts of all MoE layers.")
    router: int = Field(description="Router weights E·d per MoE layer (+ shared-expert gate).")
    norms: int = Field(description="Normalisation weights (and LayerNorm biases), all layers.")
    lm_head: int = Field(description="Output projection V·d; 0 when tied to the embedding.")
    total: int = Field(description="All parameters.")
    active: int = Field(
        description="Parameters one token uses: all but the routed experts it is not sent to "
                    "(embedding and LM head included; equal to total for a dense model)."
    )
    non_embedding: int = Field(
        description="total minus token embedding, position table and LM head (Kaplan et al. "
                    "2020's N)."
    )
    active_non_embedding: int = Field(description="active minus embedding, positions, LM head.")
    active_matmul_weights: int = Field(
        description="Weights of the matrix multiplies one token goes through in the decoder "
                    "layers (attention projections, dense MLP, its routed and shared experts, "
                    "router); no biases, norms, embeddings or LM head. 2 FLOPs each forward."
    )
