"""Activation memory: the bytes a training step keeps for the backward pass, by architecture.

Per token and per decoder layer, 16-bit activations, hidden size h, query heads a of size Q,
key/value heads g, value head size Q_v, MLP width f, dropout on or off. A tensor of n channels
kept in bf16 costs 2·n bytes per token, in fp32 4·n, a dropout mask n (one byte per element).

Two training stacks keep different tensors:

``megatron`` (Megatron-LM / NeMo with fused kernels): Korthikanti et al. 2022, "Reducing
Activation Recomputation in Large Transformer Models", Sec. 4.1, term by term, with the shapes
generalised to grouped-query attention and gated MLPs::

    norms           2 × 2h                     the inputs of the two (fused) norms
    attention       2h                         the QKV projection's input
                    + 2·a·Q + 2·g·Q + 2·g·Q_v  Q, K and V for the attention kernel
                    + 2·a·Q_v                  the output projection's input
                    + 5·a·s (+ dropout)        softmax output, dropout mask and output; neither
                                               FlashAttention nor selective recomputation keeps it
    MLP, plain      2h + 2f + 2f               fc1 input, GeLU input, fc2 input
    MLP, gated      2h + 4f + 2f               fc1 input, the fused gate-and-up output, fc2 input
    dropout         h per hidden dropout       two per layer, when dropout is on

With a = g, Q = h/a, f = 4h and dropout on this is their 34·h + 5·a·s.

``hf`` (Hugging Face transformers, SDPA attention, eager PyTorch elsewhere): what
``benchmarks/activation_memory.py`` measured (torch 2.13, transformers 5.24; the breakdown is in
``benchmarks/data/activation_memory.json``). Each RMSNorm keeps its input upcast to fp32 (4h)
and the normalised bf16 value (2h) for the weight's gradient, but not its bf16 input; RoPE keeps
nothing large; SDPA keeps its rotated Q and K, V, the output (shared with the output
projection's input) and an fp32 log-sum-exp per head (4a); an unfused gated MLP keeps the gate
output (for the activation), the up output and the activation output (for the product) and the
product (for the down projection)::

    norms           2 × (4h + 2h), and each norm's output as the next projection's input (2h)
    attention       2·a·Q + 2·g·Q + 2·g·Q_v + 2·a·Q_v + 4a
    MLP, gated      2f + 2f + 2f + 2f
    MLP, plain      2f + 2f

Mixture of experts (both stacks): the router keeps its fp32 probabilities (4·E) and a few
index tensors per routed slot (about 40 bytes each); each of the k experts a token is routed to
keeps its copy of the token (2h), its MLP's tensors as above, and its output for the weighted
sum (2h); shared experts run on every token like a dense MLP, and a gated shared expert keeps
its output for the gate (2h).

Tensor parallelism t splits everything but the norms' tensors, the projections' inputs and the
hidden dropout masks (Korthikanti: 10 + 24/t for GPT); sequence parallelism splits those too.
Full recomputation keeps each layer's 16-bit input (2h) and, while one layer is recomputed, that
layer's full activations. The loss keeps the fp32 log-softmax of the logits (4·V bytes per
token, measured); on the ``hf`` stack the model's bf16 logits (2·V) and, when the backward pass
starts, their fp32 gradient (4·V) exist beside it, so the peak counts 10·V there; Megatron's
vocabulary-parallel loss works in place on 4·V / t.
"""

from __future__ import annotations

from ..model.shape import ModelShape
from ..vocabulary import Recompute, Stack

__all__ = [
    "ActivationCoefficients",
    "activation_bytes",
    "layer_bytes_per_token",
    "logits_bytes",
]


BF16 = 2
FP32 = 4
MASK = 1
ROUTING_BYTES_PER_SLOT = 40
"""Index and weight tensors the router and the expert dispatch keep per routed slot (int64
top-k and gather indices, fp32 routing weights): measured 33–38 bytes in transformers 5."""
LOGITS_BYTES: dict[Stack, float] = {"hf": FP32 + BF16 + FP32, "megatron": FP32}
"""Bytes per token per vocabulary entry at the loss (module docstring)."""


class ActivationCoefficients:
    """Bytes per token of one layer, split into what tensor parallelism shares and splits."""

    __slots__ = ("replicated", "scores", "split")

    def __init__(self, replicated: float, split: float, scores: float) -> None:
        self.replicated = replicated
        """Bytes every tensor-parallel rank keeps in full (norm tensors, projection inputs,
        hidden dropout masks); sequence parallelism splits them."""
        self.split = split
        """Bytes tensor parallelism splits (per-head and MLP-width tensors)."""
        self.scores = scores
        """Bytes of the s×s attention scores per token (already × s); 0 with FlashAttention."""


def _mlp(shape: ModelShape, width: int, stack: Stack) -> float:
    """Bytes per token an MLP of ``width`` keeps beyond its input."""
    if not shape.gated:
        return BF16 * width * 2  # activation input and output (fc2 input)
    if stack == "megatron":
        return BF16 * width * 3  # the fused gate-and-up output (2f) and the fc2 input
    return BF16 * width * 4  # gate output, up output, activation output, product


def _attention_split(shape: ModelShape, stack: Stack) -> float:
    """Per-head tensors the attention keeps (split by tensor parallelism)."""
    a, g = shape.heads, shape.kv_heads
    q, qv = shape.head_dim, shape.v_head_dim
    kept = BF16 * (a * q + g * q + g * qv + a * qv)  # Q, K, V and the attention output
    if stack == "hf":
        kept += FP32 * a  # the log-sum-exp
        if shape.mla is not None:
            m = shape.mla  # the latents and their norms (upcast and normalised)
            latents = (m.q_lora_rank or 0) + m.kv_lora_rank
            kept += (BF16 + FP32 + BF16) * latents
    return kept


def layer_bytes_per_token(
    shape: ModelShape,
    stack: Stack,
    *,
    moe: bool,
    seq_len: int,
    flash_attention: bool = True,
    recompute: Recompute = "none",
) -> ActivationCoefficients:
    """Bytes per token one layer keeps for the backward pass (module docstring), before
    parallelism; ``moe`` for a mixture-of-experts layer."""
    h = shape.hidden
    norm = (FP32 + BF16) * h if stack == "hf" else BF16 * h  # kept by each of the two norms
    replicated = 2 * norm + 2 * BF16 * h  # the norms; the attention's and the MLP's input
    dropout = shape.dropout > 0
    if dropout:
        replicated += 2 * MASK * h  # after attention and after the MLP
    split = _attention_split(shape, stack)
    if moe:
        k = shape.experts_per_token
        split += FP32 * shape.experts + ROUTING_BYTES_PER_SLOT * k  # router probabilities
        split += k * (2 * BF16 * h + _mlp(shape, shape.expert_intermediate, stack))
        if shape.shared_experts:
            split += shape.shared_experts * _mlp(shape, shape.shared_intermediate, stack)
            if shape.shared_expert_gate:
                split += BF16 * h  # the shared expert's output, kept for its sigmoid gate
    else:
        split += _mlp(shape, shape.intermediate, stack)
    scores = 0.0
    if not flash_attention and recompute == "none":
        # softmax output, and with dropout its mask and output (Korthikanti: 5·a·s)
        scores = (BF16 + (MASK + BF16 if dropout else 0)) * shape.heads * seq_len
    return ActivationCoefficients(replicated, split, scores)


def _per_token(c: ActivationCoefficients, tp: int, sp: bool) -> float:
    return c.replicated / (tp if sp else 1) + (c.split + c.scores) / tp


def logits_bytes(seq_len: int, micro_batch: int, vocab: int, tp: int = 1,
                 stack: Stack = "megatron") -> float:
    """Bytes at the loss: LOGITS_BYTES[stack]·s·b·V / t (module docstring).

    Not in Korthikanti et al.'s per-layer count; with large vocabularies it rivals a layer's
    activations (Wijmans et al. 2024, "Cut Your Losses in Large-Vocabulary Language Models").
    Vocabulary-parallel over the tensor-parallel ranks.
    """
    return LOGITS_BYTES[stack] * seq_len * micro_batch * vocab / tp


def activation_bytes(
    shape: ModelShape,
    *,
    stack: Stack,
    seq_len: int,
    micro_batch: int,
    tp: int = 1,
    pp: int = 1,
    sp: bool = False,
    recompute: Recompute = "none",
    flash_attention: bool = True,
) -> tuple[float, float]:
    """(activations, of which logits) in bytes on the busiest device.

    With a 1F1B pipeline of p stages the first stage holds p micro-batches in flight, each for
    L/p layers: L layers' worth in all (Korthikanti et al. 2022, Sec. 4.2.3), so pipeline
    parallelism does not shrink the first stage's activations.
    """
    tokens = seq_len * micro_batch
    kinds = [(False, shape.dense_layers), (True, shape.moe_layers)]
    coefficients = [(layer_bytes_per_token(shape, stack, moe=moe, seq_len=seq_len,
                                           flash_attention=flash_attention, recompute=recompute),
                     count) for moe, count in kinds if count]
    in_flight_share = -(-shape.layers // pp) * pp / shape.layers
    if recompute == "full":
        kept = BF16 * shape.hidden / (tp if sp else 1) * shape.layers * in_flight_share
        # one layer's activations while it is recomputed for its backward pass
        working = max(_per_token(c, tp, sp) for c, _ in coefficients)
        per_token = kept + working
    else:
        per_token = sum(_per_token(c, tp, sp) * n for c, n in coefficients) * in_flight_share
    logits = 0.0 if shape.vocab is None else logits_bytes(seq_len, micro_batch, shape.vocab, tp,
                                                          stack)
    return per_token * tokens + logits, logits
