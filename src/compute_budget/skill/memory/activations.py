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

``hf`` (Hugging Face transformers 5, eager PyTorch around the attention kernel): what
``benchmarks/activation_memory.py`` measured, family by family (torch 2.13, transformers 5.24;
the tensor-by-tensor breakdown is in ``benchmarks/data/activation_memory.json``). The shape's
:class:`~..model.modeling.ModelingFacts` say which family's code runs::

    norms           each of the layer's norms (2; Gemma: 4), over h channels:
                      RMSNorm   its input upcast to fp32 (4h), the normalised value kept for
                                the weight's gradient (2h; 4h where the weight multiplies in
                                fp32: Gemma, OLMo 2) and the fp32 rsqrt (4)
                      LayerNorm its 16-bit input (2h; one for both norms of GPT-NeoX's parallel
                                residual) and the fp32 mean and rstd (8)
                    + the attention's and the MLP's 16-bit inputs, 2h each
    QK-norm         the same RMSNorm over each query and key element (a·Q + g·Q of them), an
                    rsqrt per head (Qwen3, Gemma 3) or per projection (OLMo 2)
    attention       SDPA (flash or memory-efficient kernel): the rotated Q (2·a·Q), K (2·g·Q),
                    V (2·g·Q_v), the output, shared with the output projection's input
                    (2·a·Q_v), and an fp32 log-sum-exp per head (4a). Where Q, K and V are
                    slices of one projection and Q and K are rotated (Phi-3, GPT-NeoX), V keeps
                    the whole output, 2·(a·Q + g·Q + g·Q_v); where RoPE concatenates the query
                    (Phi-3, GPT-NeoX) the output is copied for the projection (+ 2·a·Q_v). In a
                    sliding-window layer at s ≥ the window transformers passes a mask: SDPA
                    keeps it as a 16-bit s×s bias per sequence (2·s per token) and gets K and V
                    repeated to all a heads (when 1 < g < a; at g = 1 the repeat is a view).
                    eager (Gemma 2's default): K and V repeated to all a heads, the output
                    copied for the projection, no log-sum-exp, and per head the s×s scores: the
                    fp32 softmax output and its 16-bit cast (6·a·s), and the tanh of
                    soft-capped scores (+ 2·a·s)
    MLA             each latent's norm and its up-projection's input (8 per latent channel and
                    an rsqrt), Q and K of a·Q each, V a slice of the key-value up-projection's
                    output, which stays whole (2·a·(Q_nope + Q_v)), the output, the log-sum-exp
    MLP, gated      gate output (the activation's input), up output, activation output (both
                    the product's inputs), product (the down projection's input): 4 × 2f, fused
                    gate-and-up or not
    MLP, plain      the activation's input and the second matrix's input, 2 × 2f; an activation
                    written in Python keeps more (GPT-2's gelu_new: 4 × 2f for its pow, tanh and
                    products, :data:`ACTIVATION_TENSORS`)
    dropout         h per hidden dropout (a bool mask on a GPU), two per layer, when it is on

Mixture of experts (both stacks): the router keeps its fp32 probabilities (4·E), an fp32 copy
of its input where the family's router runs in fp32 (DeepSeek, hf: 4h) and a few index tensors
per routed slot (about 40 bytes each); each of the k experts a token is routed to keeps its
copy of the token (2h), its MLP's tensors as above, and its output for the weighted sum (2h);
shared experts run on every token like a dense MLP, and a gated shared expert keeps its output
for the gate (2h). DeepSeek-V3's group-limited routing keeps about 16·(groups + 1) + E bytes
more per token (int64 group indices, a bool mask), not counted: 0.1% of a layer.

Tensor parallelism t splits everything but the norms' tensors, the projections' inputs, the
hidden dropout masks and an SDPA mask (Korthikanti: 10 + 24/t for GPT); sequence parallelism
splits those too. Full recomputation keeps each layer's 16-bit input (2h) and, while one layer
is recomputed, that layer's full activations, its s×s scores included; selective recomputation
drops the scores. The loss keeps the fp32 log-softmax of the logits (4·V bytes per token,
measured); on the ``hf`` stack the model's bf16 logits (2·V) and, when the backward pass
starts, their fp32 gradient (4·V) exist beside it, so the peak counts 10·V there, and 12·V where
the final logits are soft-capped (the tanh output, 2·V, measured on Gemma 2); Megatron's
vocabulary-parallel loss works in place on 4·V / t.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from ..hardware.measured import ProbeResult
from ..model.shape import ModelShape
from ..vocabulary import Recompute, Stack

__all__ = [
    "ACTIVATION_TENSORS",
    "ActivationCoefficients",
    "AttentionCounted",
    "activation_bytes",
    "attention_counted",
    "kv_heads_kept",
    "layer_bytes_per_token",
    "layer_slope",
    "logits_bytes",
    "logits_bytes_per_element",
    "probe_scale",
]


BF16 = 2
FP32 = 4
MASK = 1
ROUTING_BYTES_PER_SLOT = 40
"""Index and weight tensors the router and the expert dispatch keep per routed slot (int64
top-k and gather indices, routing weights): measured 33–40 bytes in transformers 5."""
LOGITS_BYTES: dict[Stack, float] = {"hf": FP32 + BF16 + FP32, "megatron": FP32}
"""Bytes per token per vocabulary entry at the loss (module docstring)."""
ACTIVATION_TENSORS: dict[str, int] = {"gelu_new": 4}
"""Tensors of the MLP's width an activation keeps, by its config name, where it is written in
Python (GPT-2's gelu_new, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))): x for the pow, the tanh,
and both factors of the last product, measured); any other keeps its input, 1 (a fused torch
op: silu, gelu, gelu_pytorch_tanh, relu)."""
EAGER_SCORE_BYTES = FP32 + BF16
"""Bytes per s×s score element eager attention keeps: the fp32 softmax output and its 16-bit
cast, the second matmul's input (measured)."""
GQA_KERNEL_MAX_HEAD_DIM = 256
"""transformers lets SDPA take grouped K and V without repeating them at head sizes up to 256
(``use_gqa_in_sdpa``)."""


AttentionCounted = Literal["flash", "eager", "eager_default"]
"""How the attention's tensors are counted: flash (kernels that keep no s×s scores: SDPA's fused
kernels on the hf stack, FlashAttention), eager (the s×s scores kept, as the user asked), or
eager_default (the hf stack, nothing asked, and transformers' default attention for the family
is eager: Gemma 2, whose soft-capping SDPA lacks)."""


def attention_counted(flash_attention: bool | None, stack: Stack,
                      shape: ModelShape) -> AttentionCounted:
    """The attention counted: as the user set ``flash_attention``; else transformers' default
    for the family on the hf stack, fused kernels on megatron."""
    if flash_attention is not None:
        return "flash" if flash_attention else "eager"
    return "eager_default" if stack == "hf" and shape.modeling.attention == "eager" else "flash"


class ActivationCoefficients:
    """Bytes per token of one layer, split into what tensor parallelism shares and splits."""

    __slots__ = ("replicated", "scores", "split")

    def __init__(self, replicated: float, split: float, scores: float) -> None:
        self.replicated = replicated
        """Bytes every tensor-parallel rank keeps in full (norm tensors, projection inputs,
        hidden dropout masks, an SDPA mask); sequence parallelism splits them."""
        self.split = split
        """Bytes tensor parallelism splits (per-head and MLP-width tensors)."""
        self.scores = scores
        """Bytes of the s×s attention scores per token (already × s); 0 with FlashAttention."""


def _norm(shape: ModelShape, width: int, rows: int = 1) -> float:
    """Bytes per token a norm over ``width`` channels (in ``rows`` rows) keeps on the hf stack."""
    if shape.norm == "layernorm":
        return BF16 * width + 2 * FP32 * rows  # its input; mean and rstd
    normalised = FP32 if shape.modeling.norm_fp32 else BF16
    return (FP32 + normalised) * width + FP32 * rows  # fp32 input, normalised value, rsqrt


def _replicated(shape: ModelShape, stack: Stack) -> float:
    """The norms' tensors, the attention's and the MLP's inputs and the hidden dropout masks."""
    h = shape.hidden
    norms: float
    if stack == "megatron":
        norms = 2 * BF16 * h  # the inputs of the two (fused) norms
    else:
        norms = shape.layer_norms * _norm(shape, h)
        if shape.shared_norm_input and shape.norm == "layernorm":
            norms -= (shape.layer_norms - 1) * BF16 * h  # one input read by every norm
    dropout = 2 * MASK * h if shape.dropout > 0 else 0  # after attention and after the MLP
    return norms + 2 * BF16 * h + dropout


def _qk_norm(shape: ModelShape) -> float:
    """The query and key norms (hf stack)."""
    if shape.qk_norm == "none":
        return 0.0
    a, g = shape.heads, shape.kv_heads
    rows = a + g if shape.qk_norm == "head" else 2
    return _norm(shape, (a + g) * shape.head_dim, rows)


def kv_heads_kept(shape: ModelShape, *, eager: bool, masked: bool) -> int:
    """Key/value heads the hf attention keeps: all a query heads where transformers repeats K
    and V (eager always; SDPA with a mask or heads above 256 channels), g otherwise; at g = 1
    the repeat is a view of the one head."""
    g = shape.kv_heads
    repeated = eager or masked or shape.head_dim > GQA_KERNEL_MAX_HEAD_DIM
    return shape.heads if repeated and 1 < g < shape.heads else g


def _mla(shape: ModelShape) -> float:
    """Multi-head latent attention on the hf stack, before the s×s scores."""
    m = shape.mla
    assert m is not None
    a = shape.heads
    latents = [r for r in (m.q_lora_rank, m.kv_lora_rank) if r]
    kept = sum(_norm(shape, r) + BF16 * r for r in latents)  # norm and up-projection input
    kept += BF16 * a * m.qk_head_dim * 2  # Q and K
    kept += BF16 * a * (m.qk_nope_head_dim + m.v_head_dim)  # V: the up-projection's output
    return kept + BF16 * a * m.v_head_dim  # the output


def _hf_attention(shape: ModelShape, *, eager: bool, masked: bool) -> float:
    """Per-head tensors the hf attention keeps, s×s scores and masks aside."""
    if shape.mla is not None:
        return _mla(shape) + (0 if eager else FP32 * shape.heads)
    a, q, qv = shape.heads, shape.head_dim, shape.v_head_dim
    g = kv_heads_kept(shape, eager=eager, masked=masked)
    kept = BF16 * (a * q + g * q)  # Q and K
    m = shape.modeling
    if m.fused_qkv and g == shape.kv_heads:  # V a slice of the fused output, kept whole
        kept += BF16 * ((a + g) * q + g * qv if shape.rotary else g * qv)
    else:
        kept += BF16 * g * qv
    # the output projection's input; the kernel's output beside it where RoPE concatenates
    kept += BF16 * a * qv * (2 if m.rope_concat and not eager else 1)
    return kept + _qk_norm(shape) + (0 if eager else FP32 * a)  # log-sum-exp


def _mlp(shape: ModelShape, width: int, stack: Stack) -> float:
    """Bytes per token an MLP of ``width`` keeps beyond its input."""
    if not shape.gated:
        kept = ACTIVATION_TENSORS.get(shape.modeling.activation, 1) if stack == "hf" else 1
        return BF16 * width * (kept + 1)  # the activation's tensors and the second input
    if stack == "megatron":
        return BF16 * width * 3  # the fused gate-and-up output (2f) and the fc2 input
    return BF16 * width * 4  # gate output, up output, activation output, product


def _moe(shape: ModelShape, stack: Stack) -> float:
    """The router, the routed and the shared experts of an MoE layer."""
    h, k = shape.hidden, shape.experts_per_token
    kept: float = FP32 * shape.experts + ROUTING_BYTES_PER_SLOT * k  # probabilities, indices
    if stack == "hf" and shape.modeling.router_fp32:
        kept += FP32 * h  # the router's fp32 copy of its input
    kept += k * (2 * BF16 * h + _mlp(shape, shape.expert_intermediate, stack))
    if shape.shared_experts:
        kept += shape.shared_experts * _mlp(shape, shape.shared_intermediate, stack)
        if shape.shared_expert_gate:
            kept += BF16 * h  # the shared expert's output, kept for its sigmoid gate
    return kept


def _megatron_attention(shape: ModelShape) -> float:
    a, g = shape.heads, shape.kv_heads
    q, qv = shape.head_dim, shape.v_head_dim
    return BF16 * (a * q + g * q + g * qv + a * qv)  # Q, K, V and the attention output


def _masked(shape: ModelShape, seq_len: int, local: bool) -> bool:
    """Whether transformers passes SDPA a mask: a sliding-window layer at s ≥ the window."""
    window = shape.sliding_window
    return local and window is not None and seq_len >= window


def layer_bytes_per_token(
    shape: ModelShape,
    stack: Stack,
    *,
    moe: bool,
    seq_len: int,
    flash_attention: bool = True,
    recompute: Recompute = "none",
    local: bool = False,
) -> ActivationCoefficients:
    """Bytes per token one layer keeps for the backward pass (module docstring), before
    parallelism; ``moe`` for a mixture-of-experts layer, ``local`` for a sliding-window one.
    Without ``flash_attention`` the hf stack counts transformers' eager attention."""
    replicated = _replicated(shape, stack)
    eager = not flash_attention
    masked = stack == "hf" and not eager and _masked(shape, seq_len, local)
    if stack == "hf":
        split = _hf_attention(shape, eager=eager, masked=masked)
    else:
        split = _megatron_attention(shape)
    split += _moe(shape, stack) if moe else _mlp(shape, shape.intermediate, stack)
    if masked:
        replicated += BF16 * seq_len  # the 16-bit s×s mask, per sequence
    scores = 0.0
    if eager and recompute != "selective":
        if stack == "hf":
            per_element = EAGER_SCORE_BYTES + (BF16 if shape.modeling.attention_softcap else 0)
        else:  # softmax output, and with dropout its mask and output (Korthikanti: 5·a·s)
            per_element = BF16 + (MASK + BF16 if shape.dropout > 0 else 0)
        scores = per_element * shape.heads * seq_len
    return ActivationCoefficients(replicated, split, scores)


def _per_token(c: ActivationCoefficients, tp: int, sp: bool) -> float:
    return c.replicated / (tp if sp else 1) + (c.split + c.scores) / tp


def logits_bytes_per_element(shape: ModelShape, stack: Stack) -> float:
    """Bytes per logit at the loss: LOGITS_BYTES[stack], and on the hf stack 2 more for the
    tanh of soft-capped logits (module docstring)."""
    softcap = stack == "hf" and shape.modeling.logit_softcap
    return LOGITS_BYTES[stack] + (BF16 if softcap else 0)


def logits_bytes(seq_len: int, micro_batch: int, vocab: int, tp: int = 1,
                 stack: Stack = "megatron", per_element: float | None = None) -> float:
    """Bytes at the loss: ``per_element`` (default LOGITS_BYTES[stack])·s·b·V / t.

    Not in Korthikanti et al.'s per-layer count; with large vocabularies it rivals a layer's
    activations (Wijmans et al. 2024, "Cut Your Losses in Large-Vocabulary Language Models").
    Vocabulary-parallel over the tensor-parallel ranks.
    """
    per = LOGITS_BYTES[stack] if per_element is None else per_element
    return per * seq_len * micro_batch * vocab / tp


def _layer_kinds(shape: ModelShape) -> list[tuple[bool, bool, float]]:
    """(MoE, local, how many layers) for each kind of layer; the sliding-window layers are
    taken as spread evenly over the dense and the MoE layers."""
    local = shape.sliding_layers / shape.layers if shape.sliding_window else 0.0
    kinds = [(moe, is_local, count * (local if is_local else 1 - local))
             for moe, count in ((False, shape.dense_layers), (True, shape.moe_layers))
             for is_local in (False, True)]
    return [kind for kind in kinds if kind[2] > 0]


@lru_cache(maxsize=4096)  # a plan search asks the same layouts of one shape many times
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
    scale: float = 1.0,
) -> tuple[float, float]:
    """(activations, of which logits) in bytes on the busiest device; ``scale`` multiplies the
    layers' part (a probe's measurement over the formula's, :func:`layer_slope`).

    With a 1F1B pipeline of p stages the first stage holds p micro-batches in flight, each for
    L/p layers: L layers' worth in all (Korthikanti et al. 2022, Sec. 4.2.3), so pipeline
    parallelism does not shrink the first stage's activations.
    """
    tokens = seq_len * micro_batch
    coefficients = [(layer_bytes_per_token(shape, stack, moe=moe, seq_len=seq_len,
                                           flash_attention=flash_attention, recompute=recompute,
                                           local=local), count)
                    for moe, local, count in _layer_kinds(shape)]
    in_flight_share = -(-shape.layers // pp) * pp / shape.layers
    if recompute == "full":
        kept = BF16 * shape.hidden / (tp if sp else 1) * shape.layers * in_flight_share
        # one layer's activations while it is recomputed for its backward pass
        working = max(_per_token(c, tp, sp) for c, _ in coefficients)
        per_token = kept + working
    else:
        per_token = sum(_per_token(c, tp, sp) * n for c, n in coefficients) * in_flight_share
    per_token *= scale
    logits = 0.0 if shape.vocab is None else logits_bytes(
        seq_len, micro_batch, shape.vocab, tp, stack, logits_bytes_per_element(shape, stack))
    return per_token * tokens + logits, logits


def layer_slope(shape: ModelShape, *, stack: Stack, seq_len: int, recompute: Recompute,
                flash_attention: bool) -> float:
    """Bytes per token that one more decoder layer keeps on one device: what a probe measures
    as the difference between two depths (with full recomputation only the layer's input)."""
    if recompute == "full":
        return BF16 * shape.hidden
    return sum(_per_token(layer_bytes_per_token(shape, stack, moe=moe, seq_len=seq_len,
                                                flash_attention=flash_attention,
                                                recompute=recompute, local=local), 1, False) * n
               for moe, local, n in _layer_kinds(shape)) / shape.layers


def probe_scale(shape: ModelShape, probe: ProbeResult) -> tuple[float, float]:
    """(the formula's bytes per token per layer, measured / formula) at a probe's context,
    recomputation and attention, on the stack it ran (transformers: ``hf``); a factor of 1 when
    either side is 0."""
    formula = layer_slope(shape, stack="hf", seq_len=probe.setup.seq_len,
                          recompute=probe.setup.recompute,
                          flash_attention=probe.setup.attn_implementation != "eager")
    measured = probe.memory.activation_bytes_per_token_per_layer
    return formula, (measured / formula if formula > 0 and measured > 0 else 1.0)
