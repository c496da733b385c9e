"""Hugging Face ``config.json`` readers: the fields of a config become an Architecture.

The family of a config's ``model_type`` (:data:`~.hf_families.FAMILIES`, with the layout of each)
says which reader applies (GPT-2, GPT-NeoX, the Llama lineage, DeepSeek) and which layout facts no
config field states. Whatever a config leaves out and is filled with the family's documented
default is listed in ``defaults_used`` (a :class:`~.architecture.ConfigNote` each, worded by the
reply), so a guess is never shown as a fact.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError, InputError, plain_message
from .architecture import Architecture, ConfigNote, ConfigNoteCode, LatentAttention
from .hf_families import Family, config_key, family_of, modeling_facts

__all__ = ["MAX_WHOLE", "from_hf_config", "read_hf_config", "value_not_shown"]

MAX_WHOLE = 1_000_000_000
"""The largest whole number a config field may hold (layers, sizes, vocabulary, experts,
positions): far above any real model's, far below what overflows a float."""


class _Reader:
    """Reads fields of one config, recording every default it fills in."""

    def __init__(self, config: Mapping[str, object], *, record_defaults: bool = True) -> None:
        self.config = config
        self.notes: list[ConfigNote] = []
        self.record_defaults = record_defaults

    def default(self, key: str, value: bool | float, code: ConfigNoteCode = "family_default",
                reference: str | None = None) -> None:
        """Record a default filled in for the absent or null ``key`` (unless told not to)."""
        if self.record_defaults:
            missing = "null" if key in self.config else "absent"
            self.notes.append(ConfigNote(code=code, field=key, value=value, missing=missing,
                                         reference=reference))

    def assume(self, note: ConfigNote) -> None:
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

    def optional(self, key: str, default: int, code: ConfigNoteCode,
                 reference: str | None = None) -> int:
        """A positive whole number, or ``default`` (recorded as ``code``) when absent/null."""
        value = self.config.get(key)
        if value is None:
            self.default(key, default, code, reference)
            return default
        return self._whole(key, value, 1)

    def maybe(self, key: str) -> int | None:
        """A positive whole number, or None when the key is absent or null (no default)."""
        value = self.config.get(key)
        return None if value is None else self._whole(key, value, 1)

    def nullable(self, key: str) -> int | None:
        """A key that must be present but may be null (null has a meaning of its own)."""
        if key not in self.config:
            raise ConfigError(key, None, "required in the config (null allowed) but missing")
        value = self.config[key]
        return None if value is None else self._whole(key, value, 0)

    def flag(self, key: str, default: bool, reference: str,
             code: ConfigNoteCode = "family_default") -> bool:
        """A boolean, or ``default`` (``reference``'s, recorded) when absent or null."""
        value = self.config.get(key)
        if value is None:
            self.default(key, default, code, reference)
            return default
        if not isinstance(value, bool):
            raise ConfigError(key, value, "true or false")
        return value

    def probability(self, key: str, default: float, reference: str) -> float:
        """A probability in [0, 1), or ``default`` (``reference``'s, recorded) when absent/null."""
        value = self.config.get(key)
        if value is None:
            self.default(key, default, reference=reference)
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1:
            raise ConfigError(key, value, "a probability in [0, 1)")
        return float(value)

    @staticmethod
    def _whole(key: str, value: object, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ConfigError(key, value, f"a whole number of at least {minimum}")
        if value > MAX_WHOLE:  # checked before any arithmetic: 10**300 layers overflow floats
            raise ConfigError(key, f"a number of {len(str(value))} digits",
                              f"a whole number from {minimum} to {MAX_WHOLE:,}")
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
        "kv_heads": r.optional("num_key_value_heads", heads, "kv_heads_default", name),
        "intermediate_size": r.required("intermediate_size"),
        "vocab_size": r.required("vocab_size"),
        "gated_mlp": True,
        "norm": "rmsnorm",
        "position_embedding": "rotary",
        "max_positions": r.maybe("max_position_embeddings"),
        "tied_embeddings": r.flag("tie_word_embeddings", family.tied_default, name),
        "qk_norm": family.qk_norm,
        "layer_norms": family.layer_norms,
    }
    if r.has("head_dim"):
        fields["head_dim"] = r.required("head_dim")
    elif family.head_dim_default is not None:
        r.default("head_dim", family.head_dim_default, reference=name)
        fields["head_dim"] = family.head_dim_default
    elif hidden % heads == 0:
        r.default("head_dim", hidden // heads, "head_dim_derived")
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
    """Which projections of a Llama-lineage family have biases (:data:`~.hf_families.Biases`)."""
    name = family.config_class
    if family.biases in ("flag", "attention_flag"):
        on = r.flag("attention_bias", False, name)
        fields: dict[str, Any] = {"attention_bias": "all" if on else "none"}
        if family.biases == "flag":
            fields["mlp_bias"] = r.flag("mlp_bias", False, name)
        return fields
    if family.biases == "qkv":
        return {"attention_bias": "qkv"}
    if family.biases == "qkv_flag":
        return {"attention_bias": "qkv" if r.flag("qkv_bias", True, name) else "none"}
    return {}


def _window(r: _Reader, family: Family) -> dict[str, Any]:
    """The sliding window of a Llama-lineage family (:data:`~.hf_families.Window`)."""
    if family.window == "mistral":
        if "sliding_window" in r.config:
            return {"sliding_window": r.nullable("sliding_window")}
        r.default("sliding_window", 4096, reference=family.config_class)
        return {"sliding_window": 4096}
    if family.window == "given" and "sliding_window" in r.config:
        return {"sliding_window": r.nullable("sliding_window")}
    if family.window == "partial" and (
        r.config.get("use_sliding_window") is True
        or (family.layer_norms == 4 and r.has("sliding_window"))
    ):
        r.assume(ConfigNote(code="partial_window", field="sliding_window"))
    return {}


def _qwen_moe(r: _Reader, family: Family, layers: int) -> dict[str, Any]:
    """Qwen2-MoE (routed experts + one gated shared expert) and Qwen3-MoE (routed only)."""
    experts = r.required("num_experts")
    step = r.optional("decoder_sparse_step", 1, "sparse_step_default", family.config_class)
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
        "intermediate_size": r.optional("n_inner", 4 * hidden, "n_inner_default", "GPT-2"),
        "vocab_size": r.required("vocab_size"),
        "max_positions": r.required("n_positions"),
        "position_embedding": "learned",
        "gated_mlp": False,
        "norm": "layernorm",
        "attention_bias": "all",
        "mlp_bias": True,
        "tied_embeddings": r.flag("tie_word_embeddings", True, "GPT-2", "tied_lm_head"),
        "dropout": r.probability("resid_pdrop", 0.1, "GPT2Config"),
    }


def _gpt_neox(r: _Reader, family: Family) -> dict[str, Any]:
    """GPT-NeoX (Pythia): rotary, LayerNorm, biases, untied LM head, parallel residual."""
    return {
        "layers": r.required("num_hidden_layers"),
        "hidden": r.required("hidden_size"),
        "heads": r.required("num_attention_heads"),
        "intermediate_size": r.required("intermediate_size"),
        "vocab_size": r.required("vocab_size"),
        "max_positions": r.maybe("max_position_embeddings"),
        "position_embedding": "rotary",
        "gated_mlp": False,
        "norm": "layernorm",
        "attention_bias": (
            "all" if r.flag("attention_bias", True, "GPTNeoXConfig") else "none"
        ),
        "mlp_bias": True,
        "tied_embeddings": r.flag("tie_word_embeddings", False, "GPTNeoXConfig"),
        "parallel_residual": r.flag("use_parallel_residual", True, "GPTNeoXConfig"),
        "dropout": r.probability("hidden_dropout", 0.0, "GPTNeoXConfig"),
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
        "max_positions": r.maybe("max_position_embeddings"),
        "gated_mlp": True,
        "norm": "rmsnorm",
        "position_embedding": "rotary",
        "attention_bias": (
            "all" if r.flag("attention_bias", False, family.config_class) else "none"
        ),
        "tied_embeddings": r.flag("tie_word_embeddings", False, family.config_class),
    }
    experts = r.nullable("n_routed_experts")
    if experts:
        first_dense = r.required("first_k_dense_replace", 0)
        freq = r.optional("moe_layer_freq", 1, "moe_layer_freq_default") or 1
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
        mtp = r.maybe("num_nextn_predict_layers")
        r.assume(ConfigNote(code="mtp_not_counted", field="num_nextn_predict_layers", value=mtp,
                            reference="DeepSeek-V3 report: 671B + 14B MTP"))
    return fields


def _build(
    fields: dict[str, Any], notes: list[ConfigNote], source: str, model_type: object
) -> Architecture:
    """Build the model; pydantic's errors become a :class:`ConfigError` naming the config key."""
    try:
        return Architecture(source=source, defaults_used=tuple(notes), **fields)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        original = (err.get("ctx") or {}).get("error")
        if isinstance(original, InputError):
            raise ConfigError(
                config_key(original.field, model_type), original.value, original.allowed
            ) from None
        loc = [str(p) for p in err.get("loc", ())]
        field = config_key(loc[0], model_type) if loc else "config"
        message = plain_message(str(err.get("msg", "invalid")))
        raise ConfigError(field, err.get("input"), message) from None


_READERS: dict[str, Callable[[_Reader, Family], dict[str, Any]]] = {
    "gpt2": _gpt2, "gpt_neox": _gpt_neox, "llama": _llama_family, "deepseek": _deepseek,
}


def from_hf_config(config: Mapping[str, object], *, source: str = "config") -> Architecture:
    """Read the architecture from a Hugging Face ``config.json`` mapping.

    Knows the ``model_type`` values of :data:`~.hf_families.FAMILIES`
    (:data:`~.hf_families.SUPPORTED_MODEL_TYPES`), with each family's defaults (transformers'
    configuration and modeling code); a default filled in is listed in ``defaults_used``.
    Another ``model_type`` (or none) is refused with a :class:`ConfigError` naming
    ``model_type`` and listing the supported families: its layout cannot be assumed without
    presenting a guess as an exact count (a BERT config read as Llama is 45% off). A missing
    required field raises :class:`ConfigError` naming it.

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
        message = plain_message(str(err.get("msg", "invalid")))
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


def _from_hf_config(config: Mapping[str, object], source: str,
                    record_defaults: bool) -> Architecture:
    if not isinstance(config, Mapping):
        raise ConfigError("config", config, "a JSON object of config.json fields")
    r = _Reader(config, record_defaults=record_defaults)
    family = family_of(config)
    fields = _READERS[family.reader](r, family)
    fields["modeling"] = modeling_facts(config, family, fields["layers"])
    max_positions = fields.get("max_positions")
    if max_positions is not None and (
        isinstance(max_positions, bool) or not isinstance(max_positions, int) or max_positions < 1
    ):
        fields["max_positions"] = None  # informational only for rotary models
    name = config.get("_name_or_path")
    if isinstance(name, str) and name:
        fields.setdefault("name", name)
    return _build(fields, r.notes, source, config.get("model_type"))
