"""The compute-optimal global batch: how many tokens one optimizer step takes at a compute.

The DeepSeek LLM fit (Bi et al. 2024, "DeepSeek LLM: Scaling Open-Source Language Models with
Longtermism", eq. 1)::

    B_opt = 0.2920 · C^0.3271    tokens per optimizer step
    C     = 6 · N · D            FLOPs of the run: N active parameters, D training tokens

The form, the constants and the unit (tokens) were checked against a secondary source (a
calculator that implements the paper's hyperparameter laws, B_opt beside
η_opt = 0.3118 · C^−0.1250), not against the paper's own text: the equation number is
unconfirmed. The paper's C is M·D with M the non-embedding FLOPs per token (attention
included); 6·N·D here counts the embeddings and leaves the attention out, which for common
shapes moves C by tens of per cent and B_opt (as C^0.33) by a few per cent. The fit comes from
DeepSeek's pre-training runs; for a fine-tune or far outside their compute it is a rough guide.
The plan search caps its batch with it; the run estimate uses it as the default batch over which
an offloaded optimizer step is amortised.
"""

from __future__ import annotations

import math

from ..quantities import FlopCount, validated

__all__ = ["BATCH_FIT_COEFFICIENT", "BATCH_FIT_EXPONENT", "BATCH_FIT_SOURCE",
           "optimal_batch_tokens"]

BATCH_FIT_COEFFICIENT = 0.2920
"""B_opt = 0.2920 · C^0.3271 tokens (DeepSeek LLM, Bi et al. 2024, eq. 1; C in FLOPs)."""
BATCH_FIT_EXPONENT = 0.3271
"""The exponent of C in that fit."""
BATCH_FIT_SOURCE = ("DeepSeek LLM (Bi et al. 2024), eq. 1: B_opt = 0.2920·C^0.3271 tokens, "
                    "C = 6·N·D FLOPs")
"""Where the default batch comes from."""


def batch_of(compute_flops: float) -> float:
    """:func:`optimal_batch_tokens` without argument checks (for callers that checked C)."""
    return BATCH_FIT_COEFFICIENT * math.pow(compute_flops, BATCH_FIT_EXPONENT)


@validated
def optimal_batch_tokens(compute_flops: FlopCount) -> float:
    """The compute-optimal global batch in tokens for a run of ``compute_flops`` FLOPs::

        B_opt = 0.2920 · C^0.3271    (DeepSeek LLM, Bi et al. 2024, eq. 1; module docstring)
    """
    return batch_of(compute_flops)
