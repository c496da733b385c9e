"""Where a spec gets its model architecture from: a Hugging Face ``config.json``, a Hugging Face
model id (whose ``config.json`` is fetched from the Hub) or a preset.

Both the run spec and the memory spec accept any one of them; the architecture is resolved once,
when the spec is validated, so a bad config fails there with a :class:`ConfigError` naming the
field.

Whether a ``config`` may name a file is the process's :class:`ConfigPolicy`: the CLI and the
stdio server read local paths; the HTTP server reads none, or only those inside the directory
its operator gave (``--config-dir``). A ``model`` id reads no local path, so every policy
allows it (the Hub's file lands in the process's Hugging Face cache). No error shows a value read
from a config.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ..errors import ConfigError, InputError, UnreachableError, shown_value
from ..vocabulary import FiniteResult
from .architecture import Architecture, ConfigNote, ParamBreakdown
from .config_file import (
    MAX_CONFIG_BYTES,
    config_too_deep,
    load_config,
    parse_config_json,
    read_config_object,
    too_deep_error,
)
from .hf_config import from_hf_config, value_not_shown
from .hub import check_model_id, fetch_config
from .param_count import count_params, counts_of
from .presets import PRESETS, get_preset, preset_config

__all__ = [
    "COUNT_TOLERANCE",
    "DEFAULT_SEQ_LEN",
    "MAX_CONFIG_BYTES",
    "ConfigPolicy",
    "ModelSource",
    "ParamReport",
    "check_counts",
    "check_seq_len",
    "default_seq_len",
    "differs",
    "hf_config_of",
    "param_report",
    "report_of",
    "set_config_policy",
    "using_config_policy",
]

DEFAULT_SEQ_LEN = 4096
"""Training sequence length assumed when none is given (capped by a learned position table)."""


@dataclass(frozen=True)
class ConfigPolicy:
    """Whether a ``config`` may be a path to a file, and where that file may be."""

    allow_paths: bool = True
    """Read local paths (the CLI, the stdio server); False: inline objects only (HTTP)."""
    config_dir: Path | None = None
    """When set, a path is read only if it resolves inside this directory (``--config-dir``);
    a relative path is taken from it."""
    allow_hub: bool = True
    """Fetch a ``model`` id's config.json from the Hugging Face Hub; False (``--no-hub``): a
    server that must make no outbound request refuses model ids (inline configs and presets
    still work)."""


_policy = ConfigPolicy()
_RESOLVED = "compute_budget.resolved_architecture"
"""The validation-context key of an architecture already resolved from the same fields."""


def set_config_policy(policy: ConfigPolicy) -> ConfigPolicy:
    """Make ``policy`` the process's config policy (a server sets it at startup); returns the
    previous one."""
    global _policy
    previous, _policy = _policy, policy
    return previous


@contextlib.contextmanager
def using_config_policy(policy: ConfigPolicy) -> Iterator[ConfigPolicy]:
    """``policy`` for the duration of a ``with`` block (tests, embedding applications)."""
    previous = set_config_policy(policy)
    try:
        yield policy
    finally:
        set_config_policy(previous)


def _load_path(path: str) -> Architecture:
    """The architecture of the config file at ``path``, as the current policy allows."""
    policy = _policy
    if policy.config_dir is not None:
        return load_config(path, root=policy.config_dir)
    if policy.allow_paths:
        return load_config(path)
    error = ConfigError("config", None, "")
    error.args = ("config: paths are not read over HTTP; give the config.json object itself "
                  "(inline), or a path inside the directory the server's operator allows with "
                  "--config-dir",)
    raise error


class ModelSource(BaseModel):
    """Optional architecture: a local config.json path, its JSON object, a Hugging Face model id
    or a preset name (at most one of them)."""

    # ``model`` is the name callers use (--model, the tools' argument); the attribute is
    # ``model_id`` because ModelAndLayout.model is the resolved model. Either name validates.
    model_config = ConfigDict(extra="forbid", frozen=True, validate_by_name=True,
                              validate_by_alias=True)

    config: str | dict[str, Any] | None = Field(
        default=None,
        description="A config.json: a path, or the JSON object itself. "
                    "(Llama, Mistral/Mixtral, GPT-2, GPT-NeoX, Qwen2/2.5 and MoE, Qwen3 and MoE, "
                    "Gemma 2/3, Phi-3/4, OLMo 2, DeepSeek-V2/V3). Gives the "
                    "exact parameter counts, the shape and the attention and LM-head FLOPs.",
    )
    model_id: str | None = Field(
        default=None, alias="model",
        description="A Hugging Face model id, e.g. 'Qwen/Qwen2.5-7B'. Optionally "
                    "'org/name@revision'; its config.json is fetched from the Hub once and "
                    "cached (HF_HOME; HF_HUB_OFFLINE=1 reads the cache only). Instead of a "
                    "config or preset.",
    )
    preset: str | None = Field(
        default=None,
        description="A named model instead of a config, e.g. llama-3-8b. One of: "
                    + ", ".join(PRESETS) + ".",
    )

    _architecture: Architecture | None = PrivateAttr(default=None)

    @field_validator("model_id")
    @classmethod
    def _model_id(cls, value: str | None) -> str | None:
        return None if value is None else check_model_id(value)

    def resolved(self) -> dict[str, object]:
        """A validation context that hands this source's architecture to a spec built from the
        same fields (``Spec.model_validate(fields, context=source.resolved())``), so that a
        request reads its config once."""
        return {_RESOLVED: (self._source_key(), self._architecture)}

    def _source_key(self) -> tuple[object, ...]:
        return (self.config, self.model_id, self.preset)

    @model_validator(mode="after")
    def _load_architecture(self, info: ValidationInfo) -> ModelSource:
        known = (info.context or {}).get(_RESOLVED) if isinstance(info.context, dict) else None
        if isinstance(known, tuple) and known[0] == self._source_key():
            self._architecture = known[1]
            return self
        if self.model_id is not None and (self.config is not None or self.preset is not None):
            raise InputError("model", self.model_id,
                             "one of a model id, a config or a preset, not more than one")
        if self.config is not None and self.preset is not None:
            raise InputError("preset", self.preset, "either a config or a preset, not both")
        config: object = self.config
        if isinstance(self.config, str) and self.config.lstrip().startswith("{"):
            # the JSON object given inline, as a command line or a client may
            config = parse_config_json(self.config)
        if isinstance(config, dict):
            if config_too_deep(config):
                raise too_deep_error()
            if len(repr(config)) > MAX_CONFIG_BYTES:
                raise value_not_shown("config", "a config.json object of at most 1 MB")
            self._architecture = from_hf_config(config, source="config object")
        elif isinstance(config, str):
            self._architecture = _load_path(config)
        elif self.model_id is not None:
            if not _policy.allow_hub:
                raise InputError("model", self.model_id,
                                 "not on this server, which fetches nothing from the Hugging "
                                 "Face Hub: give a preset, or the config.json object as config")
            self._architecture = from_hf_config(_fetched(self.model_id),
                                                source=f"hf:{self.model_id}")
        elif self.preset is not None:
            self._architecture = get_preset(self.preset)
        return self

    @property
    def architecture(self) -> Architecture | None:
        """The architecture from the config, model id or preset; None when none was given."""
        if self.config is None and self.model_id is None and self.preset is None:
            return None
        return self._architecture


def default_seq_len(arch: Architecture | None) -> int:
    """4096 tokens, or the learned position table's size when that is smaller."""
    if arch is not None and arch.position_embedding == "learned" and arch.max_positions:
        return min(DEFAULT_SEQ_LEN, arch.max_positions)
    return DEFAULT_SEQ_LEN


def check_seq_len(seq_len: int, arch: Architecture | None) -> None:
    """A learned position table caps the sequence length."""
    if (arch is not None and arch.position_embedding == "learned" and arch.max_positions
            and seq_len > arch.max_positions):
        raise ConfigError("seq_len", seq_len,
                          f"at most the learned position table ({arch.max_positions} tokens)")


class ParamReport(FiniteResult):
    """Parameter counts of an architecture, by component."""

    model_config = ConfigDict(frozen=True)

    name: str | None = Field(description="Model name, when known.")
    source: str = Field(description="Where the architecture comes from.")
    params: int = Field(description="Total parameters.")
    active_params: int = Field(description="Parameters one token uses (equals params if dense).")
    breakdown: ParamBreakdown
    architecture: Architecture
    defaults_used: tuple[ConfigNote, ...] = Field(
        description="Fields absent from the config that took a documented default, and the "
                    "assumptions of the count, as codes (see ConfigNote)."
    )


def param_report(arch: Architecture) -> ParamReport:
    """The parameter breakdown of ``arch`` with its provenance."""
    counts = count_params(arch)
    return ParamReport(
        name=arch.name, source=arch.source, params=counts.total, active_params=counts.active,
        breakdown=counts, architecture=arch, defaults_used=arch.defaults_used,
    )


def report_of(source: ModelSource) -> ParamReport:
    """The parameter breakdown of the model ``source`` names."""
    arch = source.architecture
    if arch is None:
        raise InputError("config", None,
                         "a model: a config.json (a path or the object), a model id or a preset")
    return param_report(arch)


def differs(given: float | None, counted: float, tolerance: float = 0.02) -> bool:
    """True when a user-given count is more than ``tolerance`` away from the counted one."""
    return given is not None and not math.isclose(given, counted, rel_tol=tolerance)


COUNT_TOLERANCE = 0.25
"""How far ``params`` (or ``active_params``) given beside a config, model id or preset may be
from the count of the model it names, as a share of that count. A model's name rounds its count:
gemma-2-2b counts 2.61B (its name's 2B is 23% below), qwen3-30b-a3b 3.35B active (3B: 11%),
qwen2.5-7b 7.62B (7B: 8%); 25% lets such a name's count through, while the next size of a
family is at least 1.8× away (1B/3B, 7B/14B, 8B/70B): a count outside it names another model.
Within it, the exact count is used (an estimate notes a gap above 2%, :func:`differs`)."""


def check_counts(source: ModelSource, params: float | None,
                 active_params: float | None) -> None:
    """``params`` and ``active_params`` agree with the count of the model ``source`` gives,
    within :data:`COUNT_TOLERANCE`; InputError naming both otherwise (no model: nothing to
    check)."""
    arch = source.architecture
    if arch is None:
        return
    counts = counts_of(arch)
    if source.preset is not None:
        named = f"preset {source.preset!r}"
    elif source.model_id is not None:
        named = f"model {source.model_id!r}"
    else:
        named = "config"
    for name, given, counted in (("params", params, counts.total),
                                 ("active_params", active_params, counts.active)):
        if given is not None and abs(given - counted) > COUNT_TOLERANCE * counted:
            shown = shown_value(float(f"{counted:.3g}"))
            raise InputError(name, given, f"within {COUNT_TOLERANCE:.0%} of {shown}, what the "
                                          f"model given as {named} counts (or leave it out: "
                                          "that model gives the count)")


def hf_config_of(source: ModelSource) -> dict[str, Any]:
    """The Hugging Face config.json object behind ``source``: the preset's packaged one, the
    config given (a path read as :func:`.config_file.load_config` reads it, or the object), or
    the Hub id's cached config.json. For a program that builds the model itself (the probe)."""
    if source.preset is not None:
        return preset_config(source.preset)
    if isinstance(source.config, dict):
        return dict(source.config)
    if isinstance(source.config, str):
        if source.config.lstrip().startswith("{"):
            return parse_config_json(source.config)
        return read_config_object(source.config)
    if source.model_id is not None:
        return _fetched(source.model_id)
    raise InputError("model", None, "a preset, a config or a Hugging Face model id")


def _fetched(model_id: str) -> dict[str, Any]:
    """``model_id``'s config.json from the Hub; when it cannot be fetched and a preset is the
    same checkpoint (its source names the repository), the error names the preset, which needs
    no network."""
    try:
        return fetch_config(model_id)
    except UnreachableError as exc:
        same = [key for key, arch in PRESETS.items()
                if arch.source.lower().startswith(model_id.lower() + " ")]
        if not same:
            raise
        raise UnreachableError(exc.field, exc.value, f"{exc.allowed}; or give it as preset "
                                                     f"'{same[0]}' (the same model, no network "
                                                     "needed)") from None
