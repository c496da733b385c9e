"""Hugging Face ``config.json`` readers: one table of the model families this tool can count.

:data:`FAMILIES` maps each ``model_type`` to how its config fields become an
:class:`~.arch_model.Architecture`: the reader for its naming scheme (GPT-2, GPT-NeoX, the Llama
lineage, DeepSeek), and the layout facts of its Hugging Face modeling code that no config field
states (which projections have biases, whether embeddings are tied by default, query/key norms,
norms per layer, the expert layout). Whatever a config leaves out and is filled with the family's
documented default is listed in ``defaults_used``, so a guess is never shown as a fact.

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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from ..errors import ConfigError, InputError
from .architecture import Architecture, LatentAttention, QkNorm

__all__ = [
    "FAMILIES",
    "SUPPORTED_MODEL_TYPES",
    "Family",
    "from_hf_config",
    "read_hf_config",
    "value_not_shown",
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


_DEEPSEEK_KEYS = {"experts": "n_routed_experts", "shared_experts": "n_shared_experts",
                  "dense_layers": "first_k_dense_replace"}

FAMILIES: dict[str, Family] = {
    "gpt2": Family("GPT2Config", reader="gpt2", keys={
        "layers": "n_layer", "hidden": "n_embd", "heads": "n_head",
        "intermediate_size": "n_inner", "max_positions": "n_positions"}),
    "gpt_neox": Family("GPTNeoXConfig", reader="gpt_neox"),
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
                     head_dim_default=256, layer_norms=4, window="partial"),
    "gemma3_text": Family("Gemma3TextConfig", biases="attention_flag", tied_default=True,
                          head_dim_default=256, qk_norm="head", layer_norms=4,
                          window="partial"),
    "phi3": Family("Phi3Config", biases="none", window="given"),
    "olmo2": Family("Olmo2Config", biases="attention_flag", qk_norm="projection"),
    "deepseek_v2": Family("DeepseekV2Config", reader="deepseek", keys=_DEEPSEEK_KEYS),
    "deepseek_v3": Family("DeepseekV3Config", reader="deepseek", keys=_DEEPSEEK_KEYS),
}
"""model_type → its family: the one table of the families this tool reads."""

SUPPORTED_MODEL_TYPES = tuple(FAMILIES)
"""The ``model_type`` values :func:`from_hf_config` reads."""
_MOE_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_intermediate_size")


class _Reader:
    """Reads fields of one config, recording every default it fills in."""

    def __init__(self, config: Mapping[str, object], *, record_defaults: bool = True) -> None:
        self.config = config
        self.notes: list[str] = []
        self.record_defaults = record_defaults

    def default(self, note: str) -> None:
        """Record a family default filled in for an absent field (unless told not to)."""
        if self.record_defaults:
            self.notes.append(note)

    def assume(self, note: str) -> None:
        """Record an assumption of the count (always: it is no fact of the config)."""
        self.notes.append(note)

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
            self.default(f"{key} {'null' if key in self.config else 'absent'}: {note}")
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
            self.default(f"{key} {state}: {str(default).lower()} ({note})")
            return default
        if not isinstance(value, bool):
            raise ConfigError(key, value, "true or false")
        return value

    def probability(self, key: str, default: float, note: str) -> float:
        """A probability in [0, 1), or ``default`` (recorded with ``note``) when absent or null."""
        value = self.config.get(key)
        if value is None:
            state = "null" if key in self.config else "absent"
            self.default(f"{key} {state}: {default:g} ({note})")
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1:
            raise ConfigError(key, value, "a probability in [0, 1)")
        return float(value)

    @staticmethod
    def _whole(key: str, value: object, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ConfigError(key, value, f"a whole number of at least {minimum}")
        return value


def _llama_family(r: _Reader, family: Family) -> dict[str, Any]:
    """The Llama lineage: gated MLP, RMSNorm, rotary positions; the rest from ``family``."""
    name = family.config_class
    heads = r.required("num_attention_heads")
    hidden = r.required("hidden_size")
    fields: dict[str, Any] = {
        "layers": r.required("num_hidden_layers"),
        "hidden": hidden,
        "heads": heads,
        "kv_heads": r.optional(
            "num_key_value_heads", heads,
            f"= num_attention_heads = {heads} ({name} default: multi-head attention)",
        ),
        "intermediate_size": r.required("intermediate_size"),
        "vocab_size": r.required("vocab_size"),
        "gated_mlp": True,
        "norm": "rmsnorm",
        "position_embedding": "rotary",
        "max_positions": r.config.get("max_position_embeddings"),
        "tied_embeddings": r.flag("tie_word_embeddings", family.tied_default, f"{name} default"),
        "qk_norm": family.qk_norm,
        "layer_norms": family.layer_norms,
    }
    if r.has("head_dim"):
        fields["head_dim"] = r.required("head_dim")
    elif family.head_dim_default is not None:
        r.default(f"head_dim absent: {family.head_dim_default} ({name} default)")
        fields["head_dim"] = family.head_dim_default
    elif hidden % heads == 0:
        r.default(f"head_dim absent: hidden_size / num_attention_heads = {hidden // heads}")
    fields |= _biases(r, family)
    fields |= _window(r, family)
    if family.moe == "mixtral":
        fields |= {
            "experts": r.required("num_local_experts"),
            "experts_per_token": r.required("num_experts_per_tok"),
            "expert_intermediate_size": fields["intermediate_size"],
        }
    elif family.moe in ("qwen2_moe", "qwen3_moe"):
        fields |= _qwen_moe(r, family, fields["layers"])
    return fields


def _biases(r: _Reader, family: Family) -> dict[str, Any]:
    """Which projections of a Llama-lineage family have biases (see :data:`Biases`)."""
    name = family.config_class
    if family.biases in ("flag", "attention_flag"):
        on = r.flag("attention_bias", False, f"{name} default")
        fields: dict[str, Any] = {"attention_bias": "all" if on else "none"}
        if family.biases == "flag":
            fields["mlp_bias"] = r.flag("mlp_bias", False, f"{name} default")
        return fields
    if family.biases == "qkv":
        return {"attention_bias": "qkv"}
    if family.biases == "qkv_flag":
        return {"attention_bias": "qkv" if r.flag("qkv_bias", True, f"{name} default")
                else "none"}
    return {}


def _window(r: _Reader, family: Family) -> dict[str, Any]:
    """The sliding window of a Llama-lineage family (see :data:`Window`)."""
    if family.window == "mistral":
        if "sliding_window" in r.config:
            return {"sliding_window": r.nullable("sliding_window")}
        r.default("sliding_window absent: 4096 (MistralConfig default)")
        return {"sliding_window": 4096}
    if family.window == "given" and "sliding_window" in r.config:
        return {"sliding_window": r.nullable("sliding_window")}
    if family.window == "partial" and (
        r.config.get("use_sliding_window") is True
        or (family.layer_norms == 4 and r.has("sliding_window"))
    ):
        r.assume(
            "sliding window in some layers only (Qwen: max_window_layers; Gemma: local layers "
            "alternating with global ones): full attention is counted in every layer, an upper "
            "bound on attention FLOPs"
        )
    return {}


def _qwen_moe(r: _Reader, family: Family, layers: int) -> dict[str, Any]:
    """Qwen2-MoE (routed experts + one gated shared expert) and Qwen3-MoE (routed only)."""
    experts = r.required("num_experts")
    step = r.optional("decoder_sparse_step", 1,
                      f"1 ({family.config_class} default: every layer)")
    only_mlp = r.config.get("mlp_only_layers") or []
    if not isinstance(only_mlp, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in only_mlp
    ):
        raise ConfigError("mlp_only_layers", only_mlp, "a list of layer indices")
    # Qwen2MoeDecoderLayer / Qwen3MoeDecoderLayer: sparse unless listed in mlp_only_layers,
    # every decoder_sparse_step-th layer.
    sparse = sum(
        1 for i in range(layers)
        if i not in only_mlp and experts > 0 and (i + 1) % (step or 1) == 0
    )
    fields: dict[str, Any] = {
        "experts": experts,
        "experts_per_token": r.required("num_experts_per_tok"),
        "expert_intermediate_size": r.required("moe_intermediate_size"),
        "dense_layers": layers - sparse,
    }
    if family.moe == "qwen2_moe":
        fields |= {
            "shared_experts": 1,
            "shared_expert_intermediate_size": r.required("shared_expert_intermediate_size"),
            "shared_expert_gate": True,
        }
    return fields


def _gpt2(r: _Reader, family: Family) -> dict[str, Any]:
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


def _gpt_neox(r: _Reader, family: Family) -> dict[str, Any]:
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


def _deepseek(r: _Reader, family: Family) -> dict[str, Any]:
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
            "all" if r.flag("attention_bias", False, f"{family.config_class} default") else "none"
        ),
        "tied_embeddings": r.flag("tie_word_embeddings", False, f"{family.config_class} default"),
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
        r.assume(
            f"num_nextn_predict_layers = {mtp}: the multi-token-prediction module is not counted "
            "(it is not part of the main model; DeepSeek-V3 report: 671B + 14B MTP)"
        )
    return fields


_CONFIG_KEYS: dict[str, str] = {
    "layers": "num_hidden_layers", "hidden": "hidden_size", "heads": "num_attention_heads",
    "kv_heads": "num_key_value_heads", "experts_per_token": "num_experts_per_tok",
    "expert_intermediate_size": "moe_intermediate_size",
}


def _config_key(field: str, model_type: object) -> str:
    """The config.json name of an :class:`Architecture` field, for error messages."""
    family = FAMILIES.get(model_type) if isinstance(model_type, str) else None
    keys = family.keys if family is not None else {}
    return keys.get(field, _CONFIG_KEYS.get(field, field))


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


_READERS: dict[str, Callable[[_Reader, Family], dict[str, Any]]] = {
    "gpt2": _gpt2, "gpt_neox": _gpt_neox, "llama": _llama_family, "deepseek": _deepseek,
}


def from_hf_config(config: Mapping[str, object], *, source: str = "config") -> Architecture:
    """Read the architecture from a Hugging Face ``config.json`` mapping.

    Knows the ``model_type`` values of :data:`FAMILIES` (:data:`SUPPORTED_MODEL_TYPES`), with
    each family's defaults (transformers' configuration and modeling code); a default filled in
    is listed in ``defaults_used``. Another ``model_type`` (or none) is refused with a
    :class:`ConfigError` naming ``model_type`` and listing the supported families: its layout
    cannot be assumed without presenting a guess as an exact count (a BERT config read as Llama
    is 45% off). A missing required field raises :class:`ConfigError` naming it.

    An error names the field and what was expected, never a value from the config: a config
    may be any JSON file, and its values must not come back in a message.
    """
    return read_hf_config(config, source=source)


def read_hf_config(
    config: Mapping[str, object], *, source: str = "config", record_defaults: bool = True
) -> Architecture:
    """:func:`from_hf_config`; with ``record_defaults=False`` the family defaults filled in are
    not listed (a preset: the checkpoint's own modeling code fills them, so they are facts of
    the checkpoint), while the assumptions of the count still are."""
    try:
        return _from_hf_config(config, source, record_defaults)
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


def _from_hf_config(
    config: Mapping[str, object], source: str, record_defaults: bool
) -> Architecture:
    if not isinstance(config, Mapping):
        raise ConfigError("config", config, "a JSON object of config.json fields")
    r = _Reader(config, record_defaults=record_defaults)
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
    fields = _READERS[family.reader](r, family)
    max_positions = fields.get("max_positions")
    if max_positions is not None and (
        isinstance(max_positions, bool) or not isinstance(max_positions, int) or max_positions < 1
    ):
        fields["max_positions"] = None  # informational only for rotary models
    name = config.get("_name_or_path")
    if isinstance(name, str) and name:
        fields.setdefault("name", name)
    return _build(fields, r.notes, source, model_type)
