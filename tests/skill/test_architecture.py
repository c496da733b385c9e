"""Architectures: exact parameter counts against published ones, config parsing, presets, errors.

The fixture configs in tests/fixtures/configs are local copies of the models' Hugging Face
``config.json`` files; nothing is downloaded.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from compute_budget.skill.errors import ConfigError, describe_error
from compute_budget.skill.model.architecture import Architecture, ConfigNote, LatentAttention
from compute_budget.skill.model.config_file import load_config
from compute_budget.skill.model.hf_config import from_hf_config
from compute_budget.skill.model.param_count import check_tensor_parallel, count_params
from compute_budget.skill.model.presets import PRESETS, get_preset

CONFIGS = Path(__file__).parent.parent / "fixtures" / "configs"


def config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CONFIGS / name).read_text())
    return data


# Exact parameter counts as published: sum(p.numel() for p in model.parameters()) of the
# Hugging Face model (model.num_parameters()); the model pages show them rounded.
#   GPT-2 124,439,808: GPT2LMHeadModel "gpt2" (tied LM head), Radford et al. 2019's "124M"
#     (its safetensors file also stores the attention-mask buffers, so the page shows more).
#   Llama-2-7B 6,738,415,616: meta-llama/Llama-2-7b-hf ("6.74B").
#   Llama-3-8B 8,030,261,248: meta-llama/Meta-Llama-3-8B ("8.03B").
#   Mistral-7B 7,241,732,096: mistralai/Mistral-7B-v0.1 ("7.24B").
#   Mixtral-8x7B 46,702,792,704 total, 12,879,925,248 active: mistralai/Mixtral-8x7B-v0.1
#     ("46.7B"; Jiang et al. 2024, "Mixtral of Experts": 47B total, 13B active per token).
#   Pythia-160M 162,322,944 total, 85,056,000 non-embedding: the EleutherAI/pythia README
#     (Biderman et al. 2023, "Pythia").
EXACT = [
    ("gpt2.json", "gpt2", 124_439_808, 124_439_808),
    ("llama-2-7b-hf.json", "llama-2-7b", 6_738_415_616, 6_738_415_616),
    ("meta-llama-3-8b.json", "llama-3-8b", 8_030_261_248, 8_030_261_248),
    ("mistral-7b-v0.1.json", "mistral-7b", 7_241_732_096, 7_241_732_096),
    ("mixtral-8x7b-v0.1.json", "mixtral-8x7b", 46_702_792_704, 12_879_925_248),
]


@pytest.mark.parametrize(("filename", "preset", "total", "active"), EXACT)
def test_exact_published_counts_from_config(
    filename: str, preset: str, total: int, active: int
) -> None:
    params = count_params(load_config(CONFIGS / filename))
    assert params.total == total
    assert params.active == active


@pytest.mark.parametrize(("filename", "preset", "total", "active"), EXACT)
def test_exact_published_counts_from_preset(
    filename: str, preset: str, total: int, active: int
) -> None:
    params = count_params(get_preset(preset))
    assert params.total == total
    assert params.active == active


@pytest.mark.parametrize(("filename", "preset", "total", "active"), EXACT)
def test_preset_has_the_shape_of_the_real_config(
    filename: str, preset: str, total: int, active: int
) -> None:
    # Presets are written out by hand; the config parser reaches the same shape independently.
    ignore = {"name", "source", "defaults_used"}
    assert get_preset(preset).model_dump(exclude=ignore) == load_config(
        CONFIGS / filename
    ).model_dump(exclude=ignore)


def test_pythia_160m_gpt_neox_counts() -> None:
    # EleutherAI/pythia README (Biderman et al. 2023): 162,322,944 total, 85,056,000
    # non-embedding.
    arch = load_config(CONFIGS / "pythia-160m.json")
    params = count_params(arch)
    assert params.total == 162_322_944
    assert params.non_embedding == 85_056_000
    # GPT-NeoX: untied embed_in / embed_out, rotary positions, LayerNorm, parallel residual.
    assert params.lm_head == params.embedding == 50304 * 768
    assert params.position_embedding == 0
    assert (arch.norm, arch.parallel_residual, arch.tied_embeddings) == ("layernorm", True, False)


def test_gpt2_layout_and_defaults_used() -> None:
    arch = load_config(CONFIGS / "gpt2.json")
    params = count_params(arch)
    # GPT-2 ties the LM head and learns 1024 positions; Kaplan's non-embedding N is 85M.
    assert params.lm_head == 0
    assert params.position_embedding == 1024 * 768
    assert params.non_embedding == 85_056_000
    assert arch.intermediate_size == 3072
    assert ConfigNote(code="n_inner_default", field="n_inner", value=3072, missing="absent",
                      reference="GPT-2") in arch.defaults_used


def test_gpt2_n_inner_given_is_used_not_defaulted() -> None:
    arch = from_hf_config({**config("gpt2.json"), "n_inner": 2048})
    assert arch.intermediate_size == 2048
    assert not any(note.field == "n_inner" for note in arch.defaults_used)


def test_tied_llama_has_no_lm_head() -> None:
    # Llama 3.2 1B ties its embeddings and gives head_dim = 64 explicitly; Hugging Face lists
    # meta-llama/Llama-3.2-1B at 1.24B parameters.
    arch = load_config(CONFIGS / "llama-3.2-1b.json")
    params = count_params(arch)
    assert arch.tied_embeddings
    assert params.lm_head == 0
    assert (arch.head_dim, arch.kv_heads) == (64, 8)
    assert round(params.total / 1e7) == 124
    untied = count_params(from_hf_config({**config("llama-3.2-1b.json"),
                                          "tie_word_embeddings": False}))
    assert untied.total - params.total == 128256 * 2048


def test_qwen2_biases_on_qkv_only() -> None:
    # Qwen2-7B: Hugging Face lists Qwen/Qwen2-7B at 7.62B parameters.
    arch = load_config(CONFIGS / "qwen2-7b.json")
    params = count_params(arch)
    assert arch.attention_bias == "qkv"
    assert round(params.total / 1e7) == 762
    no_bias = count_params(arch.model_copy(update={"attention_bias": "none"}))
    # q, k and v biases: (28 + 2·4) heads × 128 per layer, 28 layers.
    assert params.total - no_bias.total == 28 * (28 + 2 * 4) * 128


def test_qwen1_5_moe_shared_expert() -> None:
    # Qwen team 2024, "Qwen1.5-MoE: Matching 7B Model Performance with 1/3 Activated
    # Parameters": 14.3B in total, 2.7B activated.
    arch = load_config(CONFIGS / "qwen1.5-moe-a2.7b.json")
    params = count_params(arch)
    assert round(params.total / 1e8) == 143
    assert round(params.active / 1e8) == 27
    assert (arch.shared_experts, arch.shared_expert_intermediate_size) == (1, 5632)
    # Router: 60 experts × d, plus the d × 1 shared-expert gate, in each of 24 layers.
    assert params.router == 24 * (60 * 2048 + 2048)


def test_qwen2_moe_dense_layers_from_mlp_only_layers_and_sparse_step() -> None:
    base = config("qwen1.5-moe-a2.7b.json")
    assert from_hf_config({**base, "mlp_only_layers": [0, 5]}).dense_layers == 2
    assert from_hf_config({**base, "decoder_sparse_step": 2}).dense_layers == 12


def test_deepseek_v3_mla_and_experts() -> None:
    # DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", abstract: 671B total parameters, 37B
    # activated per token. DeepSeek counts activated parameters without the input embedding
    # lookup (the LM head computes; the lookup does not), so compare active − embedding.
    arch = load_config(CONFIGS / "deepseek-v3.json")
    params = count_params(arch)
    assert round(params.total / 1e9) == 671
    assert round((params.active - params.embedding) / 1e9) == 37
    assert arch.mla is not None and arch.mla.q_lora_rank == 1536
    assert (arch.dense_layers, arch.moe_layers, arch.shared_experts) == (3, 58, 1)
    assert any(note.code == "mtp_not_counted" and note.value == 1 for note in arch.defaults_used)
    assert count_params(get_preset("deepseek-v3")).total == params.total


def test_deepseek_v2_lite_full_query_projection() -> None:
    # DeepSeek-AI 2024, DeepSeek-V2 paper / deepseek-ai/DeepSeek-V2-Lite card: 15.7B total,
    # 2.4B activated (same convention as V3: without the input embedding lookup).
    arch = load_config(CONFIGS / "deepseek-v2-lite.json")
    params = count_params(arch)
    assert arch.mla is not None and arch.mla.q_lora_rank is None
    assert round(params.total / 1e8) == 157
    assert (params.active - params.embedding) / 1e9 == pytest.approx(2.4, rel=0.03)


def test_deepseek_mla_attention_count_by_hand() -> None:
    # DeepSeek-V3 attention per layer (DeepseekV3Attention): q_a 7168·1536, q_b 1536·128·192,
    # kv_a 7168·(512 + 64), kv_b 512·128·(128 + 128), o 128·128·7168; no biases.
    per_layer = (7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256
                 + 128 * 128 * 7168)
    assert count_params(get_preset("deepseek-v3")).attention == 61 * per_layer


def test_deepseek_without_routed_experts_is_dense() -> None:
    arch = from_hf_config({**config("deepseek-v2-lite.json"), "n_routed_experts": None})
    params = count_params(arch)
    assert not arch.is_moe
    assert params.routed_experts == params.shared_experts == params.router == 0
    assert params.dense_mlp == 27 * 3 * 2048 * 10944


def test_gpt3_175b_preset_matches_table_2_1() -> None:
    # Brown et al. 2020, Table 2.1: GPT-3 175B has 175.0B parameters.
    arch = get_preset("gpt3-175b")
    assert count_params(arch).total == pytest.approx(175.0e9, rel=0.005)
    assert arch.defaults_used  # its assumptions are listed, not presented as facts


@pytest.mark.parametrize(("preset", "billions"), [("llama-2-70b", 69.0), ("llama-3-70b", 70.6)])
def test_70b_presets(preset: str, billions: float) -> None:
    # Hugging Face model pages: meta-llama/Llama-2-70b-hf 69B, meta-llama/Meta-Llama-3-70B 70.6B.
    assert round(count_params(get_preset(preset)).total / 1e8) / 10 == billions


def test_narayanan_eq_2_and_table_1() -> None:
    # Narayanan et al. 2021, eq. 2: P = 12·l·h²·(1 + 13/(12h) + (V + s)/(12·l·h)); Table 1 lists
    # the 128-layer, h = 25600 model (V = 51200, s = 2048) as 1008B parameters. Eq. 2 leaves
    # out the final LayerNorm (2h).
    layers, h, vocab, seq = 128, 25600, 51200, 2048
    arch = Architecture(
        source="Narayanan et al. 2021, Table 1", layers=layers, hidden=h, heads=160,
        intermediate_size=4 * h, vocab_size=vocab, gated_mlp=False, tied_embeddings=True,
        position_embedding="learned", max_positions=seq, attention_bias="all", mlp_bias=True,
        norm="layernorm",
    )
    eq_2 = 12 * layers * h**2 + 13 * layers * h + (vocab + seq) * h
    assert count_params(arch).total == eq_2 + 2 * h
    assert round(eq_2 / 1e9) == 1008


@pytest.mark.parametrize("preset", list(PRESETS))
def test_breakdown_adds_up(preset: str) -> None:
    p = count_params(get_preset(preset))
    parts = (p.embedding + p.position_embedding + p.attention + p.dense_mlp + p.routed_experts
             + p.shared_experts + p.router + p.norms + p.lm_head)
    assert p.total == parts
    assert p.non_embedding == p.total - p.embedding - p.position_embedding - p.lm_head
    assert p.active_non_embedding <= p.non_embedding
    assert 0 < p.active_matmul_weights <= p.active_non_embedding
    assert get_preset(preset).source


def test_moe_active_excludes_unused_experts_only() -> None:
    mixtral = count_params(get_preset("mixtral-8x7b"))
    one_expert = 3 * 4096 * 14336
    assert mixtral.total - mixtral.active == 32 * (8 - 2) * one_expert
    assert mixtral.routed_experts == 32 * 8 * one_expert
    assert mixtral.router == 32 * 8 * 4096


def test_llama_defaults_are_listed() -> None:
    # Llama-2's config has no attention_bias, mlp_bias or head_dim; Llama-3's gives
    # attention_bias, so only the others are defaults there.
    llama2 = load_config(CONFIGS / "llama-2-7b-hf.json")
    llama3 = load_config(CONFIGS / "meta-llama-3-8b.json")
    assert ConfigNote(code="family_default", field="attention_bias", value=False,
                      missing="absent", reference="LlamaConfig") in llama2.defaults_used
    assert not any(n.field == "attention_bias" for n in llama3.defaults_used)
    assert any(n.field == "mlp_bias" and n.missing == "absent" for n in llama3.defaults_used)


def test_missing_kv_heads_defaults_to_heads_and_says_so() -> None:
    data = {k: v for k, v in config("meta-llama-3-8b.json").items()
            if k != "num_key_value_heads"}
    arch = from_hf_config(data)
    assert arch.kv_heads == 32
    assert ConfigNote(code="kv_heads_default", field="num_key_value_heads", value=32,
                      missing="absent", reference="LlamaConfig") in arch.defaults_used


def test_mistral_window_default_and_explicit_null() -> None:
    base = config("mistral-7b-v0.1.json")
    assert load_config(CONFIGS / "mistral-7b-v0.1.json").sliding_window == 4096
    absent = from_hf_config({k: v for k, v in base.items() if k != "sliding_window"})
    assert absent.sliding_window == 4096
    assert ConfigNote(code="family_default", field="sliding_window", value=4096, missing="absent",
                      reference="MistralConfig") in absent.defaults_used
    assert from_hf_config({**base, "sliding_window": None}).sliding_window is None


@pytest.mark.parametrize("model_type", ["somenewlm", "bert", "t5", None])
def test_unknown_model_type_is_refused_not_guessed(model_type: str | None) -> None:
    # A BERT-base config read with Llama's layout would count 160M parameters, not ~110M.
    data = {**config("meta-llama-3-8b.json"), "model_type": model_type}
    with pytest.raises(ConfigError) as info:
        from_hf_config(data)
    assert info.value.field == "model_type"
    assert "llama" in str(info.value) and "parameter count" in str(info.value)


def test_unknown_moe_model_type_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        from_hf_config({**config("mixtral-8x7b-v0.1.json"), "model_type": "brandnew_moe"})
    assert info.value.field == "model_type"
    assert "num_local_experts" in str(info.value)


def test_source_and_name() -> None:
    arch = load_config(CONFIGS / "llama-2-7b-hf.json")
    assert arch.source == str(CONFIGS / "llama-2-7b-hf.json")
    assert arch.name == "meta-llama/Llama-2-7b-hf"
    assert from_hf_config(config("gpt2.json"), source="mine").source == "mine"


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "missing"),
    [
        ("meta-llama-3-8b.json", "num_hidden_layers"),
        ("meta-llama-3-8b.json", "intermediate_size"),
        ("gpt2.json", "n_embd"),
        ("gpt2.json", "n_positions"),
        ("pythia-160m.json", "vocab_size"),
        ("mixtral-8x7b-v0.1.json", "num_local_experts"),
        ("qwen1.5-moe-a2.7b.json", "shared_expert_intermediate_size"),
        ("deepseek-v3.json", "q_lora_rank"),
        ("deepseek-v3.json", "kv_lora_rank"),
        ("deepseek-v3.json", "v_head_dim"),
        ("deepseek-v3.json", "first_k_dense_replace"),
    ],
)
def test_missing_required_field_is_named(filename: str, missing: str) -> None:
    data = {k: v for k, v in config(filename).items() if k != missing}
    with pytest.raises(ConfigError) as info:
        from_hf_config(data)
    assert info.value.field == missing
    assert str(info.value).startswith(f"{missing}: required but missing")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"num_key_value_heads": 5}, "num_key_value_heads"),
        ({"num_attention_heads": 30}, "num_attention_heads"),
        ({"num_experts_per_tok": 9}, "num_experts_per_tok"),
        ({"num_hidden_layers": 0}, "num_hidden_layers"),
        ({"num_hidden_layers": -2}, "num_hidden_layers"),
        ({"num_hidden_layers": "32"}, "num_hidden_layers"),
        ({"hidden_size": 4096.0}, "hidden_size"),
        ({"vocab_size": True}, "vocab_size"),
        ({"tie_word_embeddings": "no"}, "tie_word_embeddings"),
    ],
)
def test_contradictory_or_malformed_fields_are_named(change: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as info:
        from_hf_config({**config("mixtral-8x7b-v0.1.json"), **change})
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: not ")
    assert str(info.value).endswith("(value not shown)")  # a config's values never come back


def test_deepseek_first_dense_layers_cannot_cover_every_layer() -> None:
    with pytest.raises(ConfigError) as info:
        from_hf_config({**config("deepseek-v3.json"), "first_k_dense_replace": 61})
    assert info.value.field == "first_k_dense_replace"


def test_config_must_be_a_mapping() -> None:
    with pytest.raises(ConfigError) as info:
        from_hf_config([1, 2])  # type: ignore[arg-type]
    assert info.value.field == "config"


def test_load_config_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "nope.json")
    assert info.value.field == "config"
    assert "nope.json" in str(info.value)


def test_load_config_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert info.value.field == "config"


def test_load_config_invalid_json(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama",,}')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.field == "config"
    assert "valid JSON (line 1" in str(info.value)


def test_load_config_not_an_object(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text("[1, 2, 3]")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "a JSON object, not a list" in str(info.value)


def test_load_config_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.field == "config"


def _arch(**fields: Any) -> Architecture:
    base: dict[str, Any] = {"source": "test", "layers": 2, "hidden": 64, "heads": 4,
                            "intermediate_size": 128, "vocab_size": 100}
    return Architecture(**(base | fields))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kv_heads": 3}, "kv_heads: 3 is not allowed; a divisor of heads (4)"),
        ({"heads": 5}, "heads: 5 is not allowed; a divisor of hidden (64)"),
        ({"position_embedding": "learned"}, "max_positions: required but missing"),
        ({"experts_per_token": 2}, "experts_per_token: 2 is not allowed; unset for a dense"),
        ({"experts": 4, "experts_per_token": 5, "expert_intermediate_size": 32},
         "experts_per_token: 5 is not allowed; between 1 and experts (4)"),
        ({"experts": 4, "experts_per_token": 1}, "expert_intermediate_size: required but missing"),
        ({"experts": 4, "experts_per_token": 1, "expert_intermediate_size": 32,
          "dense_layers": 2}, "dense_layers: 2 is not allowed; fewer than layers (2)"),
        ({"experts": 4, "experts_per_token": 1, "expert_intermediate_size": 32,
          "shared_expert_gate": True}, "shared_experts: 0 is not allowed"),
        ({"layers": 0}, "layers: 0 is not allowed; must be > 0"),
        ({"hidden": -64}, "hidden: -64 is not allowed; must be > 0"),
        ({"norm": "batchnorm"}, "norm: 'batchnorm' is not allowed"),
        ({"bogus": 1}, "bogus: unknown argument"),
    ],
)
def test_architecture_validation_names_the_field(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as info:
        _arch(**fields)
    assert message in describe_error(info.value)


def test_explicit_head_dim_allows_heads_not_dividing_hidden() -> None:
    arch = _arch(heads=5, kv_heads=1, head_dim=16)
    # q: 64·5·16, k and v: 64·1·16 each, o: 5·16·64 per layer.
    per_layer = 64 * 80 + 2 * 64 * 16 + 80 * 64
    assert count_params(arch).attention == 2 * per_layer


def test_latent_attention_validates() -> None:
    with pytest.raises(ValidationError):
        LatentAttention(kv_lora_rank=0, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128)


def test_architecture_is_frozen() -> None:
    arch = get_preset("gpt2")
    with pytest.raises(ValidationError):
        arch.layers = 3  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------
# Presets and tensor parallelism
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["Llama-2-7B", "LLAMA_2_7B", " llama 2 7b "])
def test_preset_names_are_case_insensitive(spelling: str) -> None:
    assert get_preset(spelling) is PRESETS["llama-2-7b"]


def test_unknown_preset_suggests_close_matches() -> None:
    with pytest.raises(ConfigError) as info:
        get_preset("llama-2-7")
    assert info.value.field == "preset"
    assert "did you mean 'llama-2-7b'" in str(info.value)


def test_unknown_preset_without_close_match_lists_presets() -> None:
    with pytest.raises(ConfigError) as info:
        get_preset("zzzzzz")
    assert "did you mean" not in str(info.value)
    assert "gpt3-175b" in str(info.value)


def test_tensor_parallel_must_divide_heads_and_kv_heads() -> None:
    llama3 = get_preset("llama-3-8b")  # 32 heads, 8 KV heads
    check_tensor_parallel(llama3, 8)
    with pytest.raises(ConfigError, match=r"^tp: 16 is not allowed; a divisor of the key-value"):
        check_tensor_parallel(llama3, 16)
    with pytest.raises(ConfigError, match=r"^tp: 3 is not allowed; a divisor of the attention"):
        check_tensor_parallel(llama3, 3)
    for bad in (0, -2, 2.0, True):
        with pytest.raises(ConfigError) as info:
            check_tensor_parallel(llama3, bad)  # type: ignore[arg-type]
        assert info.value.field == "tp"


def test_tensor_parallel_with_latent_attention_checks_query_heads_only() -> None:
    check_tensor_parallel(get_preset("deepseek-v3"), 128)
    with pytest.raises(ConfigError):
        check_tensor_parallel(get_preset("deepseek-v3"), 256)
