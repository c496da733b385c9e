"""Memory per device: the ZeRO paper's Table 1, optimizers, activations, parallelism, fits,
LoRA and quantized bases, offload and expert parallelism, and bad input."""

import pytest
from pydantic import ValidationError

from compute_budget import MemorySpec, estimate_memory, get_preset
from compute_budget.skill.errors import describe_error
from compute_budget.skill.memory.activations import activation_bytes
from compute_budget.skill.memory.lora import decoder_linear_weights, lora_params
from compute_budget.skill.memory.optimizers import resolve_optimizer
from compute_budget.skill.memory.states import model_state_bytes
from compute_budget.skill.model.shape import ModelShape, guess_shape, shape_from_architecture

GB = 1e9  # the ZeRO paper's GB


# Rajbhandari et al. 2020, "ZeRO", Table 1: per-device model-state memory in GB for
# Ψ = 7.5B, 128B and 1T parameters, K = 12, by data-parallel degree N_d and stage
# (baseline, P_os = stage 1, P_os+g = stage 2, P_os+g+p = stage 3).
ZERO_TABLE_1 = [
    (7.5e9, 1, (120, 120, 120, 120)),
    (7.5e9, 4, (120, 52.5, 41.3, 30)),
    (7.5e9, 16, (120, 35.6, 21.6, 7.5)),
    (7.5e9, 64, (120, 31.4, 16.6, 1.88)),
    (7.5e9, 256, (120, 30.4, 15.4, 0.47)),
    (7.5e9, 1024, (120, 30.1, 15.1, 0.12)),
    (128e9, 64, (2048, 536, 284, 32)),
    (128e9, 1024, (2048, 513, 257, 2)),
    (1e12, 1024, (16000, 4011, 2013, 15.6)),
]


@pytest.mark.parametrize(("psi", "nd", "row"), ZERO_TABLE_1)
def test_zero_paper_table_1(psi: float, nd: int, row: tuple[float, ...]) -> None:
    for stage, expected in enumerate(row):
        total = sum(model_state_bytes(psi, psi, 12, stage, nd)) / GB
        assert total == pytest.approx(expected, rel=0.02, abs=0.006), (stage, nd)


def test_zero_through_the_spec_excludes_activations() -> None:
    # Same Table 1 row through the public spec: N_d = 64 devices, no TP/PP, stage 2 → 16.6 GB.
    est = estimate_memory(MemorySpec(params=7.5e9, gpu_count=64, zero=2, tp=1, pp=1))
    b = est.per_gpu_bytes
    assert (b.weights + b.gradients + b.optimizer) / GB == pytest.approx(16.6, abs=0.05)
    assert b.total == pytest.approx(b.weights + b.gradients + b.optimizer + b.activations)


def test_zero_shards_over_data_parallel_degree_not_all_devices() -> None:
    # 64 devices with TP 8: N_d = 8, so ZeRO-3 divides the 1/8-per-rank states by 8, not 64.
    est = estimate_memory(MemorySpec(params=64e9, gpu_count=64, tp=8, pp=1, zero=3))
    assert est.data_parallel == 8
    shards = est.per_gpu_bytes.weights - est.zero3_gathered_bytes
    assert shards == pytest.approx(2 * 64e9 / 8 / 8)
    # plus two whole layers at a time, 16-bit, split by TP (the guessed shape's layer weights)
    assert est.zero3_gathered_bytes > 0


@pytest.mark.parametrize(("name", "k"), [("adamw", 12), ("adam8bit", 6), ("sgd", 8),
                                         ("adafactor", 4)])
def test_optimizer_bytes(name: str, k: float) -> None:
    est = estimate_memory(MemorySpec(params=1e9, gpu_count=1, optimizer=name, zero=0))
    assert est.per_gpu_bytes.optimizer == pytest.approx(k * 1e9)


@pytest.mark.parametrize(("alias", "name"), [("Adam", "adamw"), ("adamw-8bit", "adam8bit"),
                                             ("SGD-momentum", "sgd"), ("AdaFactor", "adafactor")])
def test_optimizer_aliases(alias: str, name: str) -> None:
    assert resolve_optimizer(alias).name == name


def test_frozen_parameters_have_no_gradients_or_optimizer_state() -> None:
    lora = estimate_memory(MemorySpec(params=7e9, trainable_params=40e6, gpu_count=1, zero=0))
    full = estimate_memory(MemorySpec(params=7e9, gpu_count=1, zero=0))
    assert lora.per_gpu_bytes.weights == full.per_gpu_bytes.weights
    assert lora.per_gpu_bytes.gradients == pytest.approx(2 * 40e6)
    assert lora.per_gpu_bytes.optimizer == pytest.approx(12 * 40e6)
    assert lora.per_gpu_bytes.activations == full.per_gpu_bytes.activations


# Korthikanti et al. 2022, eq. 1–2 and Table 2, bytes per layer for GPT-3 175B's shape
# (s = 2048, h = 12288, a = 96, b = 1, t = 8), on the megatron stack (GPT layers: plain 4h MLP,
# multi-head attention, dropout on), one layer, no logits.
S, H, A, T = 2048, 12288, 96, 8
GPT3_LAYER = shape_from_architecture(get_preset("gpt3-175b")).model_copy(
    update={"layers": 1, "vocab": None})


def _layer(**layout: object) -> float:
    options: dict[str, object] = {"stack": "megatron", "seq_len": S, "micro_batch": 1,
                                  "flash_attention": False}
    options.update(layout)
    return activation_bytes(GPT3_LAYER, **options)[0]  # type: ignore[arg-type]


def test_activations_no_parallelism() -> None:
    assert _layer() == pytest.approx(S * H * (34 + 5 * A * S / H))


def test_activations_tensor_parallel() -> None:
    assert _layer(tp=T) == pytest.approx(S * H * (10 + 24 / T + 5 * A * S / (H * T)))


def test_activations_tensor_and_sequence_parallel() -> None:
    assert _layer(tp=T, sp=True) == pytest.approx(S * H * (34 / T + 5 * A * S / (H * T)))


def test_activations_selective_recompute_and_flash_drop_the_scores() -> None:
    selective = _layer(tp=T, sp=True, recompute="selective")
    flash = _layer(tp=T, sp=True, flash_attention=True)
    assert selective == pytest.approx(S * H * 34 / T)
    assert flash == pytest.approx(selective)


def test_activations_full_recompute_keeps_layer_inputs_and_one_working_layer() -> None:
    # One layer: its input (2·s·h) plus its own activations while it is recomputed.
    assert _layer(recompute="full", flash_attention=True) == pytest.approx(2 * S * H + S * H * 34)
    assert _layer(tp=T, sp=True, recompute="full", flash_attention=True) == \
        pytest.approx(2 * S * H / T + S * H * 34 / T)


def test_korthikanti_table_gpt3_selective_tp_sp() -> None:
    # Korthikanti et al. 2022 Table 2 with the paper's GPT-3 175B setup (96 layers, TP 8):
    # sequence parallel + selective recompute needs 34·s·b·h·L/t bytes in the layers,
    # 34 × 2048 × 12288 × 96 / 8 ≈ 10.3 GB (their Figure 1 shows ~10 GB for the layers).
    assert _layer(tp=T, sp=True, recompute="selective") * 96 / 1e9 == \
        pytest.approx(10.27, abs=0.02)


def test_pipeline_first_stage_holds_all_layers_worth() -> None:
    fixed = {"zero": 0, "tp": 1, "recompute": "none", "offload": False}
    base = estimate_memory(MemorySpec(params=7e9, gpu_count=8, pp=1, layers=32, hidden=4096,
                                      heads=32, **fixed))  # type: ignore[arg-type]
    piped = estimate_memory(MemorySpec(params=7e9, gpu_count=8, pp=4, layers=32, hidden=4096,
                                       heads=32, **fixed))  # type: ignore[arg-type]
    assert piped.activations_in_flight == 4
    assert piped.per_gpu_bytes.activations == pytest.approx(base.per_gpu_bytes.activations)
    assert piped.per_gpu_bytes.weights == pytest.approx(base.per_gpu_bytes.weights / 4)


def test_guessed_shape_is_close_for_known_models() -> None:
    # GPT-3 6.7B: 32 layers, hidden 4096 (Brown et al. 2020, Table 2.1).
    shape = guess_shape(6.7e9)
    assert 30 <= shape.layers <= 34
    assert 3840 <= shape.hidden <= 4352
    assert shape.hidden % shape.heads == 0
    assert shape.guessed and shape.origin == "guessed" and shape.reference


def test_fits_against_the_named_device() -> None:
    small = estimate_memory(MemorySpec(params=1e9, gpu_count=1, gpu="h100"))
    big = estimate_memory(MemorySpec(params=70e9, gpu_count=1, gpu="h100"))
    assert small.fits is True and small.headroom_bytes and small.headroom_bytes > 0
    assert big.fits is False and big.headroom_bytes and big.headroom_bytes < 0
    assert estimate_memory(MemorySpec(params=1e9, gpu_count=1)).fits is None


def test_70b_fits_on_64_h100_with_zero3_and_full_recompute() -> None:
    est = estimate_memory(MemorySpec(params=70e9, gpu_count=64, gpu="h100", zero=3, tp=1, pp=1,
                                     recompute="full", layers=80, hidden=8192, heads=64))
    # Model states 16 bytes × 70B / 64 = 17.5 GB, plus recomputed activations.
    b = est.per_gpu_bytes
    states = b.weights - est.zero3_gathered_bytes + b.gradients + b.optimizer
    assert states == pytest.approx(16 * 70e9 / 64)
    # two gathered layers of the given shape (gated MLP of 8h/3 → 21,760): 16-bit, whole
    layer = 4 * 8192**2 + 3 * 8192 * 21760
    assert est.zero3_gathered_bytes == pytest.approx(2 * 2 * layer)
    assert est.fits is True


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        ({"tp": 16}, "tp"),
        ({"pp": 16}, "pp"),
        ({"tp": 3}, "tp"),
        ({"pp": 3}, "pp"),
        ({"tp": 4, "pp": 4, "gpu_count": 8}, "gpu_count"),
        ({"zero": 4}, "zero"),
        ({"zero": -1}, "zero"),
        ({"optimizer": "lion"}, "optimizer"),
        ({"gpu": "h1000"}, "gpu"),
        ({"params": -1}, "params"),
        ({"trainable_params": "8B"}, "trainable_params"),
        ({"layers": 32}, "layers/hidden/heads"),
        ({"layers": 32, "hidden": 4096, "heads": 30}, "heads"),
        ({"layers": 32, "hidden": 4096, "heads": 32, "tp": 3, "gpu_count": 24}, "tp"),
        ({"micro_batch": 0}, "micro_batch"),
        ({"recompute": "sometimes"}, "recompute"),
        # issue 7: LoRA, quantized bases, offload, expert parallelism, the stack
        ({"lora_rank": 0}, "lora_rank"),
        ({"lora_rank": 8192}, "lora_rank"),
        ({"lora_rank": 16, "trainable_params": "1B"}, "trainable_params"),
        ({"lora_targets": "attention"}, "lora_targets"),
        ({"lora_targets": "mlp", "lora_rank": 8}, "lora_targets"),
        ({"weights_bits": 3, "lora_rank": 8}, "weights_bits"),
        ({"weights_bits": 4}, "weights_bits"),
        ({"offload": True, "zero": 0}, "offload"),
        ({"ep": 2}, "ep"),
        ({"stack": "deepspeed"}, "stack"),
        ({"lora_rank": 8, "weights_bits": 4, "tp": 2}, "tp"),
    ],
)
def test_bad_memory_input_names_the_field(fields: dict[str, object], name: str) -> None:
    base: dict[str, object] = {"params": "7B", "gpu_count": 8}
    base.update(fields)
    with pytest.raises(ValidationError) as info:
        MemorySpec(**base)  # type: ignore[arg-type]
    assert describe_error(info.value).startswith(f"{name}: ")


def test_lora_without_any_shape_names_lora_rank() -> None:
    with pytest.raises(ValidationError) as info:
        MemorySpec(gpu_count=8, lora_rank=16)
    assert describe_error(info.value).startswith("lora_rank: ")


@pytest.mark.parametrize(("fields", "name", "allowed"), [
    ({"ep": 3}, "ep", "a divisor of the experts (8)"),
    ({"ep": 8, "gpu_count": 4}, "ep", "a divisor of the data-parallel degree"),
    ({"tp": 3, "gpu_count": 3}, "tp", "a divisor of the attention heads (32)"),
])
def test_parallel_degrees_must_divide_the_model(fields: dict[str, object], name: str,
                                                allowed: str) -> None:
    base: dict[str, object] = {"preset": "mixtral-8x7b", "gpu_count": 8}
    base.update(fields)
    with pytest.raises(ValidationError) as info:
        MemorySpec(**base)  # type: ignore[arg-type]
    message = describe_error(info.value)
    assert message.startswith(f"{name}: ") and allowed in message


def test_tp_must_divide_heads() -> None:
    with pytest.raises(ValidationError) as info:
        MemorySpec(params="7B", gpu_count=12, tp=12, layers=32, hidden=4096, heads=32)
    assert describe_error(info.value).startswith("tp: ")


# --- fine-tuning as people describe it -------------------------------------------------------

LLAMA3_8B = shape_from_architecture(get_preset("llama-3-8b"))


def test_lora_parameters_from_the_architecture() -> None:
    # Llama-3-8B, r = 16 on q, k, v, o: per layer 16·((4096+4096) + 2·(4096+1024) + (4096+4096))
    # = 425,984, × 32 layers = 13,631,488 (PEFT prints "trainable params: 13,631,488" for this
    # LoRA config on meta-llama/Meta-Llama-3-8B).
    assert lora_params(LLAMA3_8B, 16, "attention") == 13_631_488
    # all-linear adds gate, up (4096 → 14336) and down (14336 → 4096): 3·16·18432 per layer;
    # 41,943,040 in all (PEFT's count for target_modules="all-linear", r = 16).
    assert lora_params(LLAMA3_8B, 16, "all-linear") == 41_943_040


def test_lora_counts_every_expert_of_a_moe() -> None:
    mixtral = shape_from_architecture(get_preset("mixtral-8x7b"))
    attention = lora_params(mixtral, 8, "attention")
    per_expert_mlp = 8 * 3 * (4096 + 14336)
    assert lora_params(mixtral, 8, "all-linear") == attention + 32 * 8 * per_expert_mlp


def test_lora_memory_has_adapters_as_the_only_trainable_parameters() -> None:
    est = estimate_memory(MemorySpec(preset="llama-3-8b", gpu_count=1, gpu="a100-80gb",
                                     lora_rank=16, zero=0, tp=1, pp=1))
    adapters = 41_943_040
    assert est.lora_params == est.trainable_params == adapters
    assert est.lora_targets == "all-linear"
    assert est.per_gpu_bytes.gradients == pytest.approx(2 * adapters)
    assert est.per_gpu_bytes.optimizer == pytest.approx(12 * adapters)
    assert est.per_gpu_bytes.weights == pytest.approx(2 * (est.params + adapters))


def test_qlora_stores_the_frozen_linear_weights_in_4_bits() -> None:
    four = estimate_memory(MemorySpec(preset="llama-3-8b", gpu_count=1, gpu="a100-80gb",
                                      lora_rank=16, weights_bits=4, zero=0))
    linear = decoder_linear_weights(LLAMA3_8B)
    # Llama-3-8B's decoder linear weights: 32 × (2·4096² + 2·4096·1024 + 3·4096·14336).
    assert linear == 32 * (2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 14336)
    rest = four.params - linear  # embedding, LM head, norms stay 16-bit
    nf4 = 4 + 8 / 64 + 32 / (64 * 256)  # Dettmers et al. 2023, Sec. 3
    # Beside them, the largest matrix (the MLP's 4096 × 14336) dequantized to 16 bits for its
    # matmul (bitsandbytes' MatMul4Bit dequantizes the whole weight, forward and backward).
    dequantized = 2 * 4096 * 14336
    assert four.dequantized_bytes == dequantized
    expected = linear * nf4 / 8 + 2 * rest + 2 * four.lora_params + dequantized
    assert four.per_gpu_bytes.weights == pytest.approx(expected)
    assert four.weights_bits == 4


def test_offload_moves_the_optimizer_state_off_the_device() -> None:
    # ZeRO-Offload (Ren et al. 2021, Sec. 4): gradients and optimizer state live on the CPU,
    # the gradients in fp32 as DeepSpeed keeps them (16 bytes a parameter in all, as its
    # estimate_zero2_model_states_mem_needs counts).
    est = estimate_memory(MemorySpec(params="7B", gpu_count=1, gpu="h100", zero=1,
                                     offload=True))
    assert est.offload and est.per_gpu_bytes.optimizer == 0 == est.per_gpu_bytes.gradients
    assert est.host_bytes == pytest.approx((4 + 12) * 7e9)
    assert est.per_gpu_bytes.weights == pytest.approx(2 * 7e9)


def test_expert_parallelism_shards_the_experts() -> None:
    fixed = {"preset": "mixtral-8x7b", "gpu_count": 8, "zero": 0, "tp": 1, "pp": 1}
    one = estimate_memory(MemorySpec(**fixed, ep=1))  # type: ignore[arg-type]
    eight = estimate_memory(MemorySpec(**fixed, ep=8))  # type: ignore[arg-type]
    experts = get_preset("mixtral-8x7b")
    from compute_budget import count_params
    routed = count_params(experts).routed_experts
    saved = 2 * routed * (1 - 1 / 8)  # 16-bit weights of 7 of the 8 experts
    assert one.per_gpu_bytes.weights - eight.per_gpu_bytes.weights == pytest.approx(saved)
    assert eight.ep == 8


def test_activations_follow_the_mlp_width_and_experts() -> None:
    # A wider MLP keeps more; more experts per token keep more; no family constant is involved.
    narrow = LLAMA3_8B
    wide = narrow.model_copy(update={"intermediate": 2 * narrow.intermediate})
    moe = narrow.model_copy(update={"experts": 8, "experts_per_token": 2,
                                    "expert_intermediate": narrow.intermediate,
                                    "moe_layers": narrow.layers})
    top4 = moe.model_copy(update={"experts_per_token": 4})

    def per_token(shape: ModelShape) -> float:
        return activation_bytes(shape.model_copy(update={"vocab": None}), stack="hf",
                                seq_len=1024, micro_batch=1)[0] / 1024
    assert per_token(narrow) < per_token(wide)
    assert per_token(narrow) < per_token(moe) < per_token(top4)
    # the hf stack keeps more than the fused megatron kernels
    assert activation_bytes(narrow, stack="megatron", seq_len=1024, micro_batch=1)[0] < \
        activation_bytes(narrow, stack="hf", seq_len=1024, micro_batch=1)[0]
