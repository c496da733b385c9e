"""Fine-tuning as people describe it: LoRA adapters and quantized frozen base weights (QLoRA).

LoRA (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models", Sec. 4.1) freezes a
linear layer W (d_in × d_out) and trains B·A beside it, A of r × d_in and B of d_out × r::

    trainable per adapted layer   r · (d_in + d_out)

``attention`` adapts the attention projections (q, k, v, o; MLA's down- and up-projections);
``all-linear`` adapts every linear layer of the decoder, the MLPs and every expert included, but
not the LM head: QLoRA's choice (Dettmers et al. 2023, "QLoRA: Efficient Finetuning of
Quantized LLMs", Sec. 4: "LoRA on all linear transformer block layers"), and PEFT's
``target_modules="all-linear"``.

QLoRA stores the frozen decoder linear weights in 4-bit NormalFloat with double quantization,
4 + 8/64 + 32/(64·256) ≈ 4.127 bits per parameter (Dettmers et al. 2023, Sec. 3); 8-bit weights
(LLM.int8, Dettmers et al. 2022) cost a byte each plus one fp32 scale per row, negligible. The
embedding, the norms and the LM head stay in 16 bits.
"""

from __future__ import annotations

from typing import Annotated, Literal

from ..model.shape import ModelShape
from ..quantities import WholeNumberText

__all__ = [
    "BITS_PER_WEIGHT",
    "LORA_TARGETS",
    "QLORA_BITS",
    "LoraTargets",
    "WeightsBits",
    "decoder_linear_weights",
    "lora_params",
    "quantized_weights",
]

LoraTargets = Literal["attention", "all-linear"]
LORA_TARGETS: tuple[LoraTargets, ...] = ("attention", "all-linear")
WeightsBits = Annotated[Literal[4, 8, 16], WholeNumberText]
"""4, 8 or 16; text such as a CSV cell's ``"4"`` reads as the number, as for any whole number."""

QLORA_BITS = 4
"""Storage bits of a QLoRA base (NF4, Dettmers et al. 2023): what the QLoRA suggestions use."""

BITS_PER_WEIGHT: dict[int, float] = {4: 4 + 8 / 64 + 32 / (64 * 256), 8: 8.0, 16: 16.0}
"""Storage bits per frozen weight: NF4 with double quantization, LLM.int8, bf16."""

_ATTENTION = frozenset({"q_proj", "k_proj", "v_proj", "o_proj", "q_a_proj", "q_b_proj",
                        "kv_a_proj", "kv_b_proj"})


def lora_params(shape: ModelShape, rank: int, targets: LoraTargets = "all-linear") -> int:
    """Trainable LoRA parameters of rank ``rank`` on ``targets`` (module docstring)."""
    return sum(rank * (d_in + d_out) * copies
               for (name, d_in, d_out), copies in shape.linear_layers()
               if targets == "all-linear" or name in _ATTENTION)


def decoder_linear_weights(shape: ModelShape) -> int:
    """Weights of every linear layer of the decoder, every expert included: what 4- or 8-bit
    quantization of the frozen base applies to."""
    return sum(d_in * d_out * copies for (_, d_in, d_out), copies in shape.linear_layers())


def quantized_weights(shape: ModelShape, total: float) -> float:
    """Weights a 4- or 8-bit frozen base stores quantized: its decoder's linear layers (at most
    ``total``, for a shape given without a config)."""
    return min(float(decoder_linear_weights(shape)), total)
