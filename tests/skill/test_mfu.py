"""The MFU priors: calibrated on published runs per generation, MoE lower, FP8 rescaled,
a pooled fallback that says so, and a basis and source shown with every prior."""

import math
import statistics
from importlib import resources

import pytest

from compute_budget import MfuPrior, RunSpec, estimate_run, get_accelerator, mfu_prior
from compute_budget.skill.hardware.mfu import FAMILY_PRIORS, FP8_SPEEDUP, prior_from_table
from compute_budget.skill.hardware.mfu_table import POOLED, load_mfu_priors

CALIBRATED_GPUS = ["a100", "a100-40gb", "a800", "h100", "h800", "h200"]
FALLBACK_GPUS = ["b200", "mi300x", "tpu-v5p", "gaudi3", "v100", "tpu-v3"]


def test_priors_are_packaged_data_not_the_shared_csv() -> None:
    data = resources.files("compute_budget.skill").joinpath("data/mfu_priors.json")
    assert data.is_file()
    table = load_mfu_priors()
    assert table.as_of and table.as_of in table.calibration_set
    assert table.rule


def test_public_fields_are_kept() -> None:
    prior = mfu_prior("dense", get_accelerator("h100"), "bf16")
    for name in ("family", "central", "low", "high", "basis", "source"):
        assert name in MfuPrior.model_fields
        assert getattr(prior, name) not in (None, "")


@pytest.mark.parametrize("gpu", CALIBRATED_GPUS + FALLBACK_GPUS)
@pytest.mark.parametrize("family", ["dense", "moe", "encoder", "cnn", "snn"])
def test_every_prior_is_a_band_with_basis_and_source(gpu: str, family: str) -> None:
    acc = get_accelerator(gpu)
    prior = mfu_prior(family, acc, acc.default_precision)  # type: ignore[arg-type]
    assert 0 < prior.low < prior.central < prior.high < 1
    if prior.scope == "flat":
        assert prior.basis is None and prior.family_label
    else:  # the calibration table's one sentence
        assert prior.basis is not None and prior.basis.endswith(".")
        assert not prior.basis.rstrip(".").count(". ")
    assert prior.source and not prior.source.endswith(".")
    if family in ("dense", "moe", "encoder"):
        assert load_mfu_priors().as_of in prior.source
        assert prior.as_of == load_mfu_priors().as_of  # the date every reply shows
    else:
        assert prior.as_of is None


def test_the_short_reply_dates_its_peak_and_its_mfu_prior() -> None:
    # every default shows its source and date: the short estimate named "NVIDIA H100 page" and
    # "a prior from 26 published runs on Hopper" with neither date
    from compute_budget.prompts import render_estimate
    from compute_budget.tools.relay import relay

    est = estimate_run(RunSpec(params="7B", tokens="100B", gpu="h100", gpu_count=8))
    text = render_estimate(est)
    assert f"(NVIDIA H100 page, {get_accelerator('h100').spec_as_of})." in text
    assert f"runs on Hopper, calibrated {load_mfu_priors().as_of}, ×" in text
    told = relay("estimate_run_cost", est)
    assert told is not None and told["mfu_source"].endswith(f", as of {load_mfu_priors().as_of}")


def test_hopper_dense_prior_is_the_fitted_level_of_its_published_runs() -> None:
    table = load_mfu_priors()
    hopper = [r for r in table.runs
              if r.used and r.family == "dense" and r.generation == "hopper"]
    assert len(hopper) >= table.min_runs
    prior = mfu_prior("dense", get_accelerator("h100"), "bf16")
    assert prior.central == table.entry("dense", "hopper").central
    assert min(r.end_to_end_mfu for r in hopper) < prior.central < max(
        r.end_to_end_mfu for r in hopper)
    assert prior.scope == "generation" and prior.generation == "hopper"
    assert prior.n_runs == len(hopper) and prior.params is None and prior.size_factor == 1
    assert "Hopper" in prior.basis and f"{prior.n_runs} published dense runs" in prior.basis


def test_bigger_models_get_a_higher_prior_by_the_fitted_slope() -> None:
    # Llama 3.1 405B ran at 0.345 end to end on H100 (30.84M GPU-hours, 15.6T tokens): the size
    # term moves the Hopper prior towards it, and its band now contains it.
    table = load_mfu_priors()
    h100 = get_accelerator("h100")
    small = mfu_prior("dense", h100, "bf16", params=3e9)
    big = mfu_prior("dense", h100, "bf16", params=405e9)
    assert 0 < table.size_slope < 0.2
    assert big.central == pytest.approx(
        table.entry("dense", "hopper").central * 10 ** (table.size_slope * math.log10(40.5)),
        abs=1e-3)
    assert small.central < big.central and big.low < 0.345 < big.high
    assert table.band_high_factor is not None
    assert big.high / big.low == pytest.approx(table.band_factor * table.band_high_factor,
                                               rel=0.01)


def test_size_term_is_clamped_to_the_calibration_range() -> None:
    table = load_mfu_priors()
    h100 = get_accelerator("h100")
    huge = mfu_prior("dense", h100, "bf16", params=2e12)
    tiny = mfu_prior("dense", h100, "bf16", params=1e7)
    assert huge.params_clamped and huge.params == table.params_range[1]
    assert tiny.params_clamped and tiny.params == table.params_range[0]
    assert huge.central == mfu_prior("dense", h100, "bf16", params=table.params_range[1]).central


def test_every_calibration_run_records_its_fit() -> None:
    table = load_mfu_priors()
    for run in table.runs:
        assert run.params > 0
        assert (run.fitted_mfu is not None) == run.used


def test_hopper_runs_reach_less_mfu_end_to_end_than_ampere_runs() -> None:
    ampere = mfu_prior("dense", get_accelerator("a100"), "bf16")
    hopper = mfu_prior("dense", get_accelerator("h100"), "bf16")
    assert hopper.central < ampere.central


@pytest.mark.parametrize("gpu", CALIBRATED_GPUS + FALLBACK_GPUS)
def test_bands_are_their_entries_and_about_2_5x_wide_on_a_calibrated_generation(
        gpu: str) -> None:
    # Issue 17: bands cover 85% of held-out runs under grouped CV, target median width ≤ 2.5x.
    # On the 114-row calibration set (2026-12-06) the equal-tailed band grouped CV chooses is
    # ÷ 2.02 to × 1.51, 3.05x, on Ampere, Hopper and CDNA 2 (÷ 2.04 to × 1.43, 2.91x, on the
    # 107-row set, before the SmolLM, Phi-3-small, Trillion-7B and Mamba-7B runs; ÷ 2.13 to
    # × 1.47 on the 105-row set, before Bamba-9B; ÷ 1.95 to × 1.37, 2.67x, on the 101-row set,
    # before the slow Lucie-7B, mGPT and StableLM 2 runs; ÷ 1.89 to × 1.40 on the
    # 97-row set; the symmetric ×/÷ 1.62 it replaced there was 2.62x and left out only slow
    # runs); the band is never narrowed to meet the target:
    # benchmarks/accuracy.py reports what the held-out runs give. A generation without its own
    # level gets the wider pooled band.
    table = load_mfu_priors()
    acc = get_accelerator(gpu)
    prior = mfu_prior("dense", acc, "bf16" if acc.peak_tflops.bf16 else "fp16")
    pooled = table.entry("dense", POOLED)
    assert pooled.band_factor is not None and pooled.band_factor >= table.band_factor
    assert pooled.band_high_factor is not None and table.band_high_factor is not None
    assert pooled.band_high_factor >= table.band_high_factor
    assert prior.band_factor is not None and prior.band_high_factor is not None
    if prior.scope == "generation":
        entry = table.entry("dense", acc.generation)
        assert (prior.band_factor, prior.band_high_factor) == (entry.band_factor,
                                                               entry.band_high_factor)
        assert prior.high / prior.low <= 3.09  # the ends are rounded to 3 decimals
    else:
        assert prior.band_factor >= pooled.band_factor
        assert prior.band_high_factor >= pooled.band_high_factor
    # The slow side is the longer: runs lose time without limit but cannot beat their kernels.
    assert prior.band_factor > prior.band_high_factor
    assert prior.high / prior.low == pytest.approx(prior.band_factor * prior.band_high_factor,
                                                   rel=0.01)


@pytest.mark.parametrize("gpu", CALIBRATED_GPUS + FALLBACK_GPUS)
def test_moe_prior_is_no_higher_than_dense_and_no_narrower(gpu: str) -> None:
    acc = get_accelerator(gpu)
    dense = mfu_prior("dense", acc, acc.default_precision)
    moe = mfu_prior("moe", acc, acc.default_precision)
    assert moe.central <= dense.central
    assert moe.low <= dense.low
    assert moe.band_factor is not None and dense.band_factor is not None
    assert moe.band_factor >= dense.band_factor  # the ends are rounded to 3 decimals
    assert moe.band_high_factor is not None and dense.band_high_factor is not None
    assert moe.band_high_factor >= dense.band_high_factor
    assert moe.basis is not None and "MoE" in moe.basis


def test_moe_ratio_is_kept_only_when_grouped_cv_supports_it() -> None:
    table = load_mfu_priors()
    moe_runs = [r for r in table.runs if r.used and r.family == "moe"]
    assert moe_runs and not any(r.fp8 for r in moe_runs)
    basis = mfu_prior("moe", get_accelerator("h100"), "bf16").basis
    assert basis is not None
    if "moe_ratio" in table.form:
        assert 0 < table.moe_ratio < 1 and f"× {table.moe_ratio:.2f}" in basis
    else:  # the MoE runs did not lower the held-out error: dense level, band wide enough
        assert table.moe_ratio == 1 and "no MoE ratio" in basis
        moe_entry = table.entry("moe", "hopper")
        assert moe_entry.band_factor is not None and moe_entry.band_factor >= table.band_factor


def test_an_moe_prior_counts_the_runs_it_rests_on() -> None:
    # Without an MoE ratio the MoE runs set nothing in an MoE prior: it rests on the dense runs
    # of its generation, and a reply's "from N published runs on Hopper" counts those (with the
    # ratio it counted the MoE runs of every generation too, GLaM on TPU v4 among them).
    table = load_mfu_priors()
    for generation in ("ampere", "hopper", POOLED):
        dense, moe = table.entry("dense", generation), table.entry("moe", generation)
        if "moe_ratio" in table.form:
            assert set(dense.runs) < set(moe.runs)
        else:
            assert moe.runs == dense.runs and moe.n_runs == dense.n_runs
    reply = estimate_run(RunSpec(preset="mixtral-8x7b", tokens="1T", gpu="h100", gpu_count=64))
    prior = reply.mfu_used.prior
    assert prior is not None and prior.n_runs == table.entry("moe", "hopper").n_runs


def test_fp8_run_is_flagged_and_left_out_of_the_bf16_priors() -> None:
    table = load_mfu_priors()
    deepseek = next(r for r in table.runs if r.name == "DeepSeek-V3")
    assert deepseek.fp8 and not deepseek.used and "FP8" in deepseek.note


def test_fp8_rescales_the_bf16_prior_to_the_fp8_peak() -> None:
    h100 = get_accelerator("h100")
    bf16 = mfu_prior("dense", h100, "bf16")
    fp8 = mfu_prior("dense", h100, "fp8")
    ratio = 1979 / 989.5
    assert fp8.central == pytest.approx(bf16.central * FP8_SPEEDUP.central / ratio)
    assert fp8.low == pytest.approx(bf16.low * FP8_SPEEDUP.low / ratio)
    assert fp8.high == pytest.approx(bf16.high * FP8_SPEEDUP.high / ratio)
    assert fp8.fp8_speedup == (FP8_SPEEDUP.low, FP8_SPEEDUP.central, FP8_SPEEDUP.high)
    assert bf16.fp8_speedup is None and FP8_SPEEDUP.source in fp8.source
    # Against the BF16 peak the FP8 run is 1.0–1.5x faster, not 2x.
    assert 1.0 <= fp8.central * ratio / bf16.central <= 1.5


def test_fp8_on_a_device_whose_fp8_peak_equals_bf16_is_unchanged() -> None:
    gaudi3 = get_accelerator("gaudi3")
    assert mfu_prior("dense", gaudi3, "fp8").central == mfu_prior("dense", gaudi3, "bf16").central


@pytest.mark.parametrize(("gpu", "label", "nearest", "borrowed"), [
    ("b200", "Blackwell", "hopper", "Hopper"),  # 2250 TF: nearer 989.5 than 312
    ("mi300x", "CDNA 3 (MI300)", "hopper", "Hopper"),  # 1307 TF
])
def test_generation_without_enough_runs_takes_the_nearest_calibrated_peak_and_says_so(
    gpu: str, label: str, nearest: str, borrowed: str
) -> None:
    from compute_budget.prompts.render import environment

    table = load_mfu_priors()
    chosen = table.entry("dense", nearest)
    acc = get_accelerator(gpu)
    runs = sum(r.used and r.family == "dense" and r.generation == acc.generation
               for r in table.runs)
    assert runs < table.min_runs
    prior = mfu_prior("dense", acc, "bf16")
    assert prior.scope == "nearest"
    assert prior.central == chosen.central
    # Conservative: the wider of the generation and pooled bands, on each side.
    down = max(table.band_factor, table.pooled_band_factor)
    up = max(table.band_high_factor or down, table.pooled_band_high_factor or down)
    assert (prior.low, prior.high) == pytest.approx((chosen.central / down,
                                                     chosen.central * up), abs=1e-3)
    assert (prior.generation_label, prior.runs_on_generation, prior.borrowed_from) == (
        label, runs, borrowed)
    sentence = environment().get_template("_macros.md.j2").module.mfu_basis(prior)
    phrase = (f"Uncalibrated: no published runs on {label} (a generation needs" if runs == 0
              else f"Uncalibrated: too few published runs on {label} ({runs} dense, fewer than")
    assert sentence.startswith(phrase) and "nearest in dense peak" in sentence
    # the basis quotes the borrowed generation's band; the sentence says the wider one applies
    assert f"the wider one of a generation without its own level, ÷ {down:g} to × {up:g}" in (
        sentence)


@pytest.mark.parametrize(("gpu", "runs"), [("tpu-v4", 2), ("tpu-v3", 2), ("v100", 2)])
def test_uncalibrated_generation_takes_the_pooled_level_when_lower_than_the_nearest(
    gpu: str, runs: int
) -> None:
    # TPU v3/v4 and Volta are nearest Ampere in peak, but their published runs (Gopher 0.30,
    # GPT-J 0.31, PaLM 0.30, OpenLLaMA 7B 0.33, SantaCoder 0.24, mGPT 0.10) sit near or below
    # the pooled level, below Ampere's: the lower one.
    table = load_mfu_priors()
    pooled = table.entry("dense", POOLED)
    assert pooled.central < table.entry("dense", "ampere").central
    prior = mfu_prior("dense", get_accelerator(gpu), get_accelerator(gpu).default_precision)
    assert prior.scope == "pooled" and prior.central == pooled.central
    assert prior.runs_on_generation == runs


def test_uncalibrated_hardware_never_gets_more_than_calibrated_newer_hardware() -> None:
    # The alternatives compare devices: an uncalibrated high-peak device must not look faster
    # per FLOP than the calibrated Hopper generation.
    hopper = mfu_prior("dense", get_accelerator("h100"), "bf16").central
    for gpu in ("b200", "gb200", "mi300x", "mi325x", "gaudi3"):
        assert mfu_prior("dense", get_accelerator(gpu), "bf16").central <= hopper


def test_uncalibrated_device_with_unknown_peak_falls_back_to_pooled() -> None:
    table = load_mfu_priors()
    pooled = table.entry("dense", POOLED)
    # A device of a generation without runs whose peak nobody publishes (like the A10G's).
    mystery = get_accelerator("a10g").model_copy(update={"generation": "mystery"})
    prior = mfu_prior("dense", mystery, "bf16")
    assert prior.scope == "pooled"
    assert (prior.central, prior.low, prior.high) == (pooled.central, pooled.low, pooled.high)
    assert prior.borrowed_from is None and prior.basis == pooled.basis


def test_cnn_and_snn_keep_the_flat_skill_prior_and_say_why() -> None:
    for family in ("cnn", "snn"):
        prior = mfu_prior(family, get_accelerator("h100"), "bf16")
        band = FAMILY_PRIORS[family]
        assert (prior.central, prior.low, prior.high) == (band.central, band.low, band.high)
        assert prior.scope == "flat" and prior.n_runs == 0
        assert prior.family_label == band.label
        assert "skill" in prior.source


def test_flat_skill_priors_are_kept_as_the_baseline() -> None:
    assert (FAMILY_PRIORS["dense"].low, FAMILY_PRIORS["dense"].high) == (0.3, 0.5)
    assert (FAMILY_PRIORS["moe"].low, FAMILY_PRIORS["moe"].high) == (0.15, 0.3)


def test_shaky_rows_are_recorded_with_what_was_done() -> None:
    table = load_mfu_priors()
    by_name = {r.name: r for r in table.runs}
    for name in ("Phi-2 2.7B", "Llama 3.2 1B", "Llama 3.2 3B", "TinyLlama 1.1B"):
        assert not by_name[name].used and by_name[name].note
    for name in ("Llama 3 8B", "Llama 3.1 8B", "Falcon-180B"):
        assert by_name[name].used and by_name[name].note.startswith("kept")
    skipped = {s.name: s.reason for s in table.skipped}
    assert "hardware not stated" in skipped["Snowflake Arctic"]
    assert "token count" in skipped["gpt-oss-120b"]
    assert "no accelerator-hours" in skipped["DBRX"]


def test_no_band_claims_a_run_faster_than_the_fastest_published_one() -> None:
    # The size slope carries big models near the fastest published run: at 70B on Ampere the
    # central is 0.43 and × 1.43 would be 0.61, end to end, faster than any of the 74 runs (the
    # fastest, LLaMA-1 13B, ran at 0.514). The fast end is held there, and says so.
    table = load_mfu_priors()
    used = [r.end_to_end_mfu for r in table.runs if r.used]
    assert table.highest_mfu == pytest.approx(max(used), abs=5e-4)
    a100 = get_accelerator("a100")
    big = mfu_prior("dense", a100, "bf16", params=70e9)
    assert big.band_high_factor is not None
    assert big.central * big.band_high_factor > table.highest_mfu
    assert big.high == table.highest_mfu and big.fast_end_cap == table.highest_mfu
    assert big.low == pytest.approx(big.central / big.band_factor, abs=1e-3)  # slow end kept
    # at the size clamp (405B) the slope carries the central itself to the fastest run; it is
    # held there too, so "fast end held at 0.51" stays true and no band is inverted
    largest = mfu_prior("dense", a100, "bf16", params=405e9)
    assert largest.central <= table.highest_mfu and largest.high == table.highest_mfu
    assert largest.low < largest.central <= largest.high
    lowered = table.model_copy(update={"highest_mfu": 0.3})
    held = prior_from_table(lowered, "dense", a100, "bf16", params=70e9)
    assert held.central == held.high == 0.3 and held.fast_end_cap == 0.3
    assert held.low == pytest.approx(0.3 / held.band_factor, abs=1e-3)
    small = mfu_prior("dense", a100, "bf16", params=7e9)
    assert small.fast_end_cap is None
    assert small.high == pytest.approx(small.central * small.band_high_factor, abs=1e-3)
    # every prior on every calibrated or borrowed generation stays at or under it
    for gpu in CALIBRATED_GPUS + FALLBACK_GPUS:
        acc = get_accelerator(gpu)
        prior = mfu_prior("dense", acc, "bf16" if acc.peak_tflops.bf16 else "fp16",
                          params=table.params_range[1])
        assert prior.central <= prior.high <= max(table.highest_mfu, prior.central), gpu


def test_an_older_table_without_its_fastest_run_caps_at_the_old_constant() -> None:
    from compute_budget.skill.hardware.mfu import MAX_PRIOR_MFU, prior_from_table

    old = load_mfu_priors().model_copy(update={"highest_mfu": None})
    prior = prior_from_table(old, "dense", get_accelerator("a100"), "bf16", params=70e9)
    assert prior.fast_end_cap is None and prior.high < MAX_PRIOR_MFU
    assert prior.band_high_factor is not None
    assert prior.high == pytest.approx(prior.central * prior.band_high_factor, abs=1e-3)


def test_encoders_take_the_median_of_the_published_encoder_runs() -> None:
    # RoBERTa-large's 100K steps (calibration_runs.csv: 1,024 V100 for about a day, 24,576
    # GPU-hours) took the dense prior: 11,409 GPU-hours, band up to 23,355, the reported hours
    # outside it. The calibration set's 10 encoder and encoder-decoder rows, left out of the
    # dense fit, now give family encoder its own prior (mfu_priors.json: 0.0319 ELECTRA-Small
    # to 0.3083 UL2 20B end to end, median 0.128).
    table = load_mfu_priors()
    encoders = [r for r in table.runs if r.architecture == "encoder" and not r.fp8]
    mfus = sorted(r.end_to_end_mfu for r in encoders)
    assert len(mfus) == 10 and not any(r.used for r in encoders)
    prior = mfu_prior("encoder", get_accelerator("v100"), "fp16")
    assert prior.scope == "family" and not prior.uncalibrated
    assert prior.central == round(statistics.median(mfus), 3) == 0.128
    assert prior.n_runs == 10 and set(prior.runs) == {r.name for r in encoders}
    assert prior.as_of == table.as_of and table.as_of in prior.source
    # one level for every device and size: no generation or size term
    big = mfu_prior("encoder", get_accelerator("h100"), "bf16", params=20e9)
    assert (big.central, big.low, big.high) == (prior.central, prior.low, prior.high)
    # ten runs, fewer than a held-out band needs: a band holding every one, never narrower
    # than the dense band
    assert prior.band_factor is not None and prior.band_high_factor is not None
    assert prior.central / prior.band_factor <= mfus[0]
    assert prior.central * prior.band_high_factor >= mfus[-1]
    assert prior.band_factor >= table.band_factor
    assert prior.band_high_factor >= (table.band_high_factor or table.band_factor)
    assert prior.observed is not None and prior.observed.family == "encoder"
    assert prior.observed.n_runs == 10
    # the replay: the reported hours inside the band, the FLOPs the same 6·N per token
    spec = {"params": "355M", "tokens": "419.4B", "gpu": "v100", "gpu_count": 1024,
            "seq_len": 512}
    dense = estimate_run(RunSpec(**spec))
    encoder = estimate_run(RunSpec(**spec, family="encoder"))
    assert dense.gpu_hours_range[1] < 24_576 < dense.gpu_hours_range[1] * 1.1
    assert encoder.gpu_hours_range[0] <= 24_576 <= encoder.gpu_hours_range[1]
    assert encoder.gpu_hours == pytest.approx(15_509, rel=1e-3)
    assert encoder.flops == dense.flops == pytest.approx(6 * 355e6 * 419.4e9)


def test_an_encoder_estimate_says_its_prior_and_its_flop_convention() -> None:
    from compute_budget.prompts import render_estimate
    from compute_budget.tools.relay import relay

    est = estimate_run(RunSpec(params="355M", tokens="419.4B", gpu="v100", gpu_count=1024,
                               seq_len=512, family="encoder"))
    short = " ".join(render_estimate(est).split())
    assert ("MFU: 0.13, a prior from the 10 published encoder and encoder–decoder runs (their "
            "median, one level for every device and size), calibrated 2026-12-06") in short
    assert "the encoder runs of the calibration set ran at" in short
    assert "- FLOPs: 6·N per token for every token, the decoders' count, kept for encoders" \
        in short
    full = " ".join(render_estimate(est, detail="full").split())
    assert "of the 10 published encoder and encoder–decoder runs (BERT, RoBERTa, T5 style)" \
        in full and "- FLOPs of an encoder: 6·N per token" in full
    told = relay("estimate_run_cost", est)
    assert told is not None and told["mfu_source"].startswith(
        "0.13, the encoder prior, the median of 10 published encoder and encoder–decoder runs "
        "(6·N per token, as they were counted)")
    # without the family, the full detail says how to give it
    dense = estimate_run(RunSpec(params="355M", tokens="419.4B", gpu="v100", gpu_count=1024))
    assert "takes family encoder" in " ".join(render_estimate(dense, detail="full").split())
