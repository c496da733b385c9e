"""Families of open-weight models among the presets: the smaller model a run could start from
instead, and the larger one a pre-training run could distil from.

A family here is a set of released checkpoints that share a tokenizer and a training recipe, so
that one stands in for another; only presets are listed, because only they can be priced
exactly. A model is known by its preset, or by the checkpoint name a ``config.json`` records
(``_name_or_path``, e.g. ``meta-llama/Llama-2-7b-hf``); a config without a known name belongs
to no family, and nothing is guessed from its shape.

- Llama 2: 7B and 70B (Touvron et al. 2023, "Llama 2: Open Foundation and Fine-Tuned Chat
  Models", Table 1; the 13B is released too but is no preset).
- Llama 3: 8B and 70B (Meta, "Introducing Meta Llama 3", April 2024).
- Llama 3.1 and 3.2: 1B and 3B (3.2), 8B, 70B and 405B (3.1), one tokenizer (Meta, "The Llama 3
  Herd of Models", 2024; the 3.2 text models were distilled from 3.1 8B and 70B). Llama 3.3 70B
  is a later fine-tune of the 3.1 70B architecture and stands alone.
- Qwen2.5: 0.5B to 72B; Qwen3 dense: 0.6B to 32B (Qwen team, "Qwen2.5 Technical Report" and
  "Qwen3 Technical Report", one tokenizer per generation). The Qwen3 mixtures of experts are
  left out: their total and active sizes do not order like the dense ones.
- Gemma 2: 2B, 9B and 27B (Gemma Team 2024, "Gemma 2", Table 1).
- Phi-3: mini and medium (Abdin et al. 2024, "Phi-3 Technical Report").
- OLMo 2: 7B and 13B (Team OLMo 2024, "2 OLMo 2 Furious").
- SmolLM2: 135M, 360M and 1.7B (Allal et al. 2025, "SmolLM2").
- Mistral: Mistral 7B and Mixtral 8x7B, which keeps Mistral 7B's layer shapes and tokenizer and
  replaces its MLP with 8 experts (Jiang et al. 2024, "Mixtral of Experts", Sec. 2).

Each preset's Hugging Face repository (the first word of its ``source``) names its checkpoint too.
"""

from __future__ import annotations

from ..vocabulary import normalize_name
from .architecture import Architecture
from .param_count import counts_of
from .presets import PRESETS

__all__ = [
    "CHECKPOINT_NAMES",
    "FAMILIES",
    "family_of",
    "known_preset",
    "larger_in_family",
    "smaller_in_family",
]

FAMILIES: dict[str, tuple[str, ...]] = {
    "llama-2": ("llama-2-7b", "llama-2-70b"),
    "llama-3": ("llama-3-8b", "llama-3-70b"),
    "llama-3.1": ("llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b", "llama-3.1-70b",
                  "llama-3.1-405b"),
    "qwen2.5": ("qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b", "qwen2.5-7b", "qwen2.5-14b",
                "qwen2.5-32b", "qwen2.5-72b"),
    "qwen3": ("qwen3-0.6b", "qwen3-1.7b", "qwen3-4b", "qwen3-8b", "qwen3-14b", "qwen3-32b"),
    "gemma-2": ("gemma-2-2b", "gemma-2-9b", "gemma-2-27b"),
    "phi-3": ("phi-3-mini-4k", "phi-3-medium-4k"),
    "olmo-2": ("olmo-2-7b", "olmo-2-13b"),
    "smollm2": ("smollm2-135m", "smollm2-360m", "smollm2-1.7b"),
    "mistral": ("mistral-7b", "mixtral-8x7b"),
}
"""Family → its presets."""

CHECKPOINT_NAMES: dict[str, tuple[str, ...]] = {
    "llama-2-7b": ("meta-llama/Llama-2-7b", "meta-llama/Llama-2-7b-hf",
                   "meta-llama/Llama-2-7b-chat", "meta-llama/Llama-2-7b-chat-hf"),
    "llama-2-70b": ("meta-llama/Llama-2-70b", "meta-llama/Llama-2-70b-hf",
                    "meta-llama/Llama-2-70b-chat", "meta-llama/Llama-2-70b-chat-hf"),
    "llama-3-8b": ("meta-llama/Meta-Llama-3-8B", "meta-llama/Meta-Llama-3-8B-Instruct"),
    "llama-3-70b": ("meta-llama/Meta-Llama-3-70B", "meta-llama/Meta-Llama-3-70B-Instruct"),
    "mistral-7b": ("mistralai/Mistral-7B-v0.1", "mistralai/Mistral-7B-Instruct-v0.1"),
    "mixtral-8x7b": ("mistralai/Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-Instruct-v0.1"),
}
"""Preset → the Hugging Face checkpoints with its architecture (base and instruction-tuned)."""


def _last_part(name: str) -> str:
    """``'meta-llama/Llama-2-7b-hf'`` or a local path ending in it → ``'llama27bhf'``."""
    return normalize_name(name.rstrip("/").rsplit("/", 1)[-1])


def known_preset(arch: Architecture | None) -> str | None:
    """The preset key of ``arch``: the preset itself, or the preset whose checkpoint names (or
    own name) match the config's recorded name; None when the model is not known by name."""
    if arch is None:
        return None
    for key, preset in PRESETS.items():
        if arch is preset or arch == preset:
            return key
    if arch.name is None:
        return None
    wanted = _last_part(arch.name)
    for key, preset in PRESETS.items():
        repository = (preset.source or "").split(" ", 1)[0]
        names = CHECKPOINT_NAMES.get(key, ())
        labels = (key, preset.name or key, *names, *([repository] if "/" in repository else []))
        if any(_last_part(label) == wanted for label in labels):
            return key
    return None


def family_of(preset: str) -> str | None:
    """The family a preset belongs to, or None."""
    for family, members in FAMILIES.items():
        if preset in members:
            return family
    return None


def _members_by_size(preset: str) -> list[tuple[float, str]]:
    family = family_of(preset)
    if family is None:
        return []
    return sorted((float(counts_of(PRESETS[m]).total), m) for m in FAMILIES[family])


def smaller_in_family(preset: str) -> str | None:
    """The largest preset of the same family with fewer parameters, or None."""
    size = float(counts_of(PRESETS[preset]).total)
    smaller = [m for n, m in _members_by_size(preset) if n < size]
    return smaller[-1] if smaller else None


def larger_in_family(preset: str) -> str | None:
    """The smallest preset of the same family with more parameters, or None."""
    size = float(counts_of(PRESETS[preset]).total)
    larger = [m for n, m in _members_by_size(preset) if n > size]
    return larger[0] if larger else None
