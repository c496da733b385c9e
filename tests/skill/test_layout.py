"""The layout search: the cheapest layout that fits, pins kept, every claim true, the fewest
devices, remedies that work, and the run estimate's time at the chosen recomputation."""

import itertools
from typing import Any

import pytest

from compute_budget import MemorySpec, RunSpec, decision_summary, estimate_memory, estimate_run
from compute_budget.skill.memory.layout import search_layout
from compute_budget.skill.memory.states import Layout, Setup, device_bytes, host_bytes
from compute_budget.skill.vocabulary import LAYOUT_KNOBS


def _memory(**fields: Any) -> Any:
    return estimate_memory(MemorySpec(**fields))


# --- the cases of issue 7 ---------------------------------------------------------------------

def test_70b_full_fine_tune_on_16_a100_fits_and_is_not_no_go() -> None:
    spec = RunSpec(preset="llama-2-70b", gpu="a100-80gb", gpu_count=16, seq_len=4096,
                   tokens="1B")
    est = estimate_run(spec)
    assert est.feasibility == "ok" and est.memory is not None and est.memory.fits
    assert decision_summary(est, 5, 1, 0).verdict == "go"


def test_70b_lora_r16_on_8_a100_fits_without_offload_and_names_its_layout() -> None:
    m = _memory(preset="llama-2-70b", gpu="a100-80gb", gpu_count=8, lora_rank=16)
    assert m.fits and not m.offload
    assert m.layout.chosen_by == "search"
    assert m.min_gpu_count is not None and m.min_gpu_count <= 8


def test_llama3_8b_at_16k_on_16_h100_fits_with_recomputation_or_tp2_by_stack() -> None:
    # Both TP 2 and full recomputation fit. Megatron: TP 2 costs a few % of speed, full
    # recomputation about a third, so TP 2. Hugging Face tools: gradient checkpointing first.
    megatron = _memory(preset="llama-3-8b", gpu="h100", gpu_count=16, seq_len=16384,
                       stack="megatron")
    assert megatron.fits and (megatron.tp, megatron.recompute) == (2, "none")
    assert megatron.layout.slowdown.total < 1.1
    hf = _memory(preset="llama-3-8b", gpu="h100", gpu_count=16, seq_len=16384, stack="hf")
    assert hf.fits and (hf.tp, hf.recompute) == (1, "full")
    # the default for full training on more than one node is the megatron stack
    assert _memory(preset="llama-3-8b", gpu="h100", gpu_count=16).stack == "megatron"
    assert _memory(preset="llama-3-8b", gpu="h100", gpu_count=8).stack == "hf"
    assert _memory(preset="llama-3-8b", gpu="h100", gpu_count=16, lora_rank=8).stack == "hf"


def test_a_quantized_base_is_not_tensor_parallel() -> None:
    m = _memory(preset="llama-2-70b", gpu="a100-80gb", gpu_count=8, lora_rank=16,
                weights_bits=4)
    assert m.fits and m.tp == 1 and m.layout.tried["tp"] == [1]


def test_pinned_zero_1_and_micro_batch_2_stay_and_the_rest_is_searched() -> None:
    m = _memory(preset="llama-3-8b", gpu="h100", gpu_count=16, seq_len=16384, zero=1,
                micro_batch=2)
    assert m.fits and m.zero == 1 and m.micro_batch == 2
    assert set(m.layout.pinned) == {"zero", "micro_batch"}
    assert "zero" not in m.layout.tried


def test_7t_on_one_rtx_4090_cannot_run_and_says_how_many_devices() -> None:
    est = estimate_run(RunSpec(params="7T", tokens="1T", gpu="rtx-4090", gpu_count=1))
    assert est.feasibility == "does_not_fit"
    assert est.memory is not None and est.memory.layout.binding == "model_states"
    # At 4k tokens a 7T model's activations alone (hidden ≈ 42k, 329 layers) overflow a 24 GB
    # card even at TP 8: no number of RTX 4090s is enough; a larger device, at a count, is.
    assert est.memory.min_gpu_count is None
    (larger,) = [r for r in est.memory.layout.remedies if r.kind == "larger_device"]
    assert larger.gpu_count is not None and larger.gpu_count > 1
    there = _memory(params="7T", gpu=larger.gpu, gpu_count=larger.gpu_count)
    assert there.fits


def test_mixtral_activations_need_more_than_zero_3_on_8_h200() -> None:
    # The old GPT constants said ZeRO 3 alone fits with 36 GiB to spare; with MoE activations
    # (top-2 routed tokens through 14336-wide experts) ZeRO 3 at TP 1 does not.
    pinned = _memory(preset="mixtral-8x7b", gpu="h200", gpu_count=8, zero=3, tp=1, pp=1,
                     recompute="none", offload=False)
    assert pinned.fits is False
    searched = _memory(preset="mixtral-8x7b", gpu="h200", gpu_count=8, zero=3)
    assert searched.fits and (searched.tp > 1 or searched.recompute != "none")


# --- the search's promises ----------------------------------------------------------------------

CASES = [
    dict(preset="llama-2-70b", gpu="a100-80gb", gpu_count=16),
    dict(preset="llama-3-8b", gpu="h100", gpu_count=16, seq_len=16384),
    dict(preset="llama-3-8b", gpu="h100", gpu_count=8, seq_len=32768, zero=1),
    dict(preset="mixtral-8x7b", gpu="h200", gpu_count=8),
    dict(preset="llama-2-70b", gpu="a100-80gb", gpu_count=8, lora_rank=16, weights_bits=4),
    dict(params="70B", gpu="h100", gpu_count=2),
    dict(params="13B", gpu="rtx-4090", gpu_count=4, recompute="none"),
    dict(preset="deepseek-v3", gpu="h100", gpu_count=64),
]


def _all_layouts(m: Any) -> list[Layout]:
    """Every combination of the values the reply says were tried, with the pins."""
    tried = m.layout.tried
    values = {k: tried.get(k, [getattr(m, k)]) for k in ("zero", "recompute", "tp", "pp",
                                                          "offload")}
    out = []
    for zero, rc, tp, pp, off in itertools.product(*values.values()):
        if m.gpu_count % (tp * pp) or (off and zero == 0):
            continue
        sp = m.sp if "sp" in m.layout.pinned else tp > 1
        out.append(Layout(zero=zero, tp=tp, pp=pp, sp=sp, ep=m.ep, recompute=rc,
                          micro_batch=m.micro_batch, offload=off))
    return out


@pytest.mark.parametrize("fields", CASES)
def test_every_claim_about_what_was_tried_is_true(fields: dict[str, Any]) -> None:
    spec = MemorySpec(**fields)
    m = estimate_memory(spec)
    setup = Setup(gpu_count=spec.gpu_count, seq_len=spec.resolved_seq_len, optimizer_bytes=12,
                  stack=spec.resolved_stack, capacity_bytes=m.gpu_memory_bytes)
    usable = 0.9 * m.gpu_memory_bytes
    totals = {lay: device_bytes(spec.model, lay, setup).total for lay in _all_layouts(m)}
    chosen = Layout(zero=m.zero, tp=m.tp, pp=m.pp, sp=m.sp, ep=m.ep, recompute=m.recompute,
                    micro_batch=m.micro_batch, offload=m.offload)
    assert totals[chosen] == pytest.approx(m.per_gpu_bytes.total)
    if m.fits:
        assert m.per_gpu_bytes.total <= usable
        # with offload, only because nothing without it fits
        if m.offload:
            assert all(t > usable for lay, t in totals.items() if not lay.offload)
    elif m.layout.binding == "host_memory":
        # the layouts that fit the device all offload more than the host's usable CPU RAM
        assert m.host_ram is not None and m.layout.host_needed_bytes is not None
        host_usable = m.host_ram.usable_fraction * m.host_ram.bytes_per_device
        fitting = [lay for lay, t in totals.items() if t <= usable]
        assert fitting and all(lay.offload for lay in fitting)
        assert all(host_bytes(spec.model, lay, setup) > host_usable for lay in fitting)
        assert m.layout.host_needed_bytes > host_usable
    else:
        assert all(t > usable for t in totals.values())  # "at any layout tried" is true
        assert m.per_gpu_bytes.total == pytest.approx(min(totals.values()))
    for knob in m.layout.pinned:
        assert getattr(m, knob) == fields[knob]


@pytest.mark.parametrize("fields", CASES)
def test_min_gpu_count_fits_and_the_next_smaller_count_does_not(fields: dict[str, Any]) -> None:
    m = _memory(**fields)
    n = m.min_gpu_count
    assert n is not None
    at_min = _memory(**{**fields, "gpu_count": n})
    assert at_min.fits
    smaller = n - 1 if n <= 64 else n - 8  # every count up to 64 is tried, then whole nodes
    if smaller >= 1 and all(smaller % fields.get(k, 1) == 0 for k in ("tp", "pp")):
        assert _memory(**{**fields, "gpu_count": smaller}).fits is False


def test_remedies_each_make_the_run_fit() -> None:
    fields: dict[str, Any] = {"preset": "llama-2-70b", "gpu": "a100-80gb", "gpu_count": 8,
                              "zero": 1, "offload": False}
    m = _memory(**fields)
    assert m.fits is False
    kinds = {r.kind: r for r in m.layout.remedies}
    assert {"more_devices", "larger_device", "lora", "offload", "release"} <= set(kinds)
    assert _memory(**{**fields, "gpu_count": kinds["more_devices"].gpu_count}).fits
    assert _memory(**{**fields, "lora_rank": kinds["lora"].lora_rank}).fits
    assert _memory(**{**fields, "offload": True}).fits
    released = {k: v for k, v in fields.items() if k not in kinds["release"].knobs}
    assert _memory(**released).fits
    if "larger_device" in kinds:
        assert _memory(**{**fields, "gpu": kinds["larger_device"].gpu}).fits


def test_a_larger_device_is_named_when_one_fits() -> None:
    m = _memory(params="13B", gpu="a100-40gb", gpu_count=1, offload=False)
    larger = [r for r in m.layout.remedies if r.kind == "larger_device"]
    assert larger and larger[0].memory_gib is not None and larger[0].memory_gib > 40
    assert not larger[0].needs_offload  # offload was pinned off
    assert _memory(params="13B", gpu=larger[0].gpu, gpu_count=larger[0].gpu_count,
                   offload=False).fits


def test_a_full_fine_tune_that_fits_nowhere_is_offered_qlora_when_lora_needs_offload() -> None:
    # Llama 3 8B fully trained on one RTX 4090 (24 GB): 16-bit LoRA fits only by streaming its
    # 16 GB of weights from CPU memory every micro-batch; QLoRA fits without offload.
    fields: dict[str, Any] = {"preset": "llama-3-8b", "gpu": "rtx-4090", "gpu_count": 1,
                              "seq_len": 4096}
    m = _memory(**fields)
    assert m.fits is False
    (lora,) = [r for r in m.layout.remedies if r.kind == "lora"]
    assert lora.weights_bits == 4 and not lora.needs_offload
    assert _memory(**fields, lora_rank=16, weights_bits=4, offload=False).fits
    plain = _memory(**fields, lora_rank=16)
    assert plain.fits and plain.offload_weights
    # Where 16-bit LoRA fits without offload it stays the remedy (Llama 2 70B on 8 × A100 80GB).
    big = _memory(preset="llama-2-70b", gpu="a100-80gb", gpu_count=8, zero=1, offload=False)
    (lora,) = [r for r in big.layout.remedies if r.kind == "lora"]
    assert lora.weights_bits == 16


def test_a_larger_device_keeps_the_bf16_of_the_current_one() -> None:
    # A V100 (32 GB, no BF16) is not offered to a run on an RTX 4090.
    m = _memory(preset="llama-3-8b", gpu="rtx-4090", gpu_count=1, seq_len=4096)
    (larger,) = [r for r in m.layout.remedies if r.kind == "larger_device"]
    assert larger.gpu != "v100" and larger.memory_gib is not None and larger.memory_gib > 24


def test_a_knob_left_unset_is_none_in_every_schema() -> None:
    for model in (RunSpec, MemorySpec):
        for knob in LAYOUT_KNOBS:
            field = model.model_fields[knob]
            assert field.default is None, (model.__name__, knob)


def test_layout_without_device_memory_is_the_default_and_fits_is_unknown() -> None:
    m = _memory(params="7B", gpu_count=8)
    assert m.fits is None and m.layout.chosen_by == "default"
    assert (m.zero, m.tp, m.pp, m.recompute, m.offload) == (0, 1, 1, "none", False)
    assert m.min_gpu_count is None


def test_fully_pinned_layout_is_given() -> None:
    m = _memory(params="7B", gpu="h100", gpu_count=8, zero=2, tp=2, pp=1, recompute="full",
                offload=False)
    assert m.layout.chosen_by == "given" and m.layout.open_knobs == ()
    assert (m.zero, m.tp, m.recompute) == (2, 2, "full")


# --- recomputation costs time ------------------------------------------------------------------

def test_full_recomputation_takes_four_thirds_longer_at_the_prior() -> None:
    base = {"preset": "llama-3-8b", "tokens": "100B", "gpu": "h100", "gpu_count": 64}
    plain = estimate_run(RunSpec(**base, recompute="none"))
    full = estimate_run(RunSpec(**base, recompute="full"))
    # 4/3 of the layers' FLOPs; the LM head (a large vocabulary here) is not recomputed.
    assert 1.28 < full.recompute_slowdown < 4 / 3
    assert full.wall_hours / plain.wall_hours == pytest.approx(full.recompute_slowdown)
    assert full.mfu == pytest.approx(full.mfu_used.prior.central / full.recompute_slowdown)
    # a given MFU already counts whatever the run recomputes
    given = estimate_run(RunSpec(**base, recompute="full", mfu=0.3))
    assert given.mfu == 0.3


def test_the_estimate_uses_the_recomputation_the_search_chose() -> None:
    est = estimate_run(RunSpec(preset="llama-2-70b", gpu="a100-80gb", gpu_count=16,
                               tokens="1B"))
    assert est.memory is not None and est.recompute == est.memory.recompute
    if est.recompute == "full":
        assert est.recompute_slowdown > 1.3


def test_a_run_longer_than_a_year_is_infeasible() -> None:
    est = estimate_run(RunSpec(params="70B", tokens="15T", gpu="h100", gpu_count=8))
    assert est.feasibility == "too_long" and est.wall_days > est.max_plan_days


# --- resolved once ---------------------------------------------------------------------------

def test_a_config_file_is_read_once_per_request(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Any) -> None:
    import json

    from compute_budget import get_preset, suggest_alternatives
    from compute_budget.skill.model import config_file

    path = tmp_path / "config.json"
    path.write_text(json.dumps({
        "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
        "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
        "vocab_size": 128256}))
    assert get_preset("llama-3-8b").layers == 32
    reads = []
    original = config_file.load_config

    def counting(p: Any) -> Any:
        reads.append(p)
        return original(p)

    monkeypatch.setattr("compute_budget.skill.model.source.load_config", counting)
    spec = RunSpec(config=str(path), tokens="10B", gpu="h100", gpu_count=8)
    estimate_run(spec)
    suggest_alternatives(spec)
    assert len(reads) == 1


def test_the_search_is_pure_and_repeatable() -> None:
    spec = MemorySpec(preset="llama-3-8b", gpu="h100", gpu_count=16, seq_len=16384)
    setup = Setup(gpu_count=16, seq_len=16384, optimizer_bytes=12, stack=spec.resolved_stack,
                  capacity_bytes=spec.accelerator.memory_bytes)  # type: ignore[union-attr]
    first = search_layout(spec.model, setup, spec)
    assert search_layout(spec.model, setup, spec) == first


def test_the_largest_micro_batch_that_fits_is_reported_and_true() -> None:
    m = _memory(preset="llama-3-8b", gpu="h100", gpu_count=8, seq_len=2048, zero=3)
    k = m.layout.max_micro_batch
    assert k is not None and k > 1
    fixed = {"preset": "llama-3-8b", "gpu": "h100", "gpu_count": 8, "seq_len": 2048,
             "zero": m.zero, "tp": m.tp, "pp": m.pp, "recompute": m.recompute,
             "offload": m.offload}
    assert _memory(**fixed, micro_batch=k).fits
    assert _memory(**fixed, micro_batch=k + 1).fits is False


# Mixtures of experts on megatron, whose search tries expert parallelism
EP_CASES = [
    dict(preset="qwen3-235b-a22b", gpu="h100", gpu_count=256),
    dict(preset="mixtral-8x7b", gpu="h100", gpu_count=64),
    dict(preset="qwen3-30b-a3b", gpu="a100", gpu_count=32, stack="megatron"),
    # EP 2 below the largest, 4, at TP 4, with the optimizer offloaded
    dict(preset="mixtral-8x7b", gpu="a100-40gb", gpu_count=16, stack="megatron", seq_len=8192),
    dict(preset="qwen3-30b-a3b", gpu="h100", gpu_count=16, stack="megatron", seq_len=16384),
]


@pytest.mark.parametrize("fields", CASES + EP_CASES)
def test_skipping_groups_whose_most_frugal_layout_overflows_changes_no_choice(
        fields: dict[str, Any]) -> None:
    # The search sizes only layouts whose group (tp, pp, ZeRO class) has a most frugal member
    # that fits, each at its largest expert-parallel degree, looking for a smaller degree at the
    # same cost only at the one it chose; walking every layout at every degree in the same
    # order (smaller degrees first among equals) must choose the same one.
    from compute_budget.skill.memory.costs import Costs
    from compute_budget.skill.memory.layouts import all_layouts, pins_of

    spec = MemorySpec(**fields)
    m = estimate_memory(spec)
    setup = Setup(gpu_count=spec.gpu_count, seq_len=spec.resolved_seq_len, optimizer_bytes=12,
                  stack=spec.resolved_stack, capacity_bytes=m.gpu_memory_bytes)
    model = spec.model
    ordered = sorted(all_layouts(pins_of(spec), model, spec.gpu_count),
                     key=Costs(model, setup.seq_len, setup.stack, setup.gpu_count,
                               setup.link).key)
    usable = setup.usable_bytes
    assert usable is not None
    walked = next((lay for lay in ordered if device_bytes(model, lay, setup).total <= usable),
                  None)
    chosen, _, choice = search_layout(model, setup, spec)
    assert choice.fits is (walked is not None)
    if walked is not None:
        assert chosen == walked
