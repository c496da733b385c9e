"""Transformer architectures: the shape of a model, where it came from, and its exact size.

An :class:`Architecture` is built three ways: by hand, from a preset (:func:`get_preset`) or from a
Hugging Face ``config.json`` (:func:`from_hf_config`, :func:`load_config`). Whatever a config
leaves out and is filled with the family's documented default is listed in ``defaults_used``, so
a guess is never shown as a fact.

This module gathers the names of the modules that do the work, one concept each:

- :mod:`.arch_model`: the models (:class:`Architecture`, :class:`LatentAttention`,
  :class:`ParamBreakdown`);
- :mod:`.param_count`: the exact parameter count by component (:func:`count_params`) and the
  tensor-parallel check;
- :mod:`.hf_config`: the Hugging Face config readers, one table of families (:data:`FAMILIES`);
- :mod:`.config_file`: the safe local file reader (:func:`load_config`) and its size and depth
  checks;
- :mod:`.presets`: the named architectures, stored as data (``data/presets.json``).
"""

from __future__ import annotations

from .arch_model import (
    Architecture,
    AttentionBias,
    LatentAttention,
    NormKind,
    ParamBreakdown,
    PositionEmbedding,
    QkNorm,
)
from .config_file import (
    MAX_CONFIG_BYTES,
    MAX_CONFIG_DEPTH,
    config_too_deep,
    load_config,
    parse_config_json,
    too_deep_error,
)
from .hf_config import FAMILIES, SUPPORTED_MODEL_TYPES, from_hf_config, value_not_shown
from .param_count import check_tensor_parallel, count_params
from .presets import PRESETS, PUBLISHED_PARAMS, get_preset, list_presets

__all__ = [
    "FAMILIES",
    "MAX_CONFIG_BYTES",
    "MAX_CONFIG_DEPTH",
    "PRESETS",
    "PUBLISHED_PARAMS",
    "SUPPORTED_MODEL_TYPES",
    "Architecture",
    "AttentionBias",
    "LatentAttention",
    "NormKind",
    "ParamBreakdown",
    "PositionEmbedding",
    "QkNorm",
    "check_tensor_parallel",
    "config_too_deep",
    "count_params",
    "from_hf_config",
    "get_preset",
    "list_presets",
    "load_config",
    "parse_config_json",
    "too_deep_error",
    "value_not_shown",
]
