"""The config reader's newer families, each against a real config file and its exact count.

Fixtures in tests/fixtures/configs are local copies of the checkpoints' Hugging Face
``config.json``. Exact counts are the safetensors totals the Hub shows for each checkpoint
(model page "Safetensors", API ``safetensors.total``), also given by llama.cpp's GGUF
``general.parameter_count`` of the converted checkpoints.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from compute_budget.skill.errors import ConfigError
from compute_budget.skill.model.architecture import ConfigNote
from compute_budget.skill.model.config_file import load_config
from compute_budget.skill.model.hf_config import from_hf_config
from compute_budget.skill.model.hf_families import SUPPORTED_MODEL_TYPES
from compute_budget.skill.model.param_count import count_params

CONFIGS = Path(__file__).parent.parent / "fixtures" / "configs"


def config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CONFIGS / name).read_text())
    return data


# (fixture, exact total): Hub safetensors totals of google/gemma-2-2b, google/gemma-3-1b-pt,
# Qwen/Qwen3-8B, Qwen/Qwen3-30B-A3B, microsoft/phi-4 and allenai/OLMo-2-1124-7B.
EXACT = [
    ("gemma-2-2b.json", 2_614_341_888),
    ("gemma-3-1b-pt.json", 999_885_952),
    ("qwen3-8b.json", 8_190_735_360),
    ("qwen3-30b-a3b.json", 30_532_122_624),
    ("phi-4.json", 14_659_507_200),
    ("olmo-2-1124-7b.json", 7_298_617_344),
]


@pytest.mark.parametrize(("filename", "total"), EXACT)
def test_new_family_exact_count(filename: str, total: int) -> None:
    assert count_params(load_config(CONFIGS / filename)).total == total


def test_gemma2_ties_embeddings_and_has_four_norms_per_layer() -> None:
    # Gemma2DecoderLayer: input, post-attention, pre- and post-feedforward RMSNorms of d = 2304;
    # Gemma2Config ties the LM head by default (the 2B config does not say).
    arch = load_config(CONFIGS / "gemma-2-2b.json")
    params = count_params(arch)
    assert arch.tied_embeddings and params.lm_head == 0
    assert (arch.layer_norms, arch.qk_norm, arch.head_dim) == (4, "none", 256)
    assert params.norms == 26 * 4 * 2304 + 2304
    # Local layers alternate with global ones: counted as full attention, and said so.
    assert any(n.code == "partial_window" for n in arch.defaults_used)
    assert arch.sliding_window is None


def test_gemma3_adds_query_key_norms_of_head_dim() -> None:
    arch = load_config(CONFIGS / "gemma-3-1b-pt.json")
    params = count_params(arch)
    assert (arch.layer_norms, arch.qk_norm) == (4, "head")
    # 4 norms of d = 1152 and q_norm, k_norm of head_dim 256, in 26 layers; final norm.
    assert params.norms == 26 * (4 * 1152 + 2 * 256) + 1152


def test_qwen3_query_key_norms_and_no_biases() -> None:
    arch = load_config(CONFIGS / "qwen3-8b.json")
    params = count_params(arch)
    assert (arch.qk_norm, arch.attention_bias, arch.head_dim) == ("head", "none", 128)
    assert params.norms == 36 * (2 * 4096 + 2 * 128) + 4096
    assert not any(n.code == "partial_window" for n in arch.defaults_used)


def test_qwen3_moe_routed_experts_only() -> None:
    # Qwen3-30B-A3B: 128 experts of width 768, 8 per token, no shared expert; Qwen reports
    # "3.3B" activated (Qwen/Qwen3-30B-A3B model card), a figure cut, not rounded, to 0.1B.
    arch = load_config(CONFIGS / "qwen3-30b-a3b.json")
    params = count_params(arch)
    assert (arch.experts, arch.experts_per_token, arch.shared_experts) == (128, 8, 0)
    assert params.router == 48 * 128 * 2048
    assert 3.3e9 <= params.active < 3.4e9


def test_phi3_fused_projections_count_as_separate_ones() -> None:
    # Phi3Attention.qkv_proj: d × (H + 2G)·Q; Phi3MLP.gate_up_proj: d × 2f; no biases.
    arch = load_config(CONFIGS / "phi-4.json")
    params = count_params(arch)
    q, kv = 40 * 128, 10 * 128
    assert params.attention == 40 * (5120 * (q + 2 * kv) + q * 5120)
    assert params.dense_mlp == 40 * (5120 * 2 * 17920 + 17920 * 5120)
    assert arch.sliding_window is None and not arch.tied_embeddings


def test_olmo2_norms_after_sublayers_and_over_whole_projections() -> None:
    # Olmo2DecoderLayer: post_attention_layernorm and post_feedforward_layernorm; q_norm over
    # H·Q = 4096 and k_norm over G·Q = 4096 channels.
    arch = load_config(CONFIGS / "olmo-2-1124-7b.json")
    params = count_params(arch)
    assert (arch.layer_norms, arch.qk_norm) == (2, "projection")
    assert params.norms == 32 * (2 * 4096 + 4096 + 4096) + 4096


def test_qk_norm_kind_changes_the_count_by_the_norm_widths() -> None:
    base = config("olmo-2-1124-7b.json")
    olmo = count_params(from_hf_config(base))
    as_llama = count_params(from_hf_config({**base, "model_type": "llama"}))
    assert olmo.total - as_llama.total == 32 * (4096 + 4096)


def test_family_defaults_are_listed_when_absent() -> None:
    data = {k: v for k, v in config("gemma-2-2b.json").items() if k != "head_dim"}
    arch = from_hf_config(data)
    assert arch.head_dim == 256
    assert ConfigNote(code="family_default", field="head_dim", value=256, missing="absent",
                      reference="Gemma2Config") in arch.defaults_used
    assert ConfigNote(code="family_default", field="tie_word_embeddings", value=True,
                      missing="absent", reference="Gemma2Config") in arch.defaults_used


@pytest.mark.parametrize("filename", [name for name, _ in EXACT])
@pytest.mark.parametrize("missing", ["num_hidden_layers", "vocab_size"])
def test_missing_required_field_is_named(filename: str, missing: str) -> None:
    data = {k: v for k, v in config(filename).items() if k != missing}
    with pytest.raises(ConfigError) as info:
        from_hf_config(data)
    assert info.value.field == missing


def test_unsupported_family_names_the_field_and_the_supported_families() -> None:
    secret = "internal-model-family-x"
    with pytest.raises(ConfigError) as info:
        from_hf_config({**config("qwen3-8b.json"), "model_type": secret})
    message = str(info.value)
    assert info.value.field == "model_type"
    assert message.startswith("model_type: not one of the supported families")
    for family in ("gemma2", "gemma3_text", "qwen3", "qwen3_moe", "phi3", "olmo2"):
        assert family in SUPPORTED_MODEL_TYPES and family in message
    assert secret not in message and message.endswith("(value not shown)")


def test_the_multimodal_gemma3_wrapper_is_refused_not_guessed() -> None:
    # google/gemma-3-4b-pt's config is model_type "gemma3" with the decoder in text_config and
    # a vision tower beside it; only the text-only gemma3_text layout is read.
    with pytest.raises(ConfigError) as info:
        from_hf_config({"model_type": "gemma3", "text_config": config("gemma-3-1b-pt.json")})
    assert info.value.field == "model_type"
