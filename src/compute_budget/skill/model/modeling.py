"""What a family's Hugging Face modeling code keeps for the backward pass beyond its sizes.

Facts of transformers' modeling code (5.x) that change the activation memory of a training step
and no parameter count: how a norm keeps its normalised value, whether Q, K and V are slices of
one projection, the MLP's activation, the attention implementation transformers picks by default,
soft-capping, and the sliding window of the local layers. Read from a config by
:func:`~.hf_families.modeling_facts`, carried by the :class:`~.architecture.Architecture` into
the :class:`~.shape.ModelShape`, counted by :mod:`..memory.activations`. The defaults are the
Llama layout's.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AttentionImplementation", "ModelingFacts"]

AttentionImplementation = Literal["sdpa", "eager"]
"""An attention implementation of transformers: sdpa (PyTorch's scaled_dot_product_attention,
whose fused GPU kernels keep no s×s scores) or eager (matmul, fp32 softmax, matmul: keeps them)."""


class ModelingFacts(BaseModel):
    """Facts of a family's Hugging Face modeling code that change what a training step keeps."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    norm_fp32: bool = Field(
        default=False,
        description="The RMSNorm multiplies its weight before casting back, so it keeps the "
                    "normalised value in fp32 (Gemma's x·(1 + w), OLMo 2's w·x); False: it casts "
                    "first and keeps it in 16 bits (Llama's w·x.to(dtype)).")
    fused_qkv: bool = Field(
        default=False,
        description="Q, K and V are slices of one projection's output (Phi-3's qkv_proj, "
                    "GPT-NeoX's query_key_value, GPT-2's c_attn): the attention keeps V as a "
                    "view of it, so the whole output stays.")
    rope_concat: bool = Field(
        default=False,
        description="RoPE concatenates each head's rotated and passed-through parts (Phi-3's "
                    "and GPT-NeoX's partial-rotary code): Q comes out head-major, the fused "
                    "kernel writes its output in that layout, and transformers copies it for "
                    "the output projection.")
    router_fp32: bool = Field(
        default=False, description="The MoE router takes an fp32 copy of its input (DeepSeek's "
                                   "gate: F.linear(x.float(), w.float())).")
    activation: str = Field(
        default="silu", description="The MLP's activation as the config names it (hidden_act, "
                                    "hidden_activation or activation_function).")
    attention: AttentionImplementation = Field(
        default="sdpa",
        description="The attention implementation transformers picks when none is asked for: "
                    "sdpa, or eager for a family that refuses SDPA (Gemma 2, whose attention "
                    "soft-capping SDPA lacks).")
    attention_softcap: bool = Field(
        default=False, description="Attention scores soft-capped (tanh; Gemma 2's "
                                   "attn_logit_softcapping): eager attention keeps the tanh "
                                   "output.")
    logit_softcap: bool = Field(
        default=False, description="Final logits soft-capped (tanh; Gemma 2's "
                                   "final_logit_softcapping): the loss keeps the tanh output.")
    local_window: int | None = Field(
        default=None, gt=0,
        description="Sliding window of the local layers when only some layers have one (Gemma 2 "
                    "and 3, Qwen's use_sliding_window); None when no layer or every layer has "
                    "one (that window is the architecture's sliding_window).")
    local_layers: int = Field(default=0, ge=0, description="Layers with local_window.")
