"""Transformer architectures: the shape of a model, where it came from, and its exact size.

An :class:`Architecture` is built three ways: by hand, from a preset (:func:`get_preset`) or from a
Hugging Face ``config.json`` (:func:`from_hf_config`, :func:`load_config`). Whatever a config
leaves out and is filled with the family's documented default is listed in ``defaults_used``, so
a guess is never shown as a fact.

Parameters per decoder layer, hidden size d, query heads H, KV heads G, head size Q, FFN size f
(the layout of the Hugging Face modeling code of each family)::

    attention   d·H·Q + 2·d·G·Q + H·Q·d         q, k, v and o projections (+ biases if any)
    MLA         d·r_q + r_q·H·(Q_nope + Q_rope)  DeepSeek latent attention: low-rank q
                + d·(r_kv + Q_rope)              compressed kv and the shared rotary key
                + r_kv·H·(Q_nope + Q_v)          kv up-projection
                + H·Q_v·d                        o projection
    MLP         3·d·f (gated, SwiGLU) or 2·d·f   (+ biases if any)
    MoE layer   E routed experts + S shared experts + router E·d (+ Qwen2-MoE's d·1 gate)
    norms       2 per layer (+ MLA's two latent norms) and 1 final; d weights each for RMSNorm,
                d weights + d biases for LayerNorm

plus the token embedding V·d, a learned position table P·d (GPT-2/3) and an LM head V·d unless
tied to the embedding. DeepSeek-V3's ``e_score_correction_bias`` is a buffer that no gradient
trains (a buffer in the Hugging Face code) and is not counted; neither is its multi-token
prediction module (DeepSeek-AI 2024, "DeepSeek-V3 Technical Report": 671B main model + 14B MTP).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import stat
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .errors import ConfigError, InputError

__all__ = [
    "PRESETS",
    "SUPPORTED_MODEL_TYPES",
    "Architecture",
    "AttentionBias",
    "LatentAttention",
    "NormKind",
    "ParamBreakdown",
    "PositionEmbedding",
    "check_tensor_parallel",
    "count_params",
    "from_hf_config",
    "get_preset",
    "list_presets",
    "load_config",
]

MAX_CONFIG_BYTES = 1_000_000
"""A config.json is a few kB; a file or inline object larger than this is not one."""
MAX_CONFIG_DEPTH = 64
"""A config.json nests two or three levels; deeper JSON is refused before it is parsed."""

PositionEmbedding = Literal["rotary", "learned", "none"]
"""How positions enter: rotary (RoPE, no parameters), a learned table, or none."""
NormKind = Literal["layernorm", "rmsnorm"]
"""LayerNorm (weight and bias per channel) or RMSNorm (weight only)."""
AttentionBias = Literal["none", "qkv", "all"]
"""Which attention projections have a bias: none (Llama), q/k/v only (Qwen2), all (GPT-2)."""


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
    no biases, RMSNorm) and to a dense model; ``kv_heads`` defaults to ``heads`` (multi-head
    attention) and ``head_dim`` to ``hidden / heads``.
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
    defaults_used: tuple[str, ...] = Field(
        default=(),
        description="Every value that was absent from the source and filled with a documented "
                    "default, or an assumption made, one sentence each.",
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


def _norm_params(arch: Architecture, width: int) -> int:
    return width * (2 if arch.norm == "layernorm" else 1)


def _attention_weights(arch: Architecture) -> int:
    """Matrix weights of one layer's attention."""
    d, heads = arch.hidden, arch.heads
    if arch.mla is None:
        q = heads * arch.head_dim
        kv = arch.kv_heads * arch.head_dim
        return d * q + 2 * d * kv + q * d
    m = arch.mla
    if m.q_lora_rank is None:
        query = d * heads * m.qk_head_dim
    else:
        query = d * m.q_lora_rank + m.q_lora_rank * heads * m.qk_head_dim
    key_value = (
        d * (m.kv_lora_rank + m.qk_rope_head_dim)
        + m.kv_lora_rank * heads * (m.qk_nope_head_dim + m.v_head_dim)
    )
    return query + key_value + heads * m.v_head_dim * d


def _attention_biases(arch: Architecture) -> int:
    """Bias parameters of one layer's attention."""
    if arch.attention_bias == "none":
        return 0
    out = arch.hidden if arch.attention_bias == "all" else 0
    if arch.mla is None:
        return (arch.heads + 2 * arch.kv_heads) * arch.head_dim + out
    # DeepSeek: q_a_proj, kv_a_proj_with_mqa and o_proj take attention_bias; the up-projections
    # never have a bias.
    m = arch.mla
    q_bias = m.q_lora_rank or 0
    return q_bias + m.kv_lora_rank + m.qk_rope_head_dim + out


def _attention_norms(arch: Architecture) -> int:
    """MLA's norms on the query and key-value latents (0 for standard attention)."""
    if arch.mla is None:
        return 0
    return _norm_params(arch, (arch.mla.q_lora_rank or 0) + arch.mla.kv_lora_rank)


def _mlp_weights(arch: Architecture, width: int) -> int:
    return (3 if arch.gated_mlp else 2) * arch.hidden * width


def _mlp_params(arch: Architecture, width: int) -> int:
    biases = ((2 if arch.gated_mlp else 1) * width + arch.hidden) if arch.mlp_bias else 0
    return _mlp_weights(arch, width) + biases


def _expert_width(arch: Architecture) -> int:
    return arch.expert_intermediate_size or 0


def _shared_width(arch: Architecture) -> int:
    return arch.shared_expert_intermediate_size or _expert_width(arch)


def _router_weights(arch: Architecture) -> int:
    return arch.experts * arch.hidden + (arch.hidden if arch.shared_expert_gate else 0)


def count_params(arch: Architecture) -> ParamBreakdown:
    """Exact parameter count of ``arch`` by component (see the module docstring for the layout).

    Matches ``sum(p.numel() for p in model.parameters())`` of the Hugging Face implementation
    for the families :func:`from_hf_config` reads.
    """
    d = arch.hidden
    embedding = arch.vocab_size * d
    position = (arch.max_positions or 0) * d if arch.position_embedding == "learned" else 0
    lm_head = 0 if arch.tied_embeddings else arch.vocab_size * d
    attention = arch.layers * (_attention_weights(arch) + _attention_biases(arch))
    dense_mlp = arch.dense_mlp_layers * _mlp_params(arch, arch.intermediate_size)
    expert = _mlp_params(arch, _expert_width(arch))
    routed = arch.moe_layers * arch.experts * expert
    shared = arch.moe_layers * arch.shared_experts * _mlp_params(arch, _shared_width(arch))
    router = arch.moe_layers * _router_weights(arch)
    norms = (
        arch.layers * (2 * _norm_params(arch, d) + _attention_norms(arch))
        + _norm_params(arch, d)  # final norm
    )
    total = (embedding + position + attention + dense_mlp + routed + shared + router + norms
             + lm_head)
    idle_experts = arch.moe_layers * (arch.experts - arch.experts_per_token) * expert
    active = total - idle_experts
    embeddings = embedding + position + lm_head
    matmul = (
        arch.layers * _attention_weights(arch)
        + arch.dense_mlp_layers * _mlp_weights(arch, arch.intermediate_size)
        + arch.moe_layers * (
            arch.experts_per_token * _mlp_weights(arch, _expert_width(arch))
            + arch.shared_experts * _mlp_weights(arch, _shared_width(arch))
            + _router_weights(arch)
        )
    )
    return ParamBreakdown(
        embedding=embedding,
        position_embedding=position,
        attention=attention,
        dense_mlp=dense_mlp,
        routed_experts=routed,
        shared_experts=shared,
        router=router,
        norms=norms,
        lm_head=lm_head,
        total=total,
        active=active,
        non_embedding=total - embeddings,
        active_non_embedding=active - embeddings,
        active_matmul_weights=matmul,
    )


def check_tensor_parallel(arch: Architecture, tp: int) -> None:
    """Raise :class:`ConfigError` naming ``tp`` unless it splits the attention heads evenly.

    Megatron-style tensor parallelism gives each rank heads / tp query heads and kv_heads / tp
    key-value heads (Shoeybi et al. 2019, "Megatron-LM", Sec. 3), so tp must divide both.
    """
    if isinstance(tp, bool) or not isinstance(tp, int) or tp < 1:
        raise ConfigError("tp", tp, "a whole number of at least 1")
    if arch.heads % tp:
        raise ConfigError("tp", tp, f"a divisor of the attention heads ({arch.heads})")
    if arch.mla is None and arch.kv_heads % tp:
        raise ConfigError("tp", tp, f"a divisor of the key-value heads ({arch.kv_heads})")


# --------------------------------------------------------------------------------------------
# Hugging Face config.json
# --------------------------------------------------------------------------------------------

_LLAMA_LIKE = ("llama", "mistral", "mixtral", "qwen2", "qwen2_moe")
_DEEPSEEK = ("deepseek_v2", "deepseek_v3")
SUPPORTED_MODEL_TYPES = ("gpt2", "gpt_neox", *_LLAMA_LIKE, *_DEEPSEEK)
_MOE_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_intermediate_size")


class _Reader:
    """Reads fields of one config, recording every default it fills in."""

    def __init__(self, config: Mapping[str, object]) -> None:
        self.config = config
        self.notes: list[str] = []

    def has(self, key: str) -> bool:
        return key in self.config and self.config[key] is not None

    def required(self, key: str, minimum: int = 1) -> int:
        """A whole number of at least ``minimum`` that the config must give."""
        if key not in self.config:
            model_type = self.config.get("model_type", "this model type")
            raise ConfigError(key, None,
                              f"a whole number that a {model_type} config.json must give "
                              f"(at least {minimum}); no default is guessed")
        return self._whole(key, self.config[key], minimum)

    def optional(self, key: str, default: int, note: str) -> int:
        """A positive whole number, or ``default`` (recorded with ``note``) when absent/null."""
        value = self.config.get(key)
        if value is None:
            self.notes.append(f"{key} {'null' if key in self.config else 'absent'}: {note}")
            return default
        return self._whole(key, value, 1)

    def nullable(self, key: str) -> int | None:
        """A key that must be present but may be null (null has a meaning of its own)."""
        if key not in self.config:
            raise ConfigError(key, None, "required in the config (null allowed) but missing")
        value = self.config[key]
        return None if value is None else self._whole(key, value, 0)

    def flag(self, key: str, default: bool, note: str) -> bool:
        """A boolean, or ``default`` (recorded with ``note``) when absent or null."""
        value = self.config.get(key)
        if value is None:
            state = "null" if key in self.config else "absent"
            self.notes.append(f"{key} {state}: {str(default).lower()} ({note})")
            return default
        if not isinstance(value, bool):
            raise ConfigError(key, value, "true or false")
        return value

    def probability(self, key: str, default: float, note: str) -> float:
        """A probability in [0, 1), or ``default`` (recorded with ``note``) when absent or null."""
        value = self.config.get(key)
        if value is None:
            state = "null" if key in self.config else "absent"
            self.notes.append(f"{key} {state}: {default:g} ({note})")
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1:
            raise ConfigError(key, value, "a probability in [0, 1)")
        return float(value)

    @staticmethod
    def _whole(key: str, value: object, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ConfigError(key, value, f"a whole number of at least {minimum}")
        return value


def _llama_family(r: _Reader, model_type: str) -> dict[str, Any]:
    """Llama, Mistral, Mixtral, Qwen2 and Qwen2-MoE: gated MLP, RMSNorm, rotary positions."""
    family = {"llama": "LlamaConfig", "mistral": "MistralConfig", "mixtral": "MixtralConfig",
              "qwen2": "Qwen2Config", "qwen2_moe": "Qwen2MoeConfig"}.get(model_type, "LlamaConfig")
    heads = r.required("num_attention_heads")
    hidden = r.required("hidden_size")
    fields: dict[str, Any] = {
        "layers": r.required("num_hidden_layers"),
        "hidden": hidden,
        "heads": heads,
        "kv_heads": r.optional(
            "num_key_value_heads", heads,
            f"= num_attention_heads = {heads} ({family} default: multi-head attention)",
        ),
        "intermediate_size": r.required("intermediate_size"),
        "vocab_size": r.required("vocab_size"),
        "gated_mlp": True,
        "norm": "rmsnorm",
        "position_embedding": "rotary",
        "max_positions": r.config.get("max_position_embeddings"),
        "tied_embeddings": r.flag("tie_word_embeddings", False, f"{family} default"),
    }
    if r.has("head_dim") and r.config["head_dim"] is not None:
        fields["head_dim"] = r.required("head_dim")
    elif hidden % heads == 0:
        r.notes.append(f"head_dim absent: hidden_size / num_attention_heads = {hidden // heads}")
    if model_type in ("qwen2", "qwen2_moe"):
        # Qwen2 puts biases on q, k and v only (Qwen2Attention); Qwen2-MoE through qkv_bias.
        qkv = r.flag("qkv_bias", True, f"{family} default") if model_type == "qwen2_moe" else True
        fields["attention_bias"] = "qkv" if qkv else "none"
        if r.config.get("use_sliding_window") is True:
            r.notes.append(
                "use_sliding_window true: Qwen2 windows only some layers (max_window_layers); "
                "full attention is counted in every layer, an upper bound on attention FLOPs"
            )
    elif model_type in ("mistral", "mixtral"):
        # No attention or MLP biases in either; Mistral's window defaults to 4096, Mixtral's to
        # none (MistralConfig / MixtralConfig).
        if "sliding_window" in r.config:
            fields["sliding_window"] = r.nullable("sliding_window")
        elif model_type == "mistral":
            r.notes.append("sliding_window absent: 4096 (MistralConfig default)")
            fields["sliding_window"] = 4096
    else:
        fields["attention_bias"] = (
            "all" if r.flag("attention_bias", False, f"{family} default") else "none"
        )
        fields["mlp_bias"] = r.flag("mlp_bias", False, f"{family} default")
    if model_type == "mixtral":
        fields |= {
            "experts": r.required("num_local_experts"),
            "experts_per_token": r.required("num_experts_per_tok"),
            "expert_intermediate_size": fields["intermediate_size"],
        }
    if model_type == "qwen2_moe":
        fields |= _qwen2_moe(r, fields["layers"])
    return fields


def _qwen2_moe(r: _Reader, layers: int) -> dict[str, Any]:
    experts = r.required("num_experts")
    step = r.optional("decoder_sparse_step", 1, "1 (Qwen2MoeConfig default: every layer)")
    only_mlp = r.config.get("mlp_only_layers") or []
    if not isinstance(only_mlp, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in only_mlp
    ):
        raise ConfigError("mlp_only_layers", only_mlp, "a list of layer indices")
    # Qwen2MoeDecoderLayer: sparse unless listed in mlp_only_layers, every decoder_sparse_step-th.
    sparse = sum(
        1 for i in range(layers)
        if i not in only_mlp and experts > 0 and (i + 1) % (step or 1) == 0
    )
    return {
        "experts": experts,
        "experts_per_token": r.required("num_experts_per_tok"),
        "expert_intermediate_size": r.required("moe_intermediate_size"),
        "shared_experts": 1,
        "shared_expert_intermediate_size": r.required("shared_expert_intermediate_size"),
        "shared_expert_gate": True,
        "dense_layers": layers - sparse,
    }


def _gpt2(r: _Reader) -> dict[str, Any]:
    """GPT-2: learned positions, LayerNorm, biases everywhere, tied LM head."""
    hidden = r.required("n_embd")
    return {
        "layers": r.required("n_layer"),
        "hidden": hidden,
        "heads": r.required("n_head"),
        "intermediate_size": r.optional(
            "n_inner", 4 * hidden, f"4 × n_embd = {4 * hidden} (GPT-2 default)"
        ),
        "vocab_size": r.required("vocab_size"),
        "max_positions": r.required("n_positions"),
        "position_embedding": "learned",
        "gated_mlp": False,
        "norm": "layernorm",
        "attention_bias": "all",
        "mlp_bias": True,
        "tied_embeddings": r.flag(
            "tie_word_embeddings", True, "GPT-2 ties the LM head to the token embedding"
        ),
        "dropout": r.probability("resid_pdrop", 0.1, "GPT2Config default"),
    }


def _gpt_neox(r: _Reader) -> dict[str, Any]:
    """GPT-NeoX (Pythia): rotary, LayerNorm, biases, untied LM head, parallel residual."""
    return {
        "layers": r.required("num_hidden_layers"),
        "hidden": r.required("hidden_size"),
        "heads": r.required("num_attention_heads"),
        "intermediate_size": r.required("intermediate_size"),
        "vocab_size": r.required("vocab_size"),
        "max_positions": r.config.get("max_position_embeddings"),
        "position_embedding": "rotary",
        "gated_mlp": False,
        "norm": "layernorm",
        "attention_bias": (
            "all" if r.flag("attention_bias", True, "GPTNeoXConfig default") else "none"
        ),
        "mlp_bias": True,
        "tied_embeddings": r.flag("tie_word_embeddings", False, "GPTNeoXConfig default"),
        "parallel_residual": r.flag("use_parallel_residual", True, "GPTNeoXConfig default"),
        "dropout": r.probability("hidden_dropout", 0.0, "GPTNeoXConfig default"),
    }


def _deepseek(r: _Reader) -> dict[str, Any]:
    """DeepSeek-V2/V3: MLA attention, routed + shared experts, leading dense layers."""
    layers = r.required("num_hidden_layers")
    heads = r.required("num_attention_heads")
    mla = LatentAttention(
        q_lora_rank=r.nullable("q_lora_rank"),
        kv_lora_rank=r.required("kv_lora_rank"),
        qk_nope_head_dim=r.required("qk_nope_head_dim"),
        qk_rope_head_dim=r.required("qk_rope_head_dim"),
        v_head_dim=r.required("v_head_dim"),
    )
    fields: dict[str, Any] = {
        "layers": layers,
        "hidden": r.required("hidden_size"),
        "heads": heads,
        "kv_heads": heads,
        "head_dim": mla.qk_head_dim,
        "mla": mla,
        "intermediate_size": r.required("intermediate_size"),
        "vocab_size": r.required("vocab_size"),
        "max_positions": r.config.get("max_position_embeddings"),
        "gated_mlp": True,
        "norm": "rmsnorm",
        "position_embedding": "rotary",
        "attention_bias": (
            "all" if r.flag("attention_bias", False, "DeepSeek config default") else "none"
        ),
        "tied_embeddings": r.flag("tie_word_embeddings", False, "DeepSeek config default"),
    }
    experts = r.nullable("n_routed_experts")
    if experts:
        first_dense = r.required("first_k_dense_replace")
        freq = r.optional("moe_layer_freq", 1, "1 (every layer after the dense ones)") or 1
        # DeepseekV2DecoderLayer: MoE when layer_idx >= first_k_dense_replace and
        # layer_idx % moe_layer_freq == 0.
        moe = sum(1 for i in range(layers) if i >= first_dense and i % freq == 0)
        shared = r.nullable("n_shared_experts") or 0
        fields |= {
            "experts": experts,
            "experts_per_token": r.required("num_experts_per_tok"),
            "expert_intermediate_size": r.required("moe_intermediate_size"),
            "shared_experts": shared,
            "dense_layers": layers - moe,
        }
    mtp = r.config.get("num_nextn_predict_layers")
    if isinstance(mtp, int) and not isinstance(mtp, bool) and mtp > 0:
        r.notes.append(
            f"num_nextn_predict_layers = {mtp}: the multi-token-prediction module is not counted "
            "(it is not part of the main model; DeepSeek-V3 report: 671B + 14B MTP)"
        )
    return fields


_CONFIG_KEYS: dict[str, str] = {
    "layers": "num_hidden_layers", "hidden": "hidden_size", "heads": "num_attention_heads",
    "kv_heads": "num_key_value_heads", "experts_per_token": "num_experts_per_tok",
    "expert_intermediate_size": "moe_intermediate_size",
}
_FAMILY_KEYS: dict[str, dict[str, str]] = {
    "gpt2": {"layers": "n_layer", "hidden": "n_embd", "heads": "n_head",
             "intermediate_size": "n_inner", "max_positions": "n_positions"},
    "mixtral": {"experts": "num_local_experts"},
    "qwen2_moe": {"experts": "num_experts"},
    "deepseek_v2": {"experts": "n_routed_experts", "shared_experts": "n_shared_experts",
                    "dense_layers": "first_k_dense_replace"},
}
_FAMILY_KEYS["deepseek_v3"] = _FAMILY_KEYS["deepseek_v2"]


def _config_key(field: str, model_type: object) -> str:
    """The config.json name of an :class:`Architecture` field, for error messages."""
    family = _FAMILY_KEYS.get(model_type, {}) if isinstance(model_type, str) else {}
    return family.get(field, _CONFIG_KEYS.get(field, field))


def _build(
    fields: dict[str, Any], notes: list[str], source: str, model_type: object
) -> Architecture:
    """Build the model; pydantic's errors become a :class:`ConfigError` naming the config key."""
    try:
        return Architecture(source=source, defaults_used=tuple(notes), **fields)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        original = (err.get("ctx") or {}).get("error")
        if isinstance(original, InputError):
            raise ConfigError(
                _config_key(original.field, model_type), original.value, original.allowed
            ) from None
        loc = [str(p) for p in err.get("loc", ())]
        field = _config_key(loc[0], model_type) if loc else "config"
        message = str(err.get("msg", "invalid")).removeprefix("Input should be ")
        raise ConfigError(field, err.get("input"), message) from None


def from_hf_config(config: Mapping[str, object], *, source: str = "config") -> Architecture:
    """Read the architecture from a Hugging Face ``config.json`` mapping.

    Knows ``model_type`` gpt2, gpt_neox, llama, mistral, mixtral, qwen2, qwen2_moe, deepseek_v2
    and deepseek_v3, with each family's defaults (transformers' configuration and modeling
    code); a default filled in is listed in ``defaults_used``. Another ``model_type`` (or none)
    is refused with a :class:`ConfigError` naming ``model_type``: its layout cannot be assumed
    without presenting a guess as an exact count (a BERT config read as Llama is 45% off). A
    missing required field raises :class:`ConfigError` naming it.

    An error names the field and what was expected, never a value from the config: a config
    may be any JSON file, and its values must not come back in a message.
    """
    try:
        return _from_hf_config(config, source)
    except ConfigError as exc:
        raise value_not_shown(exc.field, exc.allowed, missing=exc.value is None) from None
    except ValidationError as exc:  # a nested model (LatentAttention) the readers build
        err = exc.errors(include_url=False)[0]
        loc = [str(p) for p in err.get("loc", ())]
        message = str(err.get("msg", "invalid")).removeprefix("Input should be ")
        raise value_not_shown(loc[-1] if loc else "config", message) from None


_FROM_CONFIG = re.compile(r" \(\d+\)")
"""A bare parenthesised number in an error's ``allowed`` text: another field's config value."""


def value_not_shown(field: str, allowed: str, *, missing: bool = False) -> ConfigError:
    """A :class:`ConfigError` naming ``field`` and what was expected, without any value.

    ``allowed`` loses the bare numbers in parentheses that quote other fields of the config
    ("a divisor of heads (32)" becomes "a divisor of heads")."""
    allowed = _FROM_CONFIG.sub("", allowed)
    error = ConfigError(field, None, allowed)
    if not missing:
        error.args = (f"{field}: not {allowed} (value not shown)",)
    return error


def _from_hf_config(config: Mapping[str, object], source: str) -> Architecture:
    if not isinstance(config, Mapping):
        raise ConfigError("config", config, "a JSON object of config.json fields")
    r = _Reader(config)
    model_type = config.get("model_type")
    if model_type == "gpt2":
        fields = _gpt2(r)
    elif model_type == "gpt_neox":
        fields = _gpt_neox(r)
    elif model_type in _DEEPSEEK:
        fields = _deepseek(r)
    elif isinstance(model_type, str) and model_type in _LLAMA_LIKE:
        fields = _llama_family(r, model_type)
    else:
        moe_keys = [k for k in _MOE_KEYS if config.get(k)]
        why = (f"the config has {moe_keys[0]}, and the expert layout of another family cannot "
               "be assumed" if moe_keys else "another family's layout cannot be assumed")
        raise ConfigError(
            "model_type", model_type,
            f"one of {', '.join(SUPPORTED_MODEL_TYPES)} ({why}); for another model give its "
            "parameter count (and active parameters for MoE) instead of a config",
        )
    max_positions = fields.get("max_positions")
    if max_positions is not None and (
        isinstance(max_positions, bool) or not isinstance(max_positions, int) or max_positions < 1
    ):
        fields["max_positions"] = None  # informational only for rotary models
    name = config.get("_name_or_path")
    if isinstance(name, str) and name:
        fields.setdefault("name", name)
    return _build(fields, r.notes, source, model_type)


# Reading a config: a file, or JSON text given inline. Whatever the caller names is checked with
# os.stat before it is opened (a FIFO, a device or a 2 GB file is refused without blocking or
# reading it), opened without following a link swapped in since, and read at most 1 MB + 1 bytes.

_READABLE = "a readable .json file of at most 1 MB"
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)
"""A JSON string (to the end of the text when unterminated) or a bracket, matched in one pass."""


def _deeper_than(text: str, limit: int) -> bool:
    """Whether the brackets of JSON ``text`` nest more than ``limit`` deep (strings skipped;
    linear, no recursion)."""
    depth = 0
    for token in _JSON_TOKEN.finditer(text):
        char = token.group()[0]
        if char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


def config_too_deep(value: object, limit: int = MAX_CONFIG_DEPTH) -> bool:
    """Whether a parsed JSON value nests objects and arrays more than ``limit`` deep
    (an explicit stack, so any depth, even a cycle, is measured without recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Any
        if isinstance(item, Mapping):
            children = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def too_deep_error() -> ConfigError:
    """The error for JSON nested more than :data:`MAX_CONFIG_DEPTH` levels."""
    return value_not_shown(
        "config", f"a JSON object nested at most {MAX_CONFIG_DEPTH} levels deep")


def parse_config_json(text: str, shown: str | None = None) -> dict[str, Any]:
    """Parse config.json ``text`` into its object, refusing more than 1 MB or
    :data:`MAX_CONFIG_DEPTH` levels. Errors show ``shown`` (the caller's path) or no value."""

    def refuse(allowed: str) -> ConfigError:
        if shown is None:
            return value_not_shown("config", allowed)
        return ConfigError("config", shown, allowed)

    if len(text) > MAX_CONFIG_BYTES or len(text.encode("utf-8", "replace")) > MAX_CONFIG_BYTES:
        raise refuse("a config.json of at most 1 MB")
    if _deeper_than(text, MAX_CONFIG_DEPTH):
        raise too_deep_error()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise refuse(f"valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except (ValueError, RecursionError):  # e.g. an integer of more than 4300 digits
        raise refuse("valid JSON of a config.json's size") from None
    if not isinstance(data, dict):
        raise refuse(f"a JSON object, not a {type(data).__name__}")
    return data


def _read_config_file(path: str, root: str | None) -> str:
    """The text of config file ``path`` (inside ``root`` when given), after the checks above.

    Inside ``root`` (a server's config directory) every refusal is the same message, so a
    caller learns nothing about which files exist; otherwise the reason is given."""

    def refuse(reason: str) -> ConfigError:
        if root is not None:
            error = ConfigError("config", None, _READABLE)
            error.args = (f"config: not {_READABLE}",)
            return error
        return ConfigError("config", path, f"{_READABLE} ({reason})")

    try:
        target = os.path.realpath(os.path.join(root, path) if root is not None else path)
        base = os.path.realpath(root) if root is not None else None
        outside = base is not None and os.path.commonpath([base, target]) != base
    except (OSError, ValueError):  # an embedded NUL, or paths on different drives
        raise refuse("not a valid path") from None
    if outside:
        raise refuse("outside the config directory")
    if not target.lower().endswith(".json"):
        raise refuse("its name, links resolved, does not end in .json")
    try:
        info = os.stat(target)
    except (OSError, ValueError) as exc:
        raise refuse(getattr(exc, "strerror", None) or "not a valid path") from None
    if not stat.S_ISREG(info.st_mode):
        raise refuse("not a regular file")
    if info.st_size > MAX_CONFIG_BYTES:
        raise refuse("larger than 1 MB")
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0))
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        raise refuse(exc.strerror or type(exc).__name__) from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for a FIFO or device since stat
            raise refuse("not a regular file")
        try:
            data = handle.read(MAX_CONFIG_BYTES + 1)
        except OSError as exc:
            raise refuse(exc.strerror or type(exc).__name__) from None
    if len(data) > MAX_CONFIG_BYTES:
        raise refuse("larger than 1 MB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise refuse("not UTF-8 text") from None


def load_config(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None
) -> Architecture:
    """Read a local ``config.json`` (no network) and return its :class:`Architecture`.

    The file is read only if, links resolved, it is a regular file whose name ends in ``.json``
    of at most 1 MB, nested at most :data:`MAX_CONFIG_DEPTH` levels; with ``root``, it must
    also lie inside that directory (a relative ``path`` is taken from it). Anything else raises
    :class:`ConfigError` naming ``config``; no error shows a value read from the file.
    """
    shown = os.fspath(path)
    text = _read_config_file(shown, None if root is None else os.fspath(root))
    data = parse_config_json(text, shown if root is None else None)
    return from_hf_config(data, source=shown)


# --------------------------------------------------------------------------------------------
# Presets
# --------------------------------------------------------------------------------------------

_LLAMA_2_7B_SOURCE = "meta-llama/Llama-2-7b-hf config.json (Touvron et al. 2023, Llama 2)"

PRESETS: dict[str, Architecture] = {
    "gpt2": Architecture(
        name="GPT-2 (124M)",
        source="openai-community/gpt2 config.json (Radford et al. 2019)",
        layers=12, hidden=768, heads=12, intermediate_size=3072, vocab_size=50257,
        gated_mlp=False, tied_embeddings=True, position_embedding="learned", max_positions=1024,
        attention_bias="all", mlp_bias=True, norm="layernorm", dropout=0.1,
    ),
    "gpt3-175b": Architecture(
        name="GPT-3 175B",
        source="Brown et al. 2020, 'Language Models are Few-Shot Learners', Table 2.1: 96 layers, "
               "d_model 12288, 96 heads of 128, context 2048; GPT-2 BPE vocabulary of 50257",
        layers=96, hidden=12288, heads=96, intermediate_size=4 * 12288, vocab_size=50257,
        gated_mlp=False, tied_embeddings=True, position_embedding="learned", max_positions=2048,
        attention_bias="all", mlp_bias=True, norm="layernorm", dropout=0.1,
        defaults_used=(
            "d_ff = 4 × d_model (Brown et al. 2020, Table 2.1 note)",
            "GPT-2 layout assumed for biases, LayerNorm, dropout 0.1 and the tied LM head (Sec. "
            "2.1: 'the same model and architecture as GPT-2')",
            "dense attention in every layer (GPT-3 alternates dense and locally banded sparse "
            "attention layers; the attention FLOPs are an upper bound)",
        ),
    ),
    "llama-2-7b": Architecture(
        name="Llama 2 7B", source=_LLAMA_2_7B_SOURCE,
        layers=32, hidden=4096, heads=32, intermediate_size=11008, vocab_size=32000,
        max_positions=4096,
    ),
    "llama-2-70b": Architecture(
        name="Llama 2 70B", source="meta-llama/Llama-2-70b-hf config.json (Touvron et al. 2023)",
        layers=80, hidden=8192, heads=64, kv_heads=8, intermediate_size=28672, vocab_size=32000,
        max_positions=4096,
    ),
    "llama-3-8b": Architecture(
        name="Llama 3 8B", source="meta-llama/Meta-Llama-3-8B config.json",
        layers=32, hidden=4096, heads=32, kv_heads=8, intermediate_size=14336,
        vocab_size=128256, max_positions=8192,
    ),
    "llama-3-70b": Architecture(
        name="Llama 3 70B", source="meta-llama/Meta-Llama-3-70B config.json",
        layers=80, hidden=8192, heads=64, kv_heads=8, intermediate_size=28672,
        vocab_size=128256, max_positions=8192,
    ),
    "mistral-7b": Architecture(
        name="Mistral 7B v0.1",
        source="mistralai/Mistral-7B-v0.1 config.json (Jiang et al. 2023, Mistral 7B)",
        layers=32, hidden=4096, heads=32, kv_heads=8, intermediate_size=14336, vocab_size=32000,
        max_positions=32768, sliding_window=4096,
    ),
    "mixtral-8x7b": Architecture(
        name="Mixtral 8x7B v0.1",
        source="mistralai/Mixtral-8x7B-v0.1 config.json (Jiang et al. 2024, Mixtral of Experts)",
        layers=32, hidden=4096, heads=32, kv_heads=8, intermediate_size=14336, vocab_size=32000,
        max_positions=32768, experts=8, experts_per_token=2, expert_intermediate_size=14336,
    ),
    "deepseek-v3": Architecture(
        name="DeepSeek-V3",
        source="deepseek-ai/DeepSeek-V3 config.json (DeepSeek-AI 2024, DeepSeek-V3 Technical "
               "Report)",
        layers=61, hidden=7168, heads=128, head_dim=192, intermediate_size=18432,
        vocab_size=129280, max_positions=163840,
        mla=LatentAttention(q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
                            qk_rope_head_dim=64, v_head_dim=128),
        experts=256, experts_per_token=8, shared_experts=1, expert_intermediate_size=2048,
        dense_layers=3,
        defaults_used=("the multi-token-prediction module (14B) is not counted",),
    ),
}
"""Named architectures; each ``source`` says where its numbers come from."""


def _preset_key(name: str) -> str:
    return "-".join(name.strip().lower().replace("_", "-").split())


def list_presets() -> list[str]:
    """Names of the presets, in order."""
    return list(PRESETS)


def get_preset(name: str) -> Architecture:
    """The preset called ``name`` (case-insensitive; ``_`` and spaces read as ``-``).

    An unknown name raises :class:`ConfigError` naming ``preset``, with close matches.
    """
    if not isinstance(name, str):
        raise ConfigError("preset", name, "a preset name: " + ", ".join(PRESETS))
    key = _preset_key(name)
    if key in PRESETS:
        return PRESETS[key]
    close = difflib.get_close_matches(key, list(PRESETS), n=3, cutoff=0.5)
    hint = ("did you mean " + ", ".join(repr(c) for c in close) + "? ") if close else ""
    raise ConfigError("preset", name, f"{hint}known presets: {', '.join(PRESETS)}")
