"""FLOPs per training token, term by term; model FLOPs (for MFU) versus hardware FLOPs (for HFU).

A matrix multiply costs 2 FLOPs per weight per token forward (one multiply-add) and twice that
backward (gradients of the inputs and of the weights): 6 per weight per token in training
(Kaplan et al. 2020, "Scaling Laws for Neural Language Models", Sec. 2.1). Per token, for L
layers, H heads of size Q, hidden size d, vocabulary V and context T::

    matmul      6 · (active matmul weights of the decoder layers)   Kaplan et al. 2020
    attention   12 · L · H · Q · T   (QKᵀ and attention·V)           Chowdhery et al. 2022, App. B
                halved for causal masking (T/2 keys per query)       Megatron-LM
    LM head     6 · d · V            (the embedding lookup is free)
    model FLOPs = matmul + attention + LM head

Model FLOPs are what the model needs, whatever the implementation; MFU divides them by the peak.

**One convention for the estimate.** The MFU priors are calibrated on 6·N·T (what published runs
report, N the active parameters with embeddings, at their typical 2k–8k context), so the estimate
counts the same: 6·N_active per token, plus only the causal attention FLOPs that a context longer
than :data:`CALIBRATION_CONTEXT` adds beyond what the calibration runs already contain
(:class:`FlopCounts`). A measured MFU or achieved TFLOP/s says the convention it was counted in
(:data:`MfuConvention`) and is converted to that count::

    6n      6·N                      Kaplan et al. 2020; the calibration set, this package
    causal  6·N + 6·L·H·Q·T          Megatron-LM num_floating_point_operations (causal halving)
    full    6·N + 12·L·H·Q·T         PaLM App. B, nanoGPT estimate_mfu, torchtitan
    MFU in the estimate's count = MFU_convention × estimate FLOPs / convention FLOPs
Hardware FLOPs add what activation recomputation executes again; HFU divides those by the peak
(Chowdhery et al. 2022, "PaLM", App. B). Full recomputation turns 6·N·T into about 8·N·T
(Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using
Megatron-LM", eq. 3).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..quantities import (
    DeviceCount,
    PositiveNumber,
    SeqLen,
    TflopsPerDevice,
    TokenCount,
    validated,
)
from ..vocabulary import FLOPS_PER_PARAM_PER_TOKEN, MfuConvention, Recompute
from .architecture import Architecture
from .param_count import counts_of

__all__ = [
    "CALIBRATION_CONTEXT",
    "FlopCounts",
    "FlopsBreakdown",
    "HardwareFlops",
    "convert_mfu",
    "flop_counts",
    "flops_per_token",
    "hardware_flops_per_token",
    "mfu_from_achieved",
    "rule_of_thumb",
    "seconds_from_achieved",
    "trained_share",
]

TRAIN_FLOPS_PER_WEIGHT = FLOPS_PER_PARAM_PER_TOKEN
"""2 forward (one multiply-add) + 4 backward (input and weight gradients) FLOPs per weight."""
FORWARD_SHARE = 1 / 3
"""The forward pass is a third of forward + backward (2 of 6 FLOPs per weight)."""
TERA = 1e12

CALIBRATION_CONTEXT = 4096
"""Context (tokens) whose attention the calibrated MFU priors already contain: the published
runs trained at 2k–8k (LLaMA 2k, Llama 2 4k, Llama 3 8k, Phi-3 4k), 4k typical."""




class FlopsBreakdown(BaseModel):
    """Training FLOPs per token (forward + backward), by term."""

    model_config = ConfigDict(frozen=True)

    seq_len: int | None = Field(
        description="Training sequence length T, in tokens; None for the 6·N rule of thumb."
    )
    causal: bool = Field(
        description="True: causal masking halves the attention term (each query sees T/2 keys "
                    "on average, the Megatron-LM convention); False: all T keys (PaLM App. B)."
    )
    attention_context: float = Field(
        description="Keys each query attends to on average, in tokens (T/2 causal, T otherwise; "
                    "less with a sliding window)."
    )
    active_matmul_weights: int = Field(
        description="Weights of the decoder layers' matrix multiplies one token goes through."
    )
    active_params: int = Field(description="Parameters one token uses, embeddings included.")
    matmul: float = Field(
        description="6 × active matmul weights, FLOPs per token (Kaplan et al. 2020)."
    )
    attention: float = Field(
        description="Attention scores QKᵀ and their weighted sum of V: 12·L·H·Q·context, FLOPs "
                    "per token (Chowdhery et al. 2022, App. B)."
    )
    lm_head: float = Field(description="Output projection 6·d·V, FLOPs per token.")
    total: float = Field(
        description="Model FLOPs per token: matmul + attention + LM head (what MFU counts)."
    )
    six_n: float = Field(
        description="6 × active parameters incl. embeddings, FLOPs per token: the 6·N rule of "
                    "thumb, for comparison with total."
    )


class HardwareFlops(BaseModel):
    """Model FLOPs (for MFU) and the FLOPs the hardware executes (for HFU), per token."""

    model_config = ConfigDict(frozen=True)

    recompute: Recompute = Field(description="Activation recomputation: none, selective or full.")
    model_flops_per_token: float = Field(
        description="Model FLOPs per token, recomputation not counted (MFU's numerator)."
    )
    recompute_flops_per_token: float = Field(
        description="FLOPs per token executed again by activation recomputation."
    )
    hardware_flops_per_token: float = Field(
        description="Model + recomputation FLOPs per token (HFU's numerator)."
    )
    hardware_over_model: float = Field(
        description="hardware / model FLOPs: HFU / MFU (about 4/3 with full recomputation)."
    )


def _attention_context(arch: Architecture, seq_len: int, causal: bool) -> float:
    """Average keys per query.

    Causal: T/2 (Megatron-LM's ``num_floating_point_operations``). With a sliding window W < T
    the mean of min(i, W) over positions i in [0, T] is W − W²/(2·T), equal to T/2 at W = T.
    """
    t = float(seq_len)
    window = arch.sliding_window
    if not causal:
        return t if window is None else min(t, float(window))
    if window is None or window >= seq_len:
        return t / 2
    return window - window * window / (2 * t)


@validated
def flops_per_token(arch: Architecture, seq_len: SeqLen, *, causal: bool = True) -> FlopsBreakdown:
    """Training model FLOPs per token of ``arch`` at context ``seq_len``, term by term.

    Kaplan et al. 2020 (6 FLOPs per weight per token), Chowdhery et al. 2022 ("PaLM", App. B:
    6·N + 12·L·H·Q·T), with causal masking halving the attention term as Megatron-LM's
    ``num_floating_point_operations`` does. Mixture of experts: only the experts_per_token
    routed experts and the shared experts of each token count, plus the router, which scores
    all experts. Multi-head latent attention: QKᵀ over Q_nope + Q_rope and attention·V over
    Q_v (6·L·H·context·(Q_k + Q_v), as Megatron-LM counts MLA).
    """
    t = seq_len
    params = counts_of(arch)
    context = _attention_context(arch, t, causal)
    if arch.mla is None:
        qk_dim = v_dim = arch.head_dim
    else:
        qk_dim, v_dim = arch.mla.qk_head_dim, arch.mla.v_head_dim
    # 6 FLOPs per weight per token: q/k/v/o projections, MLP or active experts, router.
    matmul = TRAIN_FLOPS_PER_WEIGHT * params.active_matmul_weights
    # QKᵀ (2·context·Q_k per head) and attention·V (2·context·Q_v), ×3 for backward.
    attention = TRAIN_FLOPS_PER_WEIGHT * arch.layers * arch.heads * context * (qk_dim + v_dim)
    # Logits: a d × V matrix multiply whether or not it is tied to the embedding.
    lm_head = TRAIN_FLOPS_PER_WEIGHT * arch.hidden * arch.vocab_size
    # The embedding lookup is a gather: no FLOPs.
    return FlopsBreakdown(
        seq_len=t,
        causal=causal,
        attention_context=context,
        active_matmul_weights=params.active_matmul_weights,
        active_params=params.active,
        matmul=float(matmul),
        attention=attention,
        lm_head=float(lm_head),
        total=matmul + attention + lm_head,
        six_n=float(TRAIN_FLOPS_PER_WEIGHT * params.active),
    )


def rule_of_thumb(
    active_params: float,
    *,
    layers: int | None = None,
    hidden: int | None = None,
    seq_len: int | None = None,
) -> FlopsBreakdown:
    """6·N per token with every parameter counted as a matmul weight, for an unknown architecture.

    Kaplan et al. 2020's C ≈ 6·N·D. When ``layers``, ``hidden`` and ``seq_len`` are given (a
    guessed shape and the real context), the causal attention term 12·L·d·(T/2) of Chowdhery et
    al. 2022 (App. B; H·Q = d) is added. Full recomputation gives about 8·N per token (Narayanan
    et al. 2021).
    """
    n = active_params
    six_n = TRAIN_FLOPS_PER_WEIGHT * n
    attention = 0.0
    context = 0.0
    if layers is not None and hidden is not None and seq_len is not None:
        context = seq_len / 2
        attention = 2 * TRAIN_FLOPS_PER_WEIGHT * layers * hidden * context
    return FlopsBreakdown(
        seq_len=seq_len, causal=True, attention_context=context, active_matmul_weights=round(n),
        active_params=round(n), matmul=six_n, attention=attention, lm_head=0.0,
        total=six_n + attention, six_n=six_n,
    )


def trained_share(active: float, total: float, trainable: float, adapters: float) -> float:
    """The model FLOPs of a step over those of training every weight (6·N per token), when
    some weights are frozen: a frozen weight computes no weight gradient (2 of its 6 FLOPs,
    Kaplan et al. 2020), and LoRA adapters train at 6 FLOPs per active adapter weight. A LoRA
    or frozen-base run is about 2/3; full training 1. Recomputation re-runs the whole forward
    pass (2 of 6) of frozen and trained weights alike, so its ratio to the model FLOPs grows as
    this share falls: ×1.5 for LoRA with full recomputation instead of ×4/3."""
    if trainable >= total or active <= 0:
        return 1.0
    trained_base = 0.0 if adapters else trainable
    frozen = max(0.0, active - trained_base)
    return 1.0 - frozen / (3.0 * active) + adapters / total


@validated
def hardware_flops_per_token(breakdown: FlopsBreakdown, recompute: Recompute,
                             share: PositiveNumber = 1.0) -> HardwareFlops:
    """Model and hardware FLOPs per token under activation recomputation ``recompute``.

    - ``none``: hardware = model FLOPs.
    - ``selective``: + one more forward pass of the attention-score part (QKᵀ and attention·V),
      the operations Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
      Transformer Models", Sec. 4.2) recompute instead of storing.
    - ``full``: + one more forward pass of every decoder layer (matmul and attention terms);
      the LM head is not recomputed. This is Narayanan et al. 2021, eq. 3: 96·B·s·L·h²·(1 +
      s/(6h) + V/(16·L·h)), i.e. 4/3 of the layers' model FLOPs and the logits' unchanged.

    MFU uses the model FLOPs, HFU the hardware FLOPs (Chowdhery et al. 2022, App. B). ``share``
    is the :func:`trained_share` of the model FLOPs when weights are frozen: the recomputed
    forward pass is the same, the model FLOPs it is compared with fewer.
    """
    if recompute == "none":
        extra = 0.0
    elif recompute == "selective":
        extra = FORWARD_SHARE * breakdown.attention
    else:
        extra = FORWARD_SHARE * (breakdown.matmul + breakdown.attention)
    model = breakdown.total * share
    return HardwareFlops(
        recompute=recompute,
        model_flops_per_token=model,
        recompute_flops_per_token=extra,
        hardware_flops_per_token=model + extra,
        hardware_over_model=(model + extra) / model,
    )


@validated
def mfu_from_achieved(
    achieved_tflops: TflopsPerDevice,
    peak_tflops: TflopsPerDevice,
    model_flops_per_token: PositiveNumber,
    hardware_flops_per_token: PositiveNumber,
) -> float:
    """MFU implied by an achieved *hardware* throughput per device.

    Benchmarks and papers report achieved TFLOP/s per device counting recomputation (Narayanan
    et al. 2021, Sec. 5.1: "including recomputation"), which is HFU × peak. MFU counts model
    FLOPs only (Chowdhery et al. 2022, App. B)::

        MFU = achieved × (model / hardware FLOPs per token) / peak
    """
    achieved, peak = achieved_tflops, peak_tflops
    model, hardware = model_flops_per_token, hardware_flops_per_token
    if model > hardware:
        raise InputError(
            "model_flops_per_token", model_flops_per_token,
            f"at most hardware_flops_per_token ({hardware:.4g}): recomputation only adds FLOPs",
        )
    if achieved > peak:
        raise InputError(
            "achieved_tflops", achieved_tflops,
            f"at most the device's dense peak ({peak:g} TFLOP/s): no device runs above it",
        )
    return achieved * (model / hardware) / peak


@validated
def seconds_from_achieved(
    tokens: TokenCount,
    hardware_flops_per_token: PositiveNumber,
    devices: DeviceCount,
    achieved_tflops: TflopsPerDevice,
) -> float:
    """Wall-clock seconds that a measured throughput implies for ``tokens`` training tokens.

    seconds = tokens × hardware FLOPs per token / (devices × achieved FLOP/s per device), with
    the achieved TFLOP/s counting recomputation like the hardware FLOPs do. Narayanan et al.
    2021, Sec. 5.1: end-to-end time ≈ 8·T·P / (n·X) with full recomputation.
    """
    return tokens * hardware_flops_per_token / (devices * achieved_tflops * TERA)


class FlopCounts(BaseModel):
    """Model FLOPs per token in each convention, and the count the estimate uses."""

    model_config = ConfigDict(frozen=True)

    seq_len: int = Field(description="Training context T, tokens.")
    six_n: float = Field(description="6 × active parameters (embeddings included), FLOPs/token.")
    attention_causal: float = Field(
        description="Causal attention at T (T/2 keys per query; less with a sliding window), "
                    "FLOPs/token.")
    attention_full: float = Field(
        description="Attention over all T keys (or the window), FLOPs/token.")
    calibration_context: int = Field(
        description="Context the calibrated priors already contain the attention of, tokens.")
    attention_at_calibration: float = Field(
        description="Causal attention at the calibration context, FLOPs/token.")
    attention_beyond_calibration: float = Field(
        description="What the context adds beyond the calibration context: max(0, causal "
                    "attention at T − at the calibration context), FLOPs/token.")
    estimate: float = Field(
        description="The estimate's count: 6·N + attention beyond the calibration context, "
                    "FLOPs/token (what the MFU prior applies to).")

    def per_token(self, convention: MfuConvention) -> float:
        """Model FLOPs per token as ``convention`` counts them."""
        if convention == "6n":
            return self.six_n
        if convention == "causal":
            return self.six_n + self.attention_causal
        if convention == "full":
            return self.six_n + self.attention_full
        raise InputError("mfu_convention", convention, "one of '6n', 'causal', 'full'")


def flop_counts(
    six_n: float,
    seq_len: int,
    *,
    arch: Architecture | None = None,
    layers: int | None = None,
    hidden: int | None = None,
) -> FlopCounts:
    """6·N and the attention terms at ``seq_len`` and at :data:`CALIBRATION_CONTEXT`.

    Attention from ``arch`` when given (heads, head size, sliding window, MLA: as
    :func:`flops_per_token`), else 12·L·d·context from a (guessed) ``layers`` × ``hidden`` shape
    (Chowdhery et al. 2022, App. B), else none.
    """
    n6, t = six_n, seq_len

    def attention(context: int, causal: bool) -> float:
        if arch is not None:
            return flops_per_token(arch, context, causal=causal).attention
        if layers is None or hidden is None:
            return 0.0
        keys = context / 2 if causal else float(context)
        return 2 * TRAIN_FLOPS_PER_WEIGHT * layers * hidden * keys

    causal = attention(t, True)
    at_calibration = attention(CALIBRATION_CONTEXT, True)
    beyond = max(0.0, causal - at_calibration)
    return FlopCounts(
        seq_len=t, six_n=n6, attention_causal=causal, attention_full=attention(t, False),
        calibration_context=CALIBRATION_CONTEXT, attention_at_calibration=at_calibration,
        attention_beyond_calibration=beyond, estimate=n6 + beyond,
    )


def convert_mfu(mfu: float, convention: MfuConvention, counts: FlopCounts) -> float:
    """An MFU measured in ``convention``, re-expressed against the estimate's FLOP count.

    The same wall time, counted two ways: MFU_c × peak = FLOPs_c / s, so MFU_estimate =
    MFU_c × estimate FLOPs / convention FLOPs per token.
    """
    return mfu * counts.estimate / counts.per_token(convention)
