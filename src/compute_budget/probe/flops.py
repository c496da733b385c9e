"""Model FLOPs of a probe's step, counted as the estimate counts them, so that the probe's MFU
and the estimate's agree.

The count is :func:`compute_budget.skill.estimate.token_flops`'s for a config: 6·N_active
(the architecture's exact count) plus the causal attention a context beyond the calibration
context adds (:func:`~compute_budget.skill.model.flops.flop_counts`, ``estimate``). With LoRA,
as there: the frozen weights skip their weight gradients (−2·N_active) and the adapters train
at 6 FLOPs per active adapter weight (6·adapters·N_active/N). A config the architecture reader
does not know (a ``model_type`` transformers builds but :mod:`..skill.model.hf_config` does
not read) is counted from the built model's parameters as if all were active: 6·N plus the
attention of a ``layers`` × ``hidden`` shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..skill.errors import ComputeBudgetError
from ..skill.estimate import FROZEN_SAVING_PER_PARAM
from ..skill.model.flops import flop_counts, flops_per_token
from ..skill.model.hf_config import from_hf_config
from ..skill.model.param_count import counts_of
from ..skill.vocabulary import FLOPS_PER_PARAM_PER_TOKEN

__all__ = ["model_flops_per_token"]


def model_flops_per_token(config: Mapping[str, Any], seq_len: int, *, params: int,
                          trainable: int, lora: bool, layers: int, hidden: int) -> float:
    """Model FLOPs per training token of ``config`` at ``seq_len`` (see the module);
    ``params`` and ``trainable`` are the built model's, ``layers`` × ``hidden`` its shape."""
    try:
        arch = from_hf_config(config)
    except (ComputeBudgetError, ValueError):
        arch = None
    if arch is not None:
        breakdown = flops_per_token(arch, seq_len)
        counts = flop_counts(breakdown.six_n, seq_len, arch=arch)
        active, total = float(breakdown.active_params), float(counts_of(arch).total)
    else:
        counts = flop_counts(FLOPS_PER_PARAM_PER_TOKEN * params, seq_len, layers=layers,
                             hidden=hidden)
        active = total = float(params)
    per_token = counts.estimate
    if lora:
        adapters = float(trainable)
        per_token += (FLOPS_PER_PARAM_PER_TOKEN * adapters * active / total
                      - FROZEN_SAVING_PER_PARAM * active)
    return per_token
