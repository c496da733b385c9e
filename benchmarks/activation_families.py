"""The model families and attention variants :mod:`.activation_memory` measures.

Each :class:`Family` is a checkpoint's shapes as transformers config fields, with the attention
implementations (:class:`Variant`) it is measured at; :data:`FAMILIES` holds one per model type
the config reader accepts. Plain data: importing it needs neither torch nor transformers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
