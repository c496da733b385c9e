"""Issue 20: what ``run_probe`` returns and refuses. The torch-dependent tests are slow (the
quick suite needs no torch); the last ones need neither torch nor transformers."""

from __future__ import annotations

from typing import Any

import pytest

from compute_budget.probe import ProbeError
from compute_budget.skill.hardware.measured import ProbeResult
from tests.probe.helpers import FAMILIES

TINY = {**FAMILIES["dense_gqa"], "hidden_size": 256, "intermediate_size": 768,
        "num_attention_heads": 4, "num_hidden_layers": 4}
"""A Llama four layers deep at width 256: a probe of it takes about a second."""
SEQ_LEN = 128
RANK = 8
LAYER_LINEARS = {  # (in, out) of each projection of one TINY decoder layer
    "q_proj": (256, 256), "k_proj": (256, 128), "v_proj": (256, 128), "o_proj": (256, 256),
    "gate_proj": (256, 768), "up_proj": (256, 768), "down_proj": (768, 256)}


def _probe(**options: Any) -> ProbeResult:
    from compute_budget.probe import run_probe

    return run_probe(TINY, name="tiny", seq_len=SEQ_LEN, micro_batch=2, steps=1, **options)


@pytest.fixture(scope="module")
def baseline() -> ProbeResult:
    from tests.probe.conftest import torch_or_skip

    torch_or_skip()
    return _probe()


@pytest.mark.slow
def test_a_probe_result_is_the_contract_and_survives_its_json(torch: Any,
                                                              baseline: ProbeResult) -> None:
    again = ProbeResult.model_validate(baseline.model_dump(mode="json"))
    assert again == baseline
    assert baseline.device.kind == "cpu" and baseline.device.accelerator is None
    assert baseline.fits is None and baseline.mfu is None and baseline.peak_tflops is None
    assert baseline.model.layers == 4 and baseline.setup.layers_measured == (1, 2)
    assert baseline.setup.attn_implementation == "sdpa"
    assert baseline.model.params == baseline.model.trainable_params
    assert baseline.tokens_per_second == pytest.approx(2 * SEQ_LEN / baseline.step_time_s)
    assert baseline.achieved_tflops == pytest.approx(
        baseline.flops_per_step / baseline.step_time_s / 1e12)
    # The estimate's count at a context within the calibration context: 6·N per token.
    assert baseline.flops_per_step == pytest.approx(6 * baseline.model.params * 2 * SEQ_LEN,
                                                    rel=1e-9)
    memory = baseline.memory
    # fp32 weights, gradients and two AdamW moments; besides, the rotary buffers and AdamW's
    # step counters (a few hundred bytes).
    assert memory.model_states_bytes == pytest.approx(16 * baseline.model.params, abs=1000)
    assert 0 < memory.activation_bytes < memory.peak_bytes
    assert memory.method == "tensor_tracking"


@pytest.mark.slow
def test_lora_trains_only_the_adapters(torch: Any, baseline: ProbeResult) -> None:
    lora = _probe(lora_rank=RANK)
    adapters = TINY["num_hidden_layers"] * sum(RANK * (i + o) for i, o in LAYER_LINEARS.values())
    assert lora.model.trainable_params == adapters
    assert lora.model.params == baseline.model.params + adapters
    assert lora.model.trainable_params < 0.05 * lora.model.params
    assert lora.setup.lora_rank == RANK
    # Frozen weights keep no gradient and no optimizer moments.
    assert lora.memory.model_states_bytes < 0.3 * baseline.memory.model_states_bytes
    # FLOPs as the estimate counts a LoRA run: 6·N − 2·N (no weight gradients) + 6·adapters.
    n = baseline.model.params
    expected = (4 * n + 6 * adapters * n / n) * 2 * SEQ_LEN
    assert lora.flops_per_step == pytest.approx(expected, rel=1e-9)


@pytest.mark.slow
def test_lora_adapts_gpt2s_conv1d_projections_too(torch: Any) -> None:
    from compute_budget.probe import run_probe

    gpt2 = {"model_type": "gpt2", "n_embd": 128, "n_layer": 2, "n_head": 2, "vocab_size": 512,
            "n_positions": 256, "bos_token_id": 0, "eos_token_id": 0}
    result = run_probe(gpt2, name=None, seq_len=32, micro_batch=1, steps=1, lora_rank=RANK)
    per_layer = (128 + 3 * 128) + (128 + 128) + (128 + 4 * 128) + (4 * 128 + 128)
    assert result.model.trainable_params == 2 * RANK * per_layer


@pytest.mark.slow
def test_full_recomputation_keeps_fewer_activations(torch: Any, baseline: ProbeResult) -> None:
    recomputed = _probe(recompute="full")
    assert recomputed.setup.recompute == "full"
    assert recomputed.memory.activation_bytes < 0.5 * baseline.memory.activation_bytes
    assert (recomputed.memory.activation_bytes_per_token_per_layer
            < 0.2 * baseline.memory.activation_bytes_per_token_per_layer)
    assert recomputed.memory.model_states_bytes == baseline.memory.model_states_bytes


@pytest.mark.slow
@pytest.mark.parametrize("config", [{"model_type": "no_such_model", "hidden_size": 64},
                                    {"hidden_size": 64}])
def test_a_model_type_transformers_cannot_build_is_refused(torch: Any,
                                                           config: dict[str, Any]) -> None:
    from compute_budget.probe import run_probe

    with pytest.raises(ProbeError, match="model_type") as error:
        run_probe(config, name=None, seq_len=16, micro_batch=1)
    assert "Traceback" not in str(error.value) and "\n" not in str(error.value)


@pytest.mark.slow
def test_layers_that_do_not_fit_are_refused_before_and_during_the_run(
        torch: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from compute_budget.probe import device, measure

    monkeypatch.setattr(device, "available_bytes", lambda _device: 10**6)
    with pytest.raises(ProbeError, match=r"^one decoder layer does not fit on cpu"):
        _probe()
    monkeypatch.undo()

    def out_of_memory(*_args: Any) -> Any:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")

    monkeypatch.setattr(measure, "measure_together", out_of_memory)
    monkeypatch.setattr(measure, "measure_depth", out_of_memory)
    with pytest.raises(ProbeError, match=r"^one decoder layer does not fit on cpu at full "
                                         r"width \(seq_len 128, micro_batch 2\)"):
        _probe()


@pytest.mark.slow
def test_bad_arguments_are_refused_by_name(torch: Any) -> None:
    with pytest.raises(ProbeError, match=r"^layers: \(2, 1\) is not allowed"):
        _probe(layers=(2, 1))
    with pytest.raises(ProbeError, match=r"^device 'tpu:7'"):
        _probe(device="tpu:7")


def test_without_torch_the_error_says_how_to_install_it() -> None:
    from compute_budget.probe.backend import load

    with pytest.raises(ProbeError, match=r"pip install 'compute-budget\[probe\]'"):
        load("torch_that_is_not_there")


@pytest.mark.parametrize(("name", "memory_gib", "key"), [
    ("NVIDIA H100 80GB HBM3", 79.1, "h100-sxm"),
    ("NVIDIA H100 PCIe", 79.6, "h100-pcie"),
    ("NVIDIA H100 NVL", 93.1, "h100-nvl"),
    ("NVIDIA A100-SXM4-40GB", 39.4, "a100-40gb"),
    ("NVIDIA A100-SXM4-80GB", 79.2, "a100-80gb"),
    ("NVIDIA A100 80GB PCIe", 79.2, "a100-pcie"),
    ("NVIDIA A10", 22.0, "a10"),
    ("NVIDIA A10G", 22.0, "a10g"),
    ("NVIDIA GeForce RTX 4090", 23.6, "rtx-4090"),
    ("NVIDIA GeForce RTX 3090", 23.7, "rtx-3090"),
    ("NVIDIA RTX A5000", 23.7, "rtx-a5000"),
    ("NVIDIA RTX A6000", 47.5, "rtx-a6000"),
    ("NVIDIA RTX 6000 Ada Generation", 47.5, "rtx-6000-ada"),
    ("NVIDIA L40S", 44.4, "l40s"),
    ("Tesla V100-SXM2-32GB", 31.7, "v100"),
    ("AMD Instinct MI300X", 191.5, "mi300x"),
    ("NVIDIA GeForce GTX 1080", 8.0, None),
])
def test_a_cuda_device_name_finds_its_catalog_entry(name: str, memory_gib: float,
                                                    key: str | None) -> None:
    from compute_budget.probe.device import match_accelerator

    found = match_accelerator(name, int(memory_gib * 2**30))
    assert (None if found is None else found.key) == key
