"""Measure the bytes a real Hugging Face transformers model saves for the backward pass.

Run by hand, never in the test suite, in an environment that has torch and transformers (the
``measure`` dependency group in ``pyproject.toml``), from the repository root::

    uv run --group measure python -m benchmarks.activation_memory
    python -m benchmarks.activation_memory --families llama3_8b,mixtral_8x7b --seq-lens 512,1024

(or, to keep a CUDA torch build off a CPU-only machine, ``pip install torch 'transformers>=5'``
into a separate venv and run the second line with its python, ``PYTHONPATH=src``; the whole run
takes about 40 minutes on two cores and 12 GB). It writes
``benchmarks/data/activation_memory.json``, which the tests read to pin the analytic
activation-memory formula to real numbers. ``--merge`` keeps the families already in the file
(for trying one); the committed file is one full run.

Every family the config reader accepts is measured (:data:`FAMILIES`), each at the attention
implementation transformers picks for it by default (``from_config`` without
``attn_implementation``: eager for Gemma 2, SDPA elsewhere; recorded) and at other variants
(:class:`Variant`): eager where the default is SDPA, a FlashAttention stand-in for Gemma 2, a
masked sliding window, and where the CPU cannot run what a GPU runs, the variant the formula is
pinned to (:attr:`Family.pinned`).

Method, per model family and variant:

1. Build the model from a config with the real checkpoint's shapes (hidden, intermediate, heads,
   KV heads, experts, top-k; see :data:`FAMILIES`; DeepSeek-V3 at a smaller size with its
   layout) and random weights: ``AutoModelForCausalLM.from_config(config,
   dtype=torch.bfloat16)`` with the variant's ``attn_implementation``, on CPU, in train mode
   (dropout as the config says). The experts implementation is whatever ``from_config`` picks
   by default (recorded).
2. Run one forward pass with ``labels`` (so the loss is computed as in training), batch 1, random
   ``input_ids``, inside ``torch.autograd.graph.saved_tensors_hooks(pack, unpack)``. ``pack``
   records every tensor autograd saves for the backward pass, deduplicated by storage
   (``untyped_storage().data_ptr()``, counted at ``untyped_storage().nbytes()``), and skips the
   storages of parameters and buffers. Forward pre-/post-hooks keep the name of the innermost
   module running, which labels each storage; a walk of the autograd graph afterwards names the
   ops (``grad_fn`` and saved-slot, e.g. ``MmBackward0.self``) that saved each storage. No
   backward pass is run.
3. Per decoder layer: the same config with ``L1`` and ``L2`` layers gives totals ``T1``, ``T2``;
   ``bytes_per_layer = (T2 - T1) / (L2 - L1)`` and the rest, ``T1 - L1 * bytes_per_layer``, is
   the non-layer part (embedding output, final norm, LM-head input, fp32 logits, loss). This is
   repeated at several sequence lengths: with a fused SDPA kernel and no mask no ``s × s``
   tensor is saved, so ``bytes_per_token_per_layer = bytes_per_layer / (micro_batch · s)``
   does not depend on ``s``; eager attention and a mask add terms linear in ``s`` (fitted in
   ``fit_in_seq_len``). The coefficient ``bytes_per_token_per_layer / hidden_size`` is reported
   too.
4. A breakdown of one decoder layer (the last layer of the ``L2`` model, at the longest sequence)
   lists each distinct saved storage: the module that first saved it, the ops that saved it, its
   shape, dtype and bytes (also per token and per token per hidden). Storages that several layers
   save (RoPE cos/sin) are listed apart as shared, and the non-layer storages are listed too.

Two CPU artefacts to keep in mind (both recorded in the JSON): when torch's CPU flash-attention
kernel cannot run (attention dropout > 0, or q/k head dim != v head dim as in DeepSeek's MLA)
SDPA falls back to its math path, which saves fp32 copies of q, k, v and ``s × s`` probabilities
that a GPU kernel would not (the pinned variants avoid it: GPT-2 with attention dropout off,
which a GPU flash kernel applies inside keeping only its RNG state; DeepSeek with an attention
stand-in keeping what the GPU memory-efficient kernel keeps, :func:`register_kernel_standin`);
and CPU dropout saves a bf16 mask where CUDA saves a bool one (each breakdown row says whether
it is such a mask, and ``cpu_dropout_mask_bytes_per_token_per_layer`` sums them). CPU LayerNorm
also keeps its mean and rstd in bf16 where CUDA keeps fp32 (4 bytes per token per norm).

Tensors an autograd function keeps as plain ``ctx`` attributes instead of ``save_for_backward``
(e.g. the expert offsets of transformers' grouped-mm fallback, a few hundred bytes) never reach
``pack`` and are not counted.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import platform
import re
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

DEFAULT_OUT = Path(__file__).parent / "data" / "activation_memory.json"
DEFAULT_SEQ_LENS = (512, 1024, 2048)
MICRO_BATCH = 1
SEED = 0


KERNEL_STANDIN = "gpu_kernel_standin"
"""An attention implementation registered by this benchmark (:func:`register_kernel_standin`): it
keeps what PyTorch's fused GPU kernels keep for their backward pass and nothing else."""


@dataclass(frozen=True)
class Variant:
    """One attention implementation a family is measured at."""

    attn_implementation: str | None = None
    """Passed to ``from_config``; None: transformers' default for the family (recorded)."""
    config: dict[str, Any] = field(default_factory=dict)
    """Config fields changed for this variant only."""
    forced: str | None = None
    """Set ``config._attn_implementation`` to this after building: an implementation
    transformers refuses for the family at build time."""
    notes: str = ""


DEFAULT = Variant()
EAGER = Variant(attn_implementation="eager",
                notes="transformers' eager attention (matmul, fp32 softmax, matmul): keeps the "
                      "s x s scores, checks the formula's eager term.")
GPU_KERNEL = Variant(
    attn_implementation=KERNEL_STANDIN,
    notes="SDPA as a GPU runs it: torch's CPU flash kernel needs equal q/k and v head sizes, so "
          "the attention core is a stand-in that keeps what the GPU memory-efficient kernel "
          "keeps (query, key, value, output, an fp32 log-sum-exp: derivatives.yaml, "
          "_scaled_dot_product_efficient_attention), the tensors exactly as transformers passes "
          "them; everything else runs as in the default variant.")


@dataclass(frozen=True)
class Family:
    """One model family: a checkpoint's shapes as transformers config fields."""

    name: str
    checkpoint: str
    model_type: str
    config: dict[str, Any]
    layer_counts: tuple[int, int] = (1, 2)
    notes: str = ""
    min_positions_field: str = "max_position_embeddings"
    """Config field that caps the sequence length; raised to the longest measured length."""
    variants: dict[str, Variant] = field(default_factory=lambda: {"default": DEFAULT})
    """Attention implementations measured, by label; ``default`` is transformers' default."""
    pinned: str = "default"
    """The variant the formula is pinned to: the default attention implementation as a GPU runs
    it (another variant only where the CPU runs a path no GPU kernel takes)."""


_LLAMA_8B = {
    "vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336,
    "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_act": "silu",
    "rms_norm_eps": 1e-5, "attention_dropout": 0.0, "attention_bias": False, "mlp_bias": False,
    "tie_word_embeddings": False, "max_position_embeddings": 8192,
    "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0},
}
_PHI3_MINI = {
    "vocab_size": 32064, "hidden_size": 3072, "intermediate_size": 8192,
    "num_attention_heads": 32, "num_key_value_heads": 32, "hidden_act": "silu",
    "rms_norm_eps": 1e-5, "attention_dropout": 0.0, "resid_pdrop": 0.0, "embd_pdrop": 0.0,
    "sliding_window": 2047, "tie_word_embeddings": False, "max_position_embeddings": 4096,
    "pad_token_id": 32000, "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
}
_DEEPSEEK_LITE = {
    "vocab_size": 102400, "hidden_size": 2048, "intermediate_size": 10944,
    "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 512,
    "q_lora_rank": None, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "n_routed_experts": 64, "num_experts_per_tok": 6, "n_shared_experts": 2,
    "moe_intermediate_size": 1408, "first_k_dense_replace": 0, "topk_method": "greedy",
    "n_group": 1, "topk_group": 1, "norm_topk_prob": False, "routed_scaling_factor": 1.0,
    "output_router_logits": False, "hidden_act": "silu", "rms_norm_eps": 1e-6,
    "attention_dropout": 0.0, "attention_bias": False, "tie_word_embeddings": False,
    "max_position_embeddings": 163840,
    "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
}
_DEEPSEEK_V3_SMALL = {
    "vocab_size": 129280, "hidden_size": 2048, "intermediate_size": 5632,
    "num_attention_heads": 16, "num_key_value_heads": 16, "q_lora_rank": 1536,
    "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "n_routed_experts": 64, "num_experts_per_tok": 8, "n_shared_experts": 1,
    "moe_intermediate_size": 512, "first_k_dense_replace": 0, "n_group": 8, "topk_group": 4,
    "norm_topk_prob": True, "routed_scaling_factor": 2.5, "hidden_act": "silu",
    "rms_norm_eps": 1e-6, "attention_dropout": 0.0, "attention_bias": False,
    "tie_word_embeddings": False, "max_position_embeddings": 163840,
    "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
}

FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family(name="llama3_8b", checkpoint="meta-llama/Meta-Llama-3-8B", model_type="llama",
               config=_LLAMA_8B),
        Family(
            name="mistral_7b",
            checkpoint="mistralai/Mistral-7B-v0.1",
            model_type="mistral",
            config={**_LLAMA_8B, "vocab_size": 32000, "sliding_window": 4096,
                    "max_position_embeddings": 32768,
                    "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}},
            notes="A sliding window of 4096 in every layer: from there on transformers builds "
                  "a mask, and SDPA with a mask gets K and V repeated to every query head.",
            variants={
                "default": DEFAULT,
                "window_1024": Variant(
                    config={"sliding_window": 1024},
                    notes="The window set to 1024 so that at 1024 and 2048 tokens the mask is "
                          "built: SDPA keeps it (16-bit s x s) and K and V repeated to the 32 "
                          "query heads; checks the formula's masked-layer terms."),
            },
        ),
        Family(
            name="qwen2_7b",
            checkpoint="Qwen/Qwen2-7B",
            model_type="qwen2",
            config={
                "vocab_size": 152064,
                "hidden_size": 3584,
                "intermediate_size": 18944,
                "num_attention_heads": 28,
                "num_key_value_heads": 4,
                "hidden_act": "silu",
                "rms_norm_eps": 1e-6,
                "attention_dropout": 0.0,
                "tie_word_embeddings": False,
                "use_sliding_window": False,
                "max_position_embeddings": 131072,
                "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0},
            },
            notes="q/k/v projections carry biases (built into qwen2); o_proj and MLP have none.",
        ),
        Family(
            name="qwen3_8b",
            checkpoint="Qwen/Qwen3-8B",
            model_type="qwen3",
            config={
                "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 12288,
                "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                "hidden_act": "silu", "rms_norm_eps": 1e-6, "attention_dropout": 0.0,
                "attention_bias": False, "tie_word_embeddings": False,
                "use_sliding_window": False, "max_position_embeddings": 40960,
                "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0},
            },
            notes="An RMSNorm of head_dim on every query and key head (q_norm, k_norm).",
        ),
        Family(
            name="mixtral_8x7b",
            checkpoint="mistralai/Mixtral-8x7B-v0.1",
            model_type="mixtral",
            config={
                "vocab_size": 32000,
                "hidden_size": 4096,
                "intermediate_size": 14336,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "num_local_experts": 8,
                "num_experts_per_tok": 2,
                "hidden_act": "silu",
                "rms_norm_eps": 1e-5,
                "attention_dropout": 0.0,
                "router_jitter_noise": 0.0,
                "output_router_logits": False,
                "sliding_window": None,
                "tie_word_embeddings": False,
                "max_position_embeddings": 32768,
                "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0},
            },
            notes="output_router_logits False as in the checkpoint's config: no auxiliary "
            "load-balancing loss is computed.",
        ),
        Family(
            name="qwen15_moe_a27b",
            checkpoint="Qwen/Qwen1.5-MoE-A2.7B",
            model_type="qwen2_moe",
            config={
                "vocab_size": 151936,
                "hidden_size": 2048,
                "intermediate_size": 5632,
                "num_attention_heads": 16,
                "num_key_value_heads": 16,
                "num_experts": 60,
                "num_experts_per_tok": 4,
                "moe_intermediate_size": 1408,
                "shared_expert_intermediate_size": 5632,
                "decoder_sparse_step": 1,
                "mlp_only_layers": [],
                "norm_topk_prob": False,
                "output_router_logits": False,
                "hidden_act": "silu",
                "rms_norm_eps": 1e-6,
                "attention_dropout": 0.0,
                "use_sliding_window": False,
                "tie_word_embeddings": False,
                "max_position_embeddings": 8192,
                "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0},
            },
            notes="Every layer is sparse (60 routed experts top-4 plus a sigmoid-gated shared "
            "expert of 5632).",
        ),
        Family(
            name="qwen3_moe_30b_a3b",
            checkpoint="Qwen/Qwen3-30B-A3B",
            model_type="qwen3_moe",
            config={
                "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144,
                "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
                "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768,
                "decoder_sparse_step": 1, "mlp_only_layers": [], "norm_topk_prob": True,
                "output_router_logits": False, "hidden_act": "silu", "rms_norm_eps": 1e-6,
                "attention_dropout": 0.0, "attention_bias": False, "use_sliding_window": False,
                "tie_word_embeddings": False, "max_position_embeddings": 40960,
                "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0},
            },
            notes="128 routed experts, top-8, no shared expert; q_norm and k_norm per head.",
        ),
        Family(
            name="gemma2_9b",
            checkpoint="google/gemma-2-9b",
            model_type="gemma2",
            config={
                "vocab_size": 256000, "hidden_size": 3584, "intermediate_size": 14336,
                "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256,
                "hidden_activation": "gelu_pytorch_tanh", "rms_norm_eps": 1e-6,
                "attention_dropout": 0.0, "attention_bias": False, "query_pre_attn_scalar": 256,
                "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0,
                "sliding_window": 4096, "tie_word_embeddings": True,
                "max_position_embeddings": 8192,
                "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
            },
            notes="transformers' default attention for Gemma 2 is eager (its SDPA path is "
                  "refused: SDPA has no logit soft-capping). Four RMSNorms per layer; final "
                  "logit soft-capping (tanh) at the LM head.",
            variants={
                "default": DEFAULT,
                "flash": Variant(
                    config={"attn_logit_softcapping": None}, forced="sdpa",
                    notes="A FlashAttention-2 stand-in: FlashAttention-2 soft-caps inside the "
                          "kernel and keeps q, k, v, the output and the log-sum-exp, as SDPA's "
                          "flash kernel does; transformers refuses SDPA for Gemma 2 at build "
                          "time, so SDPA is set after building, with the attention soft-capping "
                          "off (SDPA has none)."),
            },
        ),
        Family(
            name="gemma3_1b",
            checkpoint="google/gemma-3-1b-pt",
            model_type="gemma3_text",
            config={
                "vocab_size": 262144, "hidden_size": 1152, "intermediate_size": 6912,
                "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256,
                "hidden_activation": "gelu_pytorch_tanh", "rms_norm_eps": 1e-6,
                "attention_dropout": 0.0, "attention_bias": False, "query_pre_attn_scalar": 256,
                "attn_logit_softcapping": None, "final_logit_softcapping": None,
                "sliding_window": 512, "sliding_window_pattern": 6,
                "tie_word_embeddings": True, "max_position_embeddings": 32768,
            },
            notes="Four RMSNorms per layer and q_norm, k_norm per head; both differenced layers "
                  "are local (sliding window 512, five local layers to one global), so at 512 "
                  "tokens and above transformers builds a mask and SDPA gets K and V repeated "
                  "to every query head.",
            variants={"default": DEFAULT, "eager": EAGER},
        ),
        Family(
            name="olmo2_7b",
            checkpoint="allenai/OLMo-2-1124-7B",
            model_type="olmo2",
            config={
                "vocab_size": 100352, "hidden_size": 4096, "intermediate_size": 11008,
                "num_attention_heads": 32, "num_key_value_heads": 32, "hidden_act": "silu",
                "rms_norm_eps": 1e-6, "attention_dropout": 0.0, "attention_bias": False,
                "tie_word_embeddings": False, "max_position_embeddings": 4096,
                "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0},
            },
            notes="Norms after attention and after the MLP (none before), q_norm and k_norm over "
                  "the whole projections; OLMo 2's RMSNorm multiplies its weight in fp32.",
        ),
        Family(
            name="phi3_mini",
            checkpoint="microsoft/Phi-3-mini-4k-instruct",
            model_type="phi3",
            config=_PHI3_MINI,
            notes="Fused qkv_proj and gate_up_proj; a sliding window of 2047 (a mask at 2048 "
                  "tokens, multi-head attention so nothing is repeated).",
        ),
        Family(
            name="phi4",
            checkpoint="microsoft/phi-4",
            model_type="phi3",
            config={**_PHI3_MINI, "vocab_size": 100352, "hidden_size": 5120,
                    "intermediate_size": 17920, "num_attention_heads": 40,
                    "num_key_value_heads": 10, "sliding_window": None,
                    "max_position_embeddings": 16384, "pad_token_id": 100349,
                    "rope_parameters": {"rope_type": "default", "rope_theta": 250000.0}},
            notes="Phi-3 layout (fused qkv_proj and gate_up_proj) with grouped-query attention.",
        ),
        Family(
            name="deepseek_v2_lite",
            checkpoint="deepseek-ai/DeepSeek-V2-Lite",
            model_type="deepseek_v2",
            config=_DEEPSEEK_LITE,
            notes="first_k_dense_replace set to 0 (checkpoint: 1) so that every differenced layer "
            "is an MoE layer; the checkpoint's YaRN RoPE scaling is replaced by default RoPE (it "
            "changes no saved shape).",
            variants={"default": DEFAULT, "gpu_kernel": GPU_KERNEL},
            pinned="gpu_kernel",
        ),
        Family(
            name="deepseek_v3_small",
            checkpoint="(DeepSeek-V3 layout at hidden 2048, 64 experts; deepseek-ai/DeepSeek-V3)",
            model_type="deepseek_v3",
            config=_DEEPSEEK_V3_SMALL,
            notes="DeepSeek-V3's layout (low-rank query of 1536, latent KV of 512, sigmoid router "
                  "with grouped top-k, 8 groups, 4 kept, top-8, one shared expert) at a size "
                  "that fits this machine: hidden 2048, 16 heads, 64 routed experts of 512; "
                  "first_k_dense_replace 0 so that every differenced layer is an MoE layer.",
            variants={"default": DEFAULT, "gpu_kernel": GPU_KERNEL},
            pinned="gpu_kernel",
        ),
        Family(
            name="gpt2_small",
            checkpoint="openai-community/gpt2",
            model_type="gpt2",
            config={
                "vocab_size": 50257,
                "n_embd": 768,
                "n_head": 12,
                "n_inner": None,
                "activation_function": "gelu_new",
                "resid_pdrop": 0.1,
                "embd_pdrop": 0.1,
                "attn_pdrop": 0.1,
                "layer_norm_epsilon": 1e-5,
                "n_positions": 1024,
                "tie_word_embeddings": True,
            },
            layer_counts=(2, 4),
            min_positions_field="n_positions",
            notes="Default dropouts 0.1 (embedding, attention, residual) active in train mode; "
            "n_positions raised to the longest measured sequence if above 1024. On CPU, dropout "
            "saves its scaled keep-mask in the activation dtype (bf16, 2 bytes/element, through a "
            "mul); CUDA's fused native_dropout saves a bool mask (1 byte/element). Attention "
            "dropout also pushes SDPA off the flash kernel (see caveats).",
            variants={
                "default": DEFAULT,
                "no_attention_dropout": Variant(
                    config={"attn_pdrop": 0.0},
                    notes="SDPA as a GPU runs it: the flash kernel applies attention dropout "
                          "inside and keeps only its RNG seed and offset, so with attention "
                          "dropout off torch's CPU flash kernel keeps what a GPU keeps; the "
                          "residual and embedding dropouts stay on."),
            },
            pinned="no_attention_dropout",
        ),
        Family(
            name="pythia_1b4",
            checkpoint="EleutherAI/pythia-1.4b",
            model_type="gpt_neox",
            config={
                "vocab_size": 50304, "hidden_size": 2048, "intermediate_size": 8192,
                "num_attention_heads": 16, "hidden_act": "gelu", "layer_norm_eps": 1e-5,
                "rotary_pct": 0.25, "rotary_emb_base": 10000, "use_parallel_residual": True,
                "attention_dropout": 0.0, "hidden_dropout": 0.0, "attention_bias": True,
                "tie_word_embeddings": False, "max_position_embeddings": 2048,
            },
            notes="GPT-NeoX: one fused query_key_value projection, rotary on a quarter of each "
                  "head, LayerNorm, both norms reading the layer input (parallel residual).",
        ),
        Family(
            name="llama_h2048",
            checkpoint="(Llama-architecture shape check, no checkpoint)",
            model_type="llama",
            config={**_LLAMA_8B, "hidden_size": 2048, "intermediate_size": 8192,
                    "num_attention_heads": 16, "num_key_value_heads": 8},
            layer_counts=(2, 4),
            variants={"default": DEFAULT, "eager": EAGER},
        ),
    )
}


@dataclass
class SavedStorage:
    """One distinct storage that autograd saved for the backward pass."""

    ptr: int
    nbytes: int
    dtype: str
    shape: list[int]
    module: str
    order: int
    saves: int = 1
    shapes: list[list[int]] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)


@dataclass
class Recorder:
    """Collects saved storages through ``saved_tensors_hooks`` and module hooks."""

    excluded: set[int]
    storages: dict[int, SavedStorage] = field(default_factory=dict)
    module_stack: list[str] = field(default_factory=list)
    keep: list[Any] = field(default_factory=list)
    skipped_param_saves: int = 0

    def current_module(self) -> str:
        return self.module_stack[-1] if self.module_stack else "(root)"

    def pack(self, tensor: torch.Tensor) -> torch.Tensor:
        # The detached alias keeps the same storage (so the graph walk still finds it) without
        # the tensor -> grad_fn -> saved tensor cycle that would leak every measured graph.
        packed = tensor.detach()
        storage = tensor.untyped_storage()
        ptr, nbytes = storage.data_ptr(), storage.nbytes()
        if ptr in self.excluded:
            self.skipped_param_saves += 1
            return packed
        if nbytes == 0:
            return packed
        shape = list(tensor.shape)
        module = self.current_module()
        record = self.storages.get(ptr)
        if record is None:
            record = SavedStorage(
                ptr=ptr,
                nbytes=nbytes,
                dtype=str(tensor.dtype).removeprefix("torch."),
                shape=shape,
                module=module,
                order=len(self.storages),
            )
            self.storages[ptr] = record
            self.keep.append(packed)  # hold the storage so its address cannot be reused
        else:
            record.saves += 1
            record.nbytes = max(record.nbytes, nbytes)
        if shape not in record.shapes:
            record.shapes.append(shape)
        if module not in record.modules:
            record.modules.append(module)
        return packed

    @staticmethod
    def unpack(tensor: torch.Tensor) -> torch.Tensor:
        return tensor


@contextmanager
def module_labels(model: torch.nn.Module, recorder: Recorder) -> Iterator[None]:
    """Keep ``recorder.module_stack`` equal to the modules whose forward is running."""

    handles = []
    for name, module in model.named_modules():
        label = name or "(root)"

        def pre_hook(_module: Any, _args: Any, label: str = label) -> None:
            recorder.module_stack.append(label)

        def post_hook(_module: Any, _args: Any, _output: Any) -> None:
            recorder.module_stack.pop()

        handles.append(module.register_forward_pre_hook(pre_hook))
        handles.append(module.register_forward_hook(post_hook, always_call=True))
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def label_ops(loss: torch.Tensor, recorder: Recorder) -> list[str]:
    """Walk the autograd graph from ``loss`` and name, per storage, the ops that saved it.

    Returns the names of all backward nodes met (to record, e.g., which SDPA kernel ran).
    """
    import torch

    seen: set[int] = set()
    node_names: list[str] = []
    stack = [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        name = node.name()
        node_names.append(name)
        saved: list[tuple[str, Any]] = []
        for attr in dir(node):
            if attr.startswith("_saved_"):
                try:
                    saved.append((attr.removeprefix("_saved_"), getattr(node, attr)))
                except RuntimeError:
                    continue
        if hasattr(node, "saved_tensors"):
            with suppress(RuntimeError):
                saved.extend((f"saved_tensors[{i}]", t) for i, t in enumerate(node.saved_tensors))
        for slot, value in saved:
            values = value if isinstance(value, tuple | list) else (value,)
            for item in values:
                if isinstance(item, torch.Tensor):
                    record = recorder.storages.get(item.untyped_storage().data_ptr())
                    if record is not None:
                        op = f"{name}.{slot}"
                        if op not in record.ops:
                            record.ops.append(op)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return node_names


def register_kernel_standin() -> None:
    """Register :data:`KERNEL_STANDIN` with transformers' attention functions (see GPU_KERNEL).

    Its autograd function computes attention without keeping anything, then saves query, key,
    value, the output (laid out [batch, seq, heads, dim], as the GPU kernels write it) and an
    fp32 log-sum-exp of [batch, heads, seq]: the inputs of
    ``_scaled_dot_product_efficient_attention_backward`` in PyTorch's derivatives.yaml. Never
    run backward through it.
    """
    import torch
    from transformers import AttentionInterface

    class KernelStandIn(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, q: Any, k: Any, v: Any, scale: float) -> Any:
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                                   scale=scale)
            out = out.transpose(1, 2).contiguous().transpose(1, 2)
            lse = q.new_empty(q.shape[:3], dtype=torch.float32)
            ctx.save_for_backward(q, k, v, out, lse)
            return out

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            raise NotImplementedError("a stand-in for measuring what is saved, never run back")

    def attention(module: Any, query: Any, key: Any, value: Any, attention_mask: Any,
                  dropout: float = 0.0, scaling: float | None = None, **kwargs: Any) -> Any:
        out = KernelStandIn.apply(query, key, value, scaling)
        return out.transpose(1, 2).contiguous(), None

    AttentionInterface.register(KERNEL_STANDIN, attention)


def build_model(family: Family, variant: Variant, num_layers: int,
                max_seq: int) -> torch.nn.Module:
    """The family's model with ``num_layers`` decoder layers, random bf16 weights, train mode."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    fields = {**family.config, **variant.config}
    fields["num_hidden_layers" if family.model_type != "gpt2" else "n_layer"] = num_layers
    positions = fields.get(family.min_positions_field)
    if positions is not None and positions < max_seq:
        fields[family.min_positions_field] = max_seq
    config = AutoConfig.for_model(family.model_type, **fields)
    torch.manual_seed(SEED)
    if variant.attn_implementation == KERNEL_STANDIN:
        register_kernel_standin()
    kwargs = {} if variant.attn_implementation is None else {
        "attn_implementation": variant.attn_implementation}
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16, **kwargs)
    if variant.forced is not None:
        model.config._attn_implementation = variant.forced
    model.train()
    return model


def excluded_storages(model: torch.nn.Module) -> set[int]:
    """Storage addresses of all parameters and buffers."""
    tensors = [*model.parameters(), *model.buffers()]
    return {t.untyped_storage().data_ptr() for t in tensors}


def measure_once(model: torch.nn.Module, seq_len: int) -> dict[str, Any]:
    """One training-mode forward with labels; the storages saved for backward."""
    import torch

    vocab = model.config.vocab_size
    generator = torch.Generator().manual_seed(SEED)
    input_ids = torch.randint(0, vocab, (MICRO_BATCH, seq_len), generator=generator)
    labels = input_ids.clone()
    recorder = Recorder(excluded=excluded_storages(model))
    start = time.perf_counter()
    with (
        module_labels(model, recorder),
        torch.autograd.graph.saved_tensors_hooks(recorder.pack, recorder.unpack),
    ):
        output = model(input_ids=input_ids, labels=labels, use_cache=False)
    seconds = time.perf_counter() - start
    node_names = label_ops(output.loss, recorder)
    storages = sorted(recorder.storages.values(), key=lambda r: r.order)
    result = {
        "total_bytes": sum(r.nbytes for r in storages),
        "storages": storages,
        "dropout_modules": {name for name, module in model.named_modules()
                            if isinstance(module, torch.nn.Dropout)},
        "node_names": sorted(set(node_names)),
        "skipped_param_saves": recorder.skipped_param_saves,
        "forward_seconds": round(seconds, 2),
        "loss": output.loss.detach().item(),
    }
    del output, recorder
    gc.collect()
    return result


def layer_list_prefix(model: torch.nn.Module, num_layers: int) -> str:
    """Qualified name of the ModuleList that holds the decoder layers, with a trailing dot."""
    import torch

    for name, module in model.named_modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == num_layers:
            return f"{name}."
    raise RuntimeError("no ModuleList of decoder layers found")


def layer_of(module: str, prefix: str) -> int | None:
    """Index of the decoder layer a module belongs to, or None outside the layers."""
    match = re.match(re.escape(prefix) + r"(\d+)(?:\.|$)", module)
    return int(match.group(1)) if match else None


def relative_label(module: str, prefix: str) -> str:
    """Module name relative to its decoder layer, e.g. ``self_attn.q_proj``."""
    stripped = re.sub("^" + re.escape(prefix) + r"\d+\.?", "", module)
    return stripped or "(decoder layer)"


def describe(record: SavedStorage, prefix: str, tokens: int, hidden: int,
             dropout_modules: set[str]) -> dict[str, Any]:
    """A saved storage as a JSON row; ``cpu_dropout_mask`` marks a dropout's keep-mask saved in
    the activation dtype (CPU) where CUDA's native_dropout saves a bool."""
    return {
        "label": relative_label(record.module, prefix),
        "ops": record.ops,
        "dtype": record.dtype,
        "shape": record.shape,
        "other_shapes": [s for s in record.shapes if s != record.shape],
        "bytes": record.nbytes,
        "bytes_per_token": record.nbytes / tokens,
        "bytes_per_token_per_hidden": record.nbytes / tokens / hidden,
        "saves": record.saves,
        "modules": sorted({relative_label(m, prefix) for m in record.modules}),
        "cpu_dropout_mask": record.module in dropout_modules and record.dtype != "bool",
    }


def breakdown(run: dict[str, Any], layer: int, tokens: int, hidden: int) -> dict[str, Any]:
    """Split one run's storages into one layer's own, layer-shared and non-layer ones."""
    prefix = run["prefix"]
    own, shared, outside = [], [], []
    for record in run["storages"]:
        layers = {layer_of(m, prefix) for m in record.modules}
        row = describe(record, prefix, tokens, hidden, run["dropout_modules"])
        if layers == {layer}:
            own.append(row)
        elif len(layers - {None}) > 1:
            shared.append(row)
        elif layers == {None}:
            outside.append(row)
    return {
        "layer_index": layer,
        "layer_storages": own,
        "layer_total_bytes": sum(row["bytes"] for row in own),
        "cpu_dropout_mask_bytes": sum(row["bytes"] for row in own if row["cpu_dropout_mask"]),
        "shared_across_layers": shared,
        "non_layer_storages": outside,
        "non_layer_total_bytes": sum(row["bytes"] for row in outside),
    }


def hidden_size(model: torch.nn.Module) -> int:
    return int(model.config.hidden_size)


MATH_FALLBACK_CAVEAT = (
    "SDPA did not run torch's CPU flash-attention kernel (it needs equal q/k/v head dims and no "
    "dropout) but the math fallback, which on CPU upcasts bf16 q, k, v to fp32 and saves fp32 "
    "copies of q, k^T, v and the s x s attention probabilities (with dropout also the s x s "
    "mask and the dropped probabilities). GPU flash / memory-efficient kernels save none of the "
    "s x s tensors (bf16 q, k, v, output and an fp32 logsumexp instead), so the per-layer bytes "
    "and their growth in s here are a CPU artefact for the attention part."
)


def fit_in_seq_len(rows: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Least squares ``bytes_per_token_per_layer = a + b * seq_len`` over the measured lengths.

    ``b`` is 0 when no ``s x s`` tensor is saved; otherwise ``b * s`` bytes per token per layer
    grow with the context (``b`` = bytes per element of the saved ``s x s`` tensors x heads).
    """
    import statistics

    if len(rows) < 2:
        return None
    xs = [float(row["seq_len"]) for row in rows]
    ys = [float(row["bytes_per_token_per_layer"]) for row in rows]
    slope, intercept = statistics.linear_regression(xs, ys)
    residual = max(abs(y - (intercept + slope * x)) for x, y in zip(xs, ys, strict=True))
    return {
        "bytes_per_token_per_layer_constant": intercept,
        "bytes_per_token_per_layer_per_seq_len": slope,
        "max_abs_residual": residual,
    }


def run_layer_counts(family: Family, variant: Variant, seq_lens: Sequence[int]
                     ) -> tuple[dict[int, dict[int, dict[str, Any]]], dict[str, Any]]:
    """Totals at both layer counts and every sequence length; what the model was built as."""
    totals: dict[int, dict[int, dict[str, Any]]] = {}
    info: dict[str, Any] = {}
    for num_layers in family.layer_counts:
        build_start = time.perf_counter()
        model = build_model(family, variant, num_layers, max(seq_lens))
        build_seconds = time.perf_counter() - build_start
        totals[num_layers] = {}
        for seq_len in seq_lens:
            print(f"  {family.name}: {num_layers} layers, s={seq_len}", file=sys.stderr, flush=True)
            run = measure_once(model, seq_len)
            run["build_seconds"] = round(build_seconds, 2)
            run["prefix"] = layer_list_prefix(model, num_layers)
            totals[num_layers][seq_len] = run
            print(f"    total {run['total_bytes']:,} B, forward {run['forward_seconds']} s",
                  file=sys.stderr, flush=True)
        config = model.config
        info = {
            "hidden_size": hidden_size(model),
            "attn_implementation": config._attn_implementation,
            # Dense models carry the config default ("eager") though they have no experts.
            "experts_implementation": getattr(config, "_experts_implementation", None)
            if any("Experts" in type(m).__name__ for m in model.modules()) else None,
            "config_used": {key: getattr(config, key, None)
                            for key in sorted({*family.config, family.min_positions_field})},
            "params": {**info.get("params", {}),
                       str(num_layers): sum(p.numel() for p in model.parameters())},
        }
        del model
        gc.collect()
    return totals, info


def differenced(family: Family, totals: dict[int, dict[int, dict[str, Any]]],
                seq_lens: Sequence[int], hidden: int) -> list[dict[str, Any]]:
    """Per-layer bytes at each sequence length, from the two layer counts."""
    small, large = family.layer_counts
    rows = []
    for seq_len in seq_lens:
        tokens = MICRO_BATCH * seq_len
        t_small = totals[small][seq_len]["total_bytes"]
        t_large = totals[large][seq_len]["total_bytes"]
        per_layer = (t_large - t_small) / (large - small)
        per_token = per_layer / tokens
        rows.append({
            "seq_len": seq_len,
            "micro_batch": MICRO_BATCH,
            "total_bytes": {str(small): t_small, str(large): t_large},
            "bytes_per_layer": per_layer,
            "bytes_per_token_per_layer": per_token,
            "coefficient_per_hidden": per_token / hidden,
            "non_layer_bytes": t_small - small * per_layer,
            "non_layer_bytes_per_token": (t_small - small * per_layer) / tokens,
            "forward_seconds": {str(n): totals[n][seq_len]["forward_seconds"]
                                for n in (small, large)},
            "loss": {str(n): totals[n][seq_len]["loss"] for n in (small, large)},
        })
    return rows


def attention_backend(node_names: Sequence[str]) -> str | None:
    """Which attention kernel kept tensors, from the backward nodes met."""
    kernels = [n for n in node_names if "ScaledDotProduct" in n or "KernelStandIn" in n]
    if kernels:
        return ", ".join(kernels)
    if "SafeSoftmaxBackward0" in node_names:
        return "math fallback"
    if "SoftmaxBackward0" in node_names:
        return "eager (matmul, softmax, matmul)"
    return None


def measure_variant(family: Family, variant: Variant, seq_lens: Sequence[int]) -> dict[str, Any]:
    """One attention implementation of a family: per-layer bytes and one layer's breakdown."""
    totals, info = run_layer_counts(family, variant, seq_lens)
    hidden = info["hidden_size"]
    rows = differenced(family, totals, seq_lens, hidden)
    small, large = family.layer_counts
    longest = max(seq_lens)
    run = totals[large][longest]
    tokens = MICRO_BATCH * longest
    detail = breakdown(run, large - 1, tokens, hidden)
    detail["seq_len"] = longest
    detail["num_layers"] = large
    detail["matches_differenced_bytes_per_layer"] = detail["layer_total_bytes"] == next(
        row["bytes_per_layer"] for row in rows if row["seq_len"] == longest)
    backend = attention_backend(run["node_names"])
    return {
        **info,
        "variant_notes": variant.notes,
        "config_overrides": variant.config,
        "forced_attn_implementation": variant.forced,
        "layer_counts": [small, large],
        "sdpa_backend": backend,
        "caveats": [MATH_FALLBACK_CAVEAT] if backend == "math fallback" else [],
        "cpu_dropout_mask_bytes_per_token_per_layer": detail["cpu_dropout_mask_bytes"] / tokens,
        "param_or_buffer_saves_skipped": run["skipped_param_saves"],
        "build_seconds": {str(n): totals[n][seq_lens[0]]["build_seconds"] for n in (small, large)},
        "fit_in_seq_len": fit_in_seq_len(rows),
        "results": rows,
        "breakdown": detail,
    }


def measure_family(family: Family, seq_lens: Sequence[int],
                   only: Sequence[str] | None = None) -> dict[str, Any]:
    """Every variant of a family (or the ``only`` ones)."""
    variants = {label: measure_variant(family, variant, seq_lens)
                for label, variant in family.variants.items() if not only or label in only}
    first = next(iter(variants.values()))
    return {
        "checkpoint": family.checkpoint,
        "model_type": family.model_type,
        "notes": family.notes,
        "hidden_size": first["hidden_size"],
        "config_used": first["config_used"],
        "default_attention": variants.get("default", {}).get("attn_implementation"),
        "pinned": family.pinned,
        "variants": variants,
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON file to write")
    parser.add_argument(
        "--families",
        default="all",
        help=f"comma-separated, from: {','.join(FAMILIES)} (or 'all')",
    )
    parser.add_argument(
        "--seq-lens",
        default=",".join(map(str, DEFAULT_SEQ_LENS)),
        help="comma-separated sequence lengths",
    )
    parser.add_argument("--variants", default="",
                        help="comma-separated variant labels to measure (default: all)")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other families already in --out (for trying one family; "
                             "a committed file is one full run)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    import torch
    import transformers

    names = list(FAMILIES) if args.families == "all" else args.families.split(",")
    unknown = [name for name in names if name not in FAMILIES]
    if unknown:
        print(f"unknown families: {unknown}; known: {list(FAMILIES)}", file=sys.stderr)
        return 2
    seq_lens = [int(s) for s in args.seq_lens.split(",")]
    transformers.logging.set_verbosity_error()

    families: dict[str, Any] = {}
    if args.merge and args.out.exists():
        families = json.loads(args.out.read_text())["families"]
    only = [v for v in args.variants.split(",") if v]
    for name in names:
        print(f"measuring {name}", file=sys.stderr, flush=True)
        families[name] = measure_family(FAMILIES[name], seq_lens, only)

    document = {
        "description": "Bytes saved for backward by a transformers model in train mode "
        "(forward with labels, batch 1), per decoder layer by differencing two layer counts; "
        "written by benchmarks/activation_memory.py.",
        "method": "saved_tensors_hooks pack: distinct storages (data_ptr, nbytes), "
        "parameters and buffers excluded; per-layer = (T(L2) - T(L1)) / (L2 - L1).",
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        },
        "device": "cpu",
        "dtype": "bfloat16",
        "torch_threads": torch.get_num_threads(),
        "families": families,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
