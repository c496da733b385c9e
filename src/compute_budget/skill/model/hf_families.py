"""The model families this tool reads from a Hugging Face ``config.json``: one table of them.

:data:`FAMILIES` maps each ``model_type`` to how its config fields become an
:class:`~.architecture.Architecture`: the reader for its naming scheme (GPT-2, GPT-NeoX, the Llama
lineage, DeepSeek), and the layout facts of its Hugging Face modeling code that no config field
states (which projections have biases, whether embeddings are tied by default, query/key norms,
norms per layer, the expert layout). :func:`family_of` picks a config's family (refusing any other
``model_type``), :func:`config_key` names a field as the family's config does; the readers
themselves are in :mod:`.hf_config`.

Layouts (transformers' modeling code of each family):

- Llama, Mistral, Mixtral, SmolLM (llama): gated MLP, RMSNorm, rotary; Llama takes
  ``attention_bias`` (q, k, v, o) and ``mlp_bias``; Mistral and Mixtral have no biases.
- Qwen2 / Qwen2.5: biases on q, k and v only; Qwen2-MoE adds a shared expert with a sigmoid gate.
- Qwen3 / Qwen3-MoE: ``attention_bias`` (default false) and an RMSNorm of head_dim on every query
  and key head (q_norm, k_norm); Qwen3-MoE has routed experts only, no shared expert.
- Gemma 2 / Gemma 3 (text): four RMSNorms per layer (before and after attention and MLP), tied
  embeddings by default, ``head_dim`` given (256 by default); Gemma 3 adds q_norm and k_norm.
  Gemma's norm weight is used as (1 + w): still d weights.
- Phi-3 / Phi-4 (phi3): one fused qkv_proj and one fused gate_up_proj, no biases: the same
  weights as separate projections.
- OLMo 2: norms after attention and after the MLP (none before), and q_norm / k_norm over the
  whole query (H·Q) and key (G·Q) projections.
- DeepSeek-V2/V3: multi-head latent attention, routed + shared experts, leading dense layers.

What the modeling code keeps for the backward pass beyond the sizes (:func:`modeling_facts`, a
:class:`~.modeling.ModelingFacts`): Gemma's and OLMo 2's RMSNorms keep an fp32 normalised value;
Phi-3, GPT-NeoX and GPT-2 slice Q, K and V from one projection, and Phi-3 and GPT-NeoX
concatenate the rotated query (partial-rotary code); DeepSeek's router takes an fp32 copy of its
input; transformers' default attention
is eager for Gemma 2 (``Gemma2PreTrainedModel._supports_sdpa = False``: SDPA has no soft-capping)
and SDPA elsewhere; Gemma 2 soft-caps its attention scores and final logits by default (50, 30);
Gemma's local layers alternate with global ones (every other layer for Gemma 2, five in six for
Gemma 3, or as ``layer_types`` lists them); Qwen's ``use_sliding_window`` makes the layers from
``max_window_layers`` on local.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..errors import ConfigError
from .architecture import QkNorm
from .modeling import AttentionImplementation, ModelingFacts

__all__ = [
    "FAMILIES",
    "SUPPORTED_MODEL_TYPES",
    "Biases",
    "Family",
    "Moe",
    "Window",
    "config_key",
    "family_of",
    "modeling_facts",
]

Biases = Literal["flag", "attention_flag", "qkv", "qkv_flag", "none"]
"""Where a Llama-lineage family puts biases: ``attention_bias`` on q/k/v/o and ``mlp_bias``
(flag); ``attention_bias`` only (attention_flag); always on q/k/v (qkv); on q/k/v through
``qkv_bias``, default true (qkv_flag); nowhere (none)."""
Window = Literal["none", "mistral", "given", "partial"]
"""Sliding-window attention: none read; every layer, 4096 when absent (mistral); every layer when
the config gives one, else none (given); only some layers, so full attention is counted (partial:
Qwen's ``use_sliding_window``, Gemma's local layers alternating with global ones)."""
Moe = Literal["none", "mixtral", "qwen2_moe", "qwen3_moe"]
"""The expert layout of a Llama-lineage family."""


@dataclass(frozen=True)
class Family:
    """How the config.json of one ``model_type`` becomes an Architecture."""

    config_class: str
    """The transformers configuration class, named in the notes of defaults."""
    reader: Literal["gpt2", "gpt_neox", "llama", "deepseek"] = "llama"
    """The field names the config uses."""
    biases: Biases = "flag"
    tied_default: bool = False
    """``tie_word_embeddings`` when the config leaves it out."""
    head_dim_default: int | None = None
    """``head_dim`` when the config leaves it out; None: hidden_size / num_attention_heads."""
    qk_norm: QkNorm = "none"
    layer_norms: int = 2
    window: Window = "none"
    moe: Moe = "none"
    keys: Mapping[str, str] = field(default_factory=dict)
    """Architecture field → this family's config key, where it is not the usual name."""
    activation: tuple[str, str] = ("hidden_act", "silu")
    """The config key of the MLP's activation and its default."""
    norm_fp32: bool = False
    fused_qkv: bool = False
    rope_concat: bool = False
    router_fp32: bool = False
    attention: AttentionImplementation = "sdpa"
    softcap_defaults: tuple[float | None, float | None] = (None, None)
    """attn_logit_softcapping and final_logit_softcapping when the config leaves them out."""
    local_every: int = 0
    """Of every ``local_every`` layers all but the last are local (Gemma 2: 2; Gemma 3: the
    config's sliding_window_pattern, default 6), unless ``layer_types`` lists them; 0: no
    alternation."""


_GEMMA_ACTIVATION = ("hidden_activation", "gelu_pytorch_tanh")
_DEEPSEEK_KEYS = {"experts": "n_routed_experts", "shared_experts": "n_shared_experts",
                  "dense_layers": "first_k_dense_replace"}

FAMILIES: dict[str, Family] = {
    "gpt2": Family("GPT2Config", reader="gpt2", keys={
        "layers": "n_layer", "hidden": "n_embd", "heads": "n_head",
        "intermediate_size": "n_inner", "max_positions": "n_positions"},
        activation=("activation_function", "gelu_new"), fused_qkv=True),
    "gpt_neox": Family("GPTNeoXConfig", reader="gpt_neox", activation=("hidden_act", "gelu"),
                       fused_qkv=True, rope_concat=True),
    "llama": Family("LlamaConfig"),
    "mistral": Family("MistralConfig", biases="none", window="mistral"),
    "mixtral": Family("MixtralConfig", biases="none", window="given", moe="mixtral",
                      keys={"experts": "num_local_experts"}),
    "qwen2": Family("Qwen2Config", biases="qkv", window="partial"),
    "qwen2_moe": Family("Qwen2MoeConfig", biases="qkv_flag", window="partial", moe="qwen2_moe",
                        keys={"experts": "num_experts"}),
    "qwen3": Family("Qwen3Config", biases="attention_flag", head_dim_default=128,
                    qk_norm="head", window="partial"),
    "qwen3_moe": Family("Qwen3MoeConfig", biases="attention_flag", head_dim_default=128,
                        qk_norm="head", window="partial", moe="qwen3_moe",
                        keys={"experts": "num_experts"}),
    "gemma2": Family("Gemma2Config", biases="attention_flag", tied_default=True,
                     head_dim_default=256, layer_norms=4, window="partial",
                     activation=_GEMMA_ACTIVATION, norm_fp32=True, attention="eager",
                     softcap_defaults=(50.0, 30.0), local_every=2),
    "gemma3_text": Family("Gemma3TextConfig", biases="attention_flag", tied_default=True,
                          head_dim_default=256, qk_norm="head", layer_norms=4,
                          window="partial", activation=_GEMMA_ACTIVATION, norm_fp32=True,
                          local_every=6),
    "phi3": Family("Phi3Config", biases="none", window="given", fused_qkv=True,
                   rope_concat=True),
    "olmo2": Family("Olmo2Config", biases="attention_flag", qk_norm="projection",
                    norm_fp32=True),
    "deepseek_v2": Family("DeepseekV2Config", reader="deepseek", keys=_DEEPSEEK_KEYS,
                          router_fp32=True),
    "deepseek_v3": Family("DeepseekV3Config", reader="deepseek", keys=_DEEPSEEK_KEYS,
                          router_fp32=True),
}
"""model_type → its family: the one table of the families this tool reads."""

SUPPORTED_MODEL_TYPES = tuple(FAMILIES)
"""The ``model_type`` values :func:`~.hf_config.from_hf_config` reads."""
_MOE_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_intermediate_size")


def family_of(config: Mapping[str, object]) -> Family:
    """The family of ``config``'s ``model_type``; another ``model_type`` (or none) is refused with
    a :class:`ConfigError` listing the supported families."""
    model_type = config.get("model_type")
    family = FAMILIES.get(model_type) if isinstance(model_type, str) else None
    if family is None:
        moe_keys = [k for k in _MOE_KEYS if config.get(k)]
        why = (f"the config has {moe_keys[0]}, and the expert layout of another family cannot "
               "be assumed" if moe_keys else "another family's layout cannot be assumed")
        raise ConfigError(
            "model_type", model_type,
            f"one of the supported families {', '.join(SUPPORTED_MODEL_TYPES)} ({why}); for "
            "another model give its parameter count (and active parameters for MoE) instead "
            "of a config",
        )
    return family


_CONFIG_KEYS: dict[str, str] = {
    "layers": "num_hidden_layers", "hidden": "hidden_size", "heads": "num_attention_heads",
    "kv_heads": "num_key_value_heads", "experts_per_token": "num_experts_per_tok",
    "expert_intermediate_size": "moe_intermediate_size",
}


def config_key(name: str, model_type: object) -> str:
    """The config.json name of the :class:`~.architecture.Architecture` field ``name`` in the
    family of ``model_type``, for error messages."""
    family = FAMILIES.get(model_type) if isinstance(model_type, str) else None
    keys = family.keys if family is not None else {}
    return keys.get(name, _CONFIG_KEYS.get(name, name))


def _number(config: Mapping[str, object], key: str, default: float | None) -> float | None:
    value = config.get(key, default)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _local_layers(config: Mapping[str, object], family: Family, layers: int) -> int:
    """Layers with a sliding window when only some have one (module docstring)."""
    types = config.get("layer_types")
    if isinstance(types, list) and len(types) == layers:
        return sum(1 for t in types if t == "sliding_attention")
    if family.local_every:
        pattern = _number(config, "sliding_window_pattern", family.local_every)
        every = int(pattern) if pattern and pattern >= 1 else family.local_every
        return layers - layers // every
    if config.get("use_sliding_window") is True:
        first = _number(config, "max_window_layers", 28)
        return max(0, layers - int(first if first is not None else 0))
    return 0


def modeling_facts(config: Mapping[str, object], family: Family, layers: int) -> ModelingFacts:
    """What ``config``'s modeling code keeps for the backward pass beyond the sizes (module
    docstring); the family's defaults where the config leaves a key out."""
    key, default = family.activation
    activation = config.get(key, default)
    attn_cap, logit_cap = family.softcap_defaults
    local = _local_layers(config, family, layers) if family.window == "partial" else 0
    window = _number(config, "sliding_window", 4096)
    return ModelingFacts(
        norm_fp32=family.norm_fp32, fused_qkv=family.fused_qkv, rope_concat=family.rope_concat,
        router_fp32=family.router_fp32,
        activation=activation if isinstance(activation, str) else default,
        attention=family.attention,
        attention_softcap=_number(config, "attn_logit_softcapping", attn_cap) is not None,
        logit_softcap=_number(config, "final_logit_softcapping", logit_cap) is not None,
        local_window=int(window) if local and window and window >= 1 else None,
        local_layers=local if local and window and window >= 1 else 0,
    )
