"""Memory per device: the ZeRO paper's Table 1, optimizers, activations, parallelism, fits."""

import pytest
from pydantic import ValidationError

from compute_budget import MemorySpec, estimate_memory
from compute_budget.skill.errors import describe_error
from compute_budget.skill.memory import (
    activation_bytes_per_layer,
    guess_shape,
    model_state_bytes,
    resolve_optimizer,
)

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
    est = estimate_memory(MemorySpec(params=7.5e9, gpu_count=64, zero=2))
    b = est.per_gpu_bytes
    assert (b.weights + b.gradients + b.optimizer) / GB == pytest.approx(16.6, abs=0.05)
    assert b.total == pytest.approx(b.weights + b.gradients + b.optimizer + b.activations)


def test_zero_shards_over_data_parallel_degree_not_all_devices() -> None:
    # 64 devices with TP 8: N_d = 8, so ZeRO-3 divides the 1/8-per-rank states by 8, not 64.
    est = estimate_memory(MemorySpec(params=64e9, gpu_count=64, tp=8, zero=3))
    assert est.data_parallel == 8
    assert est.per_gpu_bytes.weights == pytest.approx(2 * 64e9 / 8 / 8)


@pytest.mark.parametrize(("name", "k"), [("adamw", 12), ("adam8bit", 6), ("sgd", 8),
                                         ("adafactor", 4)])
def test_optimizer_bytes(name: str, k: float) -> None:
    est = estimate_memory(MemorySpec(params=1e9, gpu_count=1, optimizer=name))
    assert est.per_gpu_bytes.optimizer == pytest.approx(k * 1e9)


@pytest.mark.parametrize(("alias", "name"), [("Adam", "adamw"), ("adamw-8bit", "adam8bit"),
                                             ("SGD-momentum", "sgd"), ("AdaFactor", "adafactor")])
def test_optimizer_aliases(alias: str, name: str) -> None:
    assert resolve_optimizer(alias).name == name


def test_frozen_parameters_have_no_gradients_or_optimizer_state() -> None:
    lora = estimate_memory(MemorySpec(params=7e9, trainable_params=40e6, gpu_count=1))
    full = estimate_memory(MemorySpec(params=7e9, gpu_count=1))
    assert lora.per_gpu_bytes.weights == full.per_gpu_bytes.weights
    assert lora.per_gpu_bytes.gradients == pytest.approx(2 * 40e6)
    assert lora.per_gpu_bytes.optimizer == pytest.approx(12 * 40e6)
    assert lora.per_gpu_bytes.activations == full.per_gpu_bytes.activations


# Korthikanti et al. 2022, eq. 1–2 and Table 2, bytes per layer for GPT-3 175B's shape
# (s = 2048, h = 12288, a = 96, b = 1, t = 8).
S, H, A, T = 2048, 12288, 96, 8


def test_activations_no_parallelism() -> None:
    got = activation_bytes_per_layer(S, 1, H, A, flash_attention=False)
    assert got == pytest.approx(S * H * (34 + 5 * A * S / H))


def test_activations_tensor_parallel() -> None:
    got = activation_bytes_per_layer(S, 1, H, A, tp=T, flash_attention=False)
    assert got == pytest.approx(S * H * (10 + 24 / T + 5 * A * S / (H * T)))


def test_activations_tensor_and_sequence_parallel() -> None:
    got = activation_bytes_per_layer(S, 1, H, A, tp=T, sp=True, flash_attention=False)
    assert got == pytest.approx(S * H * (34 / T + 5 * A * S / (H * T)))


def test_activations_selective_recompute_and_flash_drop_the_scores() -> None:
    selective = activation_bytes_per_layer(S, 1, H, A, tp=T, sp=True, recompute="selective",
                                           flash_attention=False)
    flash = activation_bytes_per_layer(S, 1, H, A, tp=T, sp=True)
    assert selective == pytest.approx(S * H * 34 / T)
    assert flash == selective


def test_activations_full_recompute_keeps_layer_inputs() -> None:
    assert activation_bytes_per_layer(S, 1, H, A, recompute="full") == 2 * S * H
    assert activation_bytes_per_layer(S, 1, H, A, tp=T, sp=True, recompute="full") == \
        2 * S * H / T


def test_korthikanti_table_gpt3_selective_tp_sp() -> None:
    # Korthikanti et al. 2022 Table 2 with the paper's GPT-3 175B setup (96 layers, TP 8):
    # sequence parallel + selective recompute needs 34·s·b·h·L/t bytes in the layers,
    # 34 × 2048 × 12288 × 96 / 8 ≈ 10.3 GB (their Figure 1 shows ~10 GB for the layers).
    per_layer = activation_bytes_per_layer(S, 1, H, A, tp=T, sp=True, recompute="selective")
    assert per_layer * 96 / 1e9 == pytest.approx(10.27, abs=0.02)


def test_pipeline_first_stage_holds_all_layers_worth() -> None:
    base = estimate_memory(MemorySpec(params=7e9, gpu_count=8, layers=32, hidden=4096, heads=32))
    piped = estimate_memory(MemorySpec(params=7e9, gpu_count=8, pp=4, layers=32, hidden=4096,
                                       heads=32))
    assert piped.activations_in_flight == 4
    assert piped.per_gpu_bytes.activations == pytest.approx(base.per_gpu_bytes.activations)
    assert piped.per_gpu_bytes.weights == pytest.approx(base.per_gpu_bytes.weights / 4)


def test_guessed_shape_is_close_for_known_models() -> None:
    # GPT-3 6.7B: 32 layers, hidden 4096 (Brown et al. 2020, Table 2.1).
    shape = guess_shape(6.7e9)
    assert 30 <= shape.layers <= 34
    assert 3840 <= shape.hidden <= 4352
    assert shape.hidden % shape.heads == 0
    assert "guess" in shape.source


def test_fits_against_the_named_device() -> None:
    small = estimate_memory(MemorySpec(params=1e9, gpu_count=1, gpu="h100"))
    big = estimate_memory(MemorySpec(params=70e9, gpu_count=1, gpu="h100"))
    assert small.fits is True and small.headroom_bytes and small.headroom_bytes > 0
    assert big.fits is False and big.headroom_bytes and big.headroom_bytes < 0
    assert estimate_memory(MemorySpec(params=1e9, gpu_count=1)).fits is None


def test_70b_fits_on_64_h100_with_zero3_and_full_recompute() -> None:
    est = estimate_memory(MemorySpec(params=70e9, gpu_count=64, gpu="h100", zero=3,
                                     recompute="full", layers=80, hidden=8192, heads=64))
    # Model states 16 bytes × 70B / 64 = 17.5 GB, plus recomputed activations.
    states = est.per_gpu_bytes.weights + est.per_gpu_bytes.gradients + est.per_gpu_bytes.optimizer
    assert states == pytest.approx(16 * 70e9 / 64)
    assert est.fits is True


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        ({"tp": 16}, "tp"),
        ({"pp": 16}, "pp"),
        ({"tp": 3}, "gpu_count"),
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
    ],
)
def test_bad_memory_input_names_the_field(fields: dict[str, object], name: str) -> None:
    base: dict[str, object] = {"params": "7B", "gpu_count": 8}
    base.update(fields)
    with pytest.raises(ValidationError) as info:
        MemorySpec(**base)  # type: ignore[arg-type]
    assert describe_error(info.value).startswith(f"{name}: ")


def test_tp_must_divide_heads() -> None:
    with pytest.raises(ValidationError) as info:
        MemorySpec(params="7B", gpu_count=12, tp=12, layers=32, hidden=4096, heads=32)
    assert describe_error(info.value).startswith("tp: ")
