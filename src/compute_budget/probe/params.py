"""Parameter counts of a config without allocating it: the model built on torch's ``meta``
device (shapes only), LoRA adapters included."""

from __future__ import annotations

from typing import Any

from .backend import load
from .build import build_model
from .errors import ProbeError

__all__ = ["count_params"]

torch: Any = load("torch")


def count_params(cfg: Any, setup: Any) -> tuple[int, int] | None:
    """All parameters of ``cfg`` built as the probe builds it, and those the optimizer
    updates (the adapters alone with LoRA); None when the family cannot be built on the meta
    device (the caller then counts otherwise)."""
    try:
        model = build_model(cfg, device=torch.device("meta"),
                            attn_implementation=setup.attn_implementation, recompute="none",
                            lora_rank=setup.lora_rank)
    except ProbeError:
        raise
    except Exception:  # a modeling file that computes with its weights while it is built
        return None
    params = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return int(params), int(trainable)
