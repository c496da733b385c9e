"""Named architectures (presets), stored as data: ``data/presets.json``.

Each preset is the checkpoint's ``config.json`` fields that :mod:`.hf_config` reads (as published
on the Hugging Face Hub), its name, where the numbers come from, and the checkpoint's published
parameter count with its source: the Hub's safetensors total where there is one (exact), or
the paper's or model card's rounded figure (``exact`` false, ``within`` its rounding); a
safetensors total that also holds values that are no parameters says how many
(``stored_extra``). The tests check the counted total against it. Presets are named after the
checkpoint, lower-case with hyphens (``llama-3.1-405b``, ``qwen3-30b-a3b``, ``gemma-2-9b``).

A preset is read through the same reader as a user's config, without listing the family
defaults it fills in (the checkpoint's own modeling code fills them: they are facts of the
checkpoint); the assumptions of the count (a sliding window counted as full attention, a module
left out) are listed in ``defaults_used``, with the preset's own ``assumptions`` (sentences of
the data, each naming its source) first, as ``preset_assumption`` notes.
"""

from __future__ import annotations

import difflib
import json
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConfigError
from .architecture import Architecture, ConfigNote
from .hf_config import read_hf_config

__all__ = ["PRESETS", "PUBLISHED_PARAMS", "PublishedParams", "get_preset", "list_presets",
           "preset_config"]


class PublishedParams(BaseModel):
    """A checkpoint's parameter count as its publisher gives it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    total: int = Field(gt=0, description="All parameters, as published.")
    exact: bool = Field(
        description="True: an exact count (the safetensors total); False: a rounded figure."
    )
    within: int = Field(
        default=0, ge=0,
        description="For a rounded figure, the rounding: the true count is total ± within "
                    "parameters; 0 for an exact count.",
    )
    stored_extra: int = Field(
        default=0, ge=0,
        description="Values in the published total that are no parameter of the model: rotary "
                    "inv_freq buffers saved with the weights (Llama 2), or a tied embedding "
                    "saved a second time as lm_head.weight (Qwen3 0.6B, 1.7B); 0 for none.",
    )
    source: str = Field(description="Where the count is published.")


def _load() -> tuple[dict[str, Architecture], dict[str, PublishedParams]]:
    text = resources.files("compute_budget.skill").joinpath("data/presets.json").read_text(
        encoding="utf-8"
    )
    entries: dict[str, dict[str, Any]] = json.loads(text)["presets"]
    presets: dict[str, Architecture] = {}
    published: dict[str, PublishedParams] = {}
    for key, entry in entries.items():
        arch = read_hf_config(entry["config"], source=entry["source"], record_defaults=False)
        presets[key] = arch.model_copy(update={
            "name": entry["name"],
            "defaults_used": (
                *(ConfigNote(code="preset_assumption", reference=text)
                  for text in entry.get("assumptions", ())),
                *arch.defaults_used,
            ),
        })
        published[key] = PublishedParams.model_validate(entry["published_params"])
    return presets, published


PRESETS, PUBLISHED_PARAMS = _load()
"""Named architectures (each ``source`` says where its numbers come from), and the parameter
count each checkpoint's publisher gives."""


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


def preset_config(name: str) -> dict[str, Any]:
    """The Hugging Face config.json object the preset ``name`` was read from (a copy)."""
    get_preset(name)  # raises for an unknown name
    key = _preset_key(name)
    text = resources.files("compute_budget.skill").joinpath("data/presets.json").read_text(
        encoding="utf-8")
    config: dict[str, Any] = json.loads(text)["presets"][key]["config"]
    return config
