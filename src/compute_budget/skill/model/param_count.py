"""Exact parameter counts of an :class:`~.arch_model.Architecture`, by component.

Parameters per decoder layer, hidden size d, query heads H, KV heads G, head size Q, FFN size f
(the layout of the Hugging Face modeling code of each family)::

    attention   d·H·Q + 2·d·G·Q + H·Q·d         q, k, v and o projections (+ biases if any)
    MLA         d·r_q + r_q·H·(Q_nope + Q_rope)  DeepSeek latent attention: low-rank q
                + d·(r_kv + Q_rope)              compressed kv and the shared rotary key
                + r_kv·H·(Q_nope + Q_v)          kv up-projection
                + H·Q_v·d                        o projection
    MLP         3·d·f (gated, SwiGLU) or 2·d·f   (+ biases if any)
    MoE layer   E routed experts + S shared experts + router E·d (+ Qwen2-MoE's d·1 gate)
    norms       layer_norms per layer (2; Gemma 2/3: 4) + MLA's two latent norms + the
                query/key norms (2·Q per head kind, Qwen3 and Gemma 3; H·Q + G·Q, OLMo 2), and
                1 final; d weights each for RMSNorm, d weights + d biases for LayerNorm

plus the token embedding V·d, a learned position table P·d (GPT-2/3) and an LM head V·d unless
tied to the embedding. A fused projection (Phi-3's qkv_proj and gate_up_proj) holds the same
weights as the separate ones and is counted the same. DeepSeek-V3's ``e_score_correction_bias``
is a buffer that no gradient trains (a buffer in the Hugging Face code) and is not counted;
neither is its multi-token prediction module (DeepSeek-AI 2024, "DeepSeek-V3 Technical Report":
671B main model + 14B MTP).
"""

from __future__ import annotations

from functools import cache

from ..errors import ConfigError
from .architecture import Architecture, ParamBreakdown

__all__ = ["check_tensor_parallel", "count_params", "counts_of"]

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
    """Norms inside one layer's attention: MLA's on the query and key-value latents, or the
    query/key norms (per head: Qwen3, Gemma 3; over the projection: OLMo 2)."""
    if arch.mla is not None:
        return _norm_params(arch, (arch.mla.q_lora_rank or 0) + arch.mla.kv_lora_rank)
    if arch.qk_norm == "head":
        return 2 * _norm_params(arch, arch.head_dim)
    if arch.qk_norm == "projection":
        return _norm_params(arch, (arch.heads + arch.kv_heads) * arch.head_dim)
    return 0


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
    """Exact parameter count of ``arch`` by component (the module docstring gives the layout).

    Matches ``sum(p.numel() for p in model.parameters())`` of the Hugging Face implementation
    for the families :func:`~.hf_config.from_hf_config` reads.
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
        arch.layers * (arch.layer_norms * _norm_params(arch, d) + _attention_norms(arch))
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


@cache
def counts_of(arch: Architecture) -> ParamBreakdown:
    """:func:`count_params`, computed once per architecture."""
    return count_params(arch)
