"""What kind of run is being planned: it decides which advice and which alternatives make sense.

``pretrain`` (the default) trains a model from scratch; ``continued-pretrain`` and ``fine-tune``
start from a given model (no from-scratch alternatives; LoRA, fewer tokens first, a smaller base
of the same family); an ``ablation`` compares two settings, so its uncertainty shrinks with more
seeds or a larger evaluation set rather than with "more small-scale data".
"""

from __future__ import annotations

from typing import Literal

__all__ = ["DEFAULT_RUN_KIND", "RUN_KINDS", "RunKind", "starts_from_a_model"]

RunKind = Literal["pretrain", "continued-pretrain", "fine-tune", "ablation"]
RUN_KINDS: tuple[RunKind, ...] = ("pretrain", "continued-pretrain", "fine-tune", "ablation")
DEFAULT_RUN_KIND: RunKind = "pretrain"


def starts_from_a_model(kind: RunKind) -> bool:
    """True for runs that continue from an existing model (no from-scratch alternatives)."""
    return kind in ("continued-pretrain", "fine-tune")
