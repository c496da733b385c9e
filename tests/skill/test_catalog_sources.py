"""Issue 11: the catalog's new devices against their sources' own numbers, and prices by kind.

Each row holds the figure as the source prints it (sparse where NVIDIA prints sparse, per 8 GPUs
or per rack where the source does) and checks the stored dense per-device value derived from it.
"""

import pytest
from pydantic import ValidationError

from compute_budget.skill.errors import InputError
from compute_budget.skill.hardware.catalog import (
    Accelerator,
    PeakTflops,
    PriceQuote,
    as_of_key,
    get_accelerator,
    list_accelerators,
)

NEW_DEVICES = ["b300", "gb300", "mi350x", "mi355x", "tpu-v6e", "tpu-v7", "h100-nvl", "h20",
               "gh200", "a10", "t4", "rtx-5090", "a100-pcie", "trainium2"]


def test_every_device_the_issue_lists_is_in_the_catalog() -> None:
    keys = {acc.key for acc in list_accelerators()}
    assert set(NEW_DEVICES) <= keys
    assert len(keys) == len(list_accelerators())  # keys are unique


# --- NVIDIA: the source prints 2:4-sparse figures; dense = sparse / 2 -------------------------
@pytest.mark.parametrize(
    ("key", "bf16_sparse", "fp8_sparse", "per", "memory_gib", "bandwidth_tbs", "power_w"),
    [
        # HGX B300 table (fibermall): per 8 GPUs FP16/BF16 36 PF*, FP8 72 PF*, up to 2.3 TB.
        ("b300", 36_000, 72_000, 8, 288, 8.0, 1100),
        # H100 page, NVL column: BF16 1,671*, FP8 3,341*, 94 GB, 3.9 TB/s, 350-400 W.
        ("h100-nvl", 1671, 3341, 1, 94, 3.9, 400),
        # GH200 datasheet: FP8 3,958*, BF16 1,979*, 96 GB HBM3, 4 TB/s, 450-1,000 W.
        ("gh200", 1979, 3958, 1, 96, 4.0, 1000),
        # A10 datasheet: BF16 125 | 250*; 24 GB GDDR6, 600 GB/s, 150 W; no FP8 on Ampere.
        ("a10", 250, None, 1, 24, 0.6, 150),
        # A100 datasheet, 80GB PCIe: BF16 312 | 624*, 1,935 GB/s, 300 W.
        ("a100-pcie", 624, None, 1, 80, 1.935, 300),
    ],
)
def test_nvidia_dense_is_half_the_sparse_datasheet_figure(
        key: str, bf16_sparse: float, fp8_sparse: float | None, per: int, memory_gib: float,
        bandwidth_tbs: float, power_w: float) -> None:
    acc = get_accelerator(key)
    assert acc.peak_tflops.bf16 == pytest.approx(bf16_sparse / per / 2)
    assert acc.peak_tflops.fp16 == acc.peak_tflops.bf16
    if fp8_sparse is None:
        assert acc.peak_tflops.fp8 is None
    else:
        assert acc.peak_tflops.fp8 == pytest.approx(fp8_sparse / per / 2)
    assert (acc.memory_gib, acc.memory_bandwidth_tbs, acc.board_power_w) == (
        memory_gib, bandwidth_tbs, power_w)


def test_gb300_per_gpu_is_the_rack_over_72() -> None:
    # Verda / glennklockwood: NVL72 rack 180 PF BF16 and 360 PF FP8 dense, 576 TB/s HBM,
    # 20.7 TB; 1.4 kW per GPU.
    gb300 = get_accelerator("gb300")
    assert gb300.peak_tflops.bf16 == pytest.approx(180_000 / 72)
    assert gb300.peak_tflops.fp8 == pytest.approx(360_000 / 72)
    assert gb300.memory_bandwidth_tbs == pytest.approx(576 / 72)
    assert gb300.memory_gib == pytest.approx(20_700 / 72, rel=0.01)
    assert gb300.board_power_w == 1400


@pytest.mark.parametrize(("key", "clock_ghz", "power_w"), [("mi350x", 2.2, 1000),
                                                           ("mi355x", 2.4, 1400)])
def test_mi350_series_peaks_from_cus_clock_and_per_cu_rate(key: str, clock_ghz: float,
                                                           power_w: float) -> None:
    # ISSCC 2026 (as reported): 8,192 dense FP8 FLOPs per clock per CU; 256 CUs (32 per XCD x 8);
    # 2.2 / 2.4 GHz; FP16/BF16 at half the FP8 rate. 288 GB HBM3E, 8 TB/s.
    acc = get_accelerator(key)
    fp8 = 8192 * 256 * clock_ghz * 1e9 / 1e12
    assert acc.peak_tflops.fp8 == pytest.approx(fp8, abs=0.05)
    assert acc.peak_tflops.bf16 == pytest.approx(fp8 / 2, abs=0.05)
    assert (acc.memory_gib, acc.memory_bandwidth_tbs, acc.board_power_w) == (288, 8.0, power_w)
    # AMD's rounded headline figures: MI355X 2.5 PF FP16 / 5 PF FP8 dense.
    if key == "mi355x":
        assert round(acc.peak("bf16") / 1000, 1) == 2.5
        assert round(acc.peak("fp8") / 1000) == 5


@pytest.mark.parametrize(
    ("key", "bf16", "fp8", "memory_gib", "bandwidth_gbps"),
    [
        ("tpu-v6e", 918, 918, 32, 1638),  # docs/v6e: 918 TFLOPs, 32 GB, 1638 GBps; tpu7x FP8 918
        ("tpu-v7", 2307, 4614, 192, None),  # docs/tpu7x: 2307 BF16, 4614 FP8, 192 GiB
        ("trainium2", 667, 1299, 96, 2900),  # Neuron docs: 667 BF16, 1,299 FP8, 96 GiB, 2.9 TB/s
        ("h20", 148, 296, 96, 4000),  # H20 spec: FP16 dense 148, INT8/FP8 296, 96 GB, 4.0 TB/s
    ],
)
def test_dense_as_published(key: str, bf16: float, fp8: float, memory_gib: float,
                            bandwidth_gbps: float | None) -> None:
    acc = get_accelerator(key)
    assert (acc.peak_tflops.bf16, acc.peak_tflops.fp8, acc.memory_gib) == (bf16, fp8, memory_gib)
    if bandwidth_gbps is None:  # not captured: unknown, never 0
        assert acc.memory_bandwidth_tbs is None
    else:
        assert acc.memory_bandwidth_tbs == pytest.approx(bandwidth_gbps / 1000)


def test_t4_has_fp16_only() -> None:
    # T4 datasheet: 'Mixed Precision (FP16/FP32) 65 FP16 TFLOPS' (no sparsity on Turing), 16 GB,
    # 320 GB/s, 70 W; no BF16, no FP8.
    t4 = get_accelerator("t4")
    assert (t4.peak_tflops.bf16, t4.peak_tflops.fp16, t4.peak_tflops.fp8) == (None, 65, None)
    assert t4.default_precision == "fp16"
    assert (t4.memory_gib, t4.memory_bandwidth_tbs, t4.board_power_w) == (16, 0.32, 70)


def test_rtx_5090_is_a_quarter_of_the_sparse_fp16_accumulate_figure() -> None:
    # Spec tables: FP16 tensor (sparse) 838.4, FP8 (sparse) 1,676.8 (FP16-accumulate rates);
    # dense / 2, and FP32 accumulate (training) at half again, as on the RTX 4090.
    rtx = get_accelerator("rtx-5090")
    assert rtx.peak_tflops.bf16 == pytest.approx(838.4 / 4)
    assert rtx.peak_tflops.fp8 == pytest.approx(1676.8 / 4)
    assert (rtx.memory_gib, rtx.memory_bandwidth_tbs, rtx.board_power_w) == (32, 1.792, 575)
    assert "derived" in rtx.spec_source


@pytest.mark.parametrize(
    ("key", "fp8_sparse"),
    [("l4", 485), ("rtx-4090", 660.6)],  # L4 datasheet 485*; Ada whitepaper 660.6* (FP32 acc.)
)
def test_fp8_filled_for_known_figures(key: str, fp8_sparse: float) -> None:
    assert get_accelerator(key).peak_tflops.fp8 == pytest.approx(fp8_sparse / 2)


def test_tpu_v3_bandwidth_and_power() -> None:
    # cloud.google.com/tpu/docs/v3: 'HBM2 capacity and bandwidth 32 GiB, 900 GBps',
    # measured power 123/220/262 W.
    v3 = get_accelerator("tpu-v3")
    assert (v3.memory_bandwidth_tbs, v3.board_power_w) == (0.9, 262)


@pytest.mark.parametrize("key", ["a10g", "gaudi2"])
def test_unsourced_figures_stay_unknown_and_say_so(key: str) -> None:
    acc = get_accelerator(key)
    assert acc.peak_tflops.fp8 is None
    assert "unknown" in acc.spec_source


def test_a_board_power_always_has_its_source() -> None:
    for acc in list_accelerators():
        assert (acc.board_power_w is None) == (acc.board_power_source is None), acc.key
        assert acc.board_power_w is None or acc.board_power_w > 0


# --- prices by kind -------------------------------------------------------------------------
def test_non_typical_defaults_are_replaced() -> None:
    # H200: the unnamed market floor (2.50) is gone; the January survey's RunPod 3.59 stays as an
    # older quote; the default is RunPod's Secure Cloud list (4.59, read 2026-10-07).
    h200 = get_accelerator("h200")
    assert h200.default_price is not None
    assert (h200.default_price.usd_per_gpu_hour, h200.default_price.as_of) == (4.59, "2026-10")
    assert 2.5 not in [q.usd_per_gpu_hour for q in h200.prices]
    # A100 40GB: the 2024 AWS Capacity Blocks price is a reservation, not the default.
    a100 = get_accelerator("a100-40gb")
    assert a100.default_price is not None and a100.default_price.kind == "on-demand"
    assert a100.price(None, "reserved").usd_per_gpu_hour == 1.84
    # H800: the DeepSeek-V3 report's assumed $2/GPU-h is not a quote: no price.
    assert get_accelerator("h800").prices == ()


def test_every_default_is_the_newest_on_demand_quote() -> None:
    for acc in list_accelerators():
        on_demand = [q for q in acc.prices if q.kind == "on-demand"]
        if not on_demand:
            assert acc.default_price is None
            continue
        default = acc.default_price
        assert default is not None and default.kind == "on-demand"
        assert all(as_of_key(q.as_of) <= as_of_key(default.as_of) for q in on_demand)


def test_price_picks_the_newest_quote_of_the_kind() -> None:
    h100 = get_accelerator("h100")
    reserved = h100.price(None, "reserved")
    assert (reserved.usd_per_gpu_hour, reserved.origin) == (4.92, "catalog")
    assert (reserved.kind, reserved.as_of, reserved.reference, reserved.label) == (
        "reserved", "2025-01", "AWS Capacity Blocks pricing page",
        "AWS Capacity Blocks pricing page")
    assert h100.price(None, "on-demand") == h100.price(None)
    # Your price still wins over any kind.
    assert (h100.price(3.1, "reserved").usd_per_gpu_hour,
            h100.price(3.1, "reserved").origin) == (3.1, "user")


def test_a_kind_without_a_quote_names_price_kind_and_the_kinds_it_has() -> None:
    with pytest.raises(InputError) as info:
        get_accelerator("h100").price(None, "spot")
    assert info.value.field == "price_kind"
    assert str(info.value) == ("price_kind: 'spot' is not allowed; one of the kinds the catalog "
                               "quotes for H100 SXM: on-demand, reserved")
    with pytest.raises(InputError, match=r"^price_kind: .on-demand. .*no price for TPU v3"):
        get_accelerator("tpu-v3").price(None, "on-demand")
    with pytest.raises(InputError, match=r"^price_kind: 'hourly' .*on-demand, reserved, spot"):
        get_accelerator("h100").price(None, "hourly")


def test_no_kind_and_no_quote_is_unknown_not_an_error() -> None:
    unknown = get_accelerator("gb300").price(None)
    assert (unknown.usd_per_gpu_hour, unknown.origin, unknown.kind) == (None, None, None)


def _quote(kind: str, as_of: str, default: bool = False) -> dict[str, object]:
    return dict(usd_per_gpu_hour=1.0, kind=kind, offer="x", as_of=as_of, source="s",
                default=default)


def _device(*quotes: dict[str, object]) -> Accelerator:
    return Accelerator(key="k", name="K", vendor="v", generation="g", aliases=(),
                       peak_tflops=PeakTflops(bf16=1, fp16=None, fp8=None), memory_gib=1,
                       memory_bandwidth_tbs=1, spec_source="s", spec_as_of="2026",
                       prices=tuple(PriceQuote.model_validate(q) for q in quotes))


def test_spot_quotes_are_picked_by_kind() -> None:
    acc = _device(_quote("on-demand", "2026-11", True), _quote("spot", "2025-Q4"),
                  _quote("spot", "2026-03"))
    assert acc.price(None, "spot").as_of == acc.prices[2].as_of == "2026-03"
    assert acc.price_kinds == ("on-demand", "spot")


@pytest.mark.parametrize(
    "quotes",
    [
        (_quote("on-demand", "2026-01"),),  # an on-demand quote but no default
        (_quote("reserved", "2026-01", True),),  # a default that is not on-demand
        (_quote("on-demand", "2025", True), _quote("on-demand", "2026-Q1")),  # not the newest
    ],
)
def test_the_default_must_be_the_newest_on_demand_quote(
        quotes: tuple[dict[str, object], ...]) -> None:
    with pytest.raises(ValidationError, match="default"):
        _device(*quotes)


@pytest.mark.parametrize("bad", ["2025/2026", "2026-13", "Q1 2026", "", "2026-Q5"])
def test_as_of_must_be_a_date(bad: str) -> None:
    with pytest.raises(ValidationError):
        PriceQuote.model_validate(_quote("on-demand", bad))


def test_kind_must_be_one_of_three() -> None:
    with pytest.raises(ValidationError):
        PriceQuote.model_validate(_quote("reservation", "2026"))


def test_as_of_orders_months_quarters_and_years() -> None:
    assert as_of_key("2026") < as_of_key("2026-01") < as_of_key("2026-Q1") < as_of_key("2026-04")
    assert as_of_key("2025-12") < as_of_key("2026")


def test_tpu_prices_are_googles_per_chip_list_prices() -> None:
    """Google Cloud TPU pricing, per chip-hour (US regions), on-demand and 1-year committed use:
    v5e $1.20 / $0.84, v5p $4.20 / $2.94, v6e (Trillium) $2.70 / $1.89; v4 $3.22 / $1.93 (as
    transcribed by the secondary sources each quote names)."""
    from compute_budget.skill.hardware.catalog import get_accelerator

    for key, on_demand, reserved in (("tpu-v5e", 1.20, 0.84), ("tpu-v5p", 4.20, 2.94),
                                      ("tpu-v6e", 2.70, 1.89), ("tpu-v4", 3.22, 1.93)):
        acc = get_accelerator(key)
        assert acc.price(None, gpu_count=4).usd_per_gpu_hour == on_demand, key
        assert acc.price(None, kind="reserved", gpu_count=4).usd_per_gpu_hour == reserved, key


@pytest.mark.parametrize(("key", "count", "slice_", "slices", "paid", "extra"), [
    # v5p and v4 slices start at 2x2x1, 4 chips (v5p-8, v4-8: two TensorCores a chip) and grow
    # to a 4x4x4 cube of 64 (v5p-128, cloud.google.com/tpu/docs/v5p); then whole cubes
    ("tpu-v5p", 2, "v5p-8", None, 4, None),
    ("tpu-v5p", 12, "v5p-32", None, 16, None),
    ("tpu-v5p", 1024, "v5p-128", 16, None, None),  # one slice of 16 cubes (8x16x16)
    ("tpu-v5p", 288, "v5p-128", 5, 320, None),  # whole cubes: no 32-chip slice beside 4 cubes
    ("tpu-v5p", 8000, "v5p-128", 125, None, None),  # past 6,144 chips: slices over a network
    ("tpu-v4", 100, "v4-128", 2, 128, None),
    # v5e and v6e: 1, 4, 8 ... 256 chips (a pod); beyond, pods and a smaller slice
    ("tpu-v5e", 1, "v5litepod-1", None, None, None),
    ("tpu-v6e", 2, "v6e-4", None, 4, None),
    ("tpu-v6e", 300, "v6e-256", None, 320, "v6e-64"),
])
def test_tpus_are_rented_in_whole_slices(key: str, count: int, slice_: str, slices: int | None,
                                         paid: int | None, extra: str | None) -> None:
    from compute_budget.skill.hardware.catalog import get_accelerator

    price = get_accelerator(key).price(None, gpu_count=count)
    assert (price.instance, price.machines, price.paid_gpus, price.extra_instance) == \
        (slice_, slices, paid, extra)
    # v4 and v5p cubes join into one slice up to the largest job (6,144 v5p, a 4,096-chip v4
    # pod); v5e and v6e pods do not
    assert bool(price.joined) == (key in ("tpu-v5p", "tpu-v4") and slices is not None
                                  and count <= (6144 if key == "tpu-v5p" else 4096))


def test_the_full_catalog_quotes_a_shared_price_source_once() -> None:
    # TPU v5p's ten slice quotes (5 sizes, on-demand and reserved) share one source: the full
    # detail printed that paragraph ten times
    from compute_budget.prompts import render_accelerators
    from compute_budget.skill.hardware.catalog import get_accelerator

    v5p = get_accelerator("tpu-v5p")
    text = render_accelerators([v5p], show_sources=True)
    assert len(v5p.prices) == 10
    assert text.count("as transcribed in a public wiki page") == 2  # slices, and joined cubes
    assert "Price $4.20/h: on-demand, $2.94/h reserved, 2025 (v5p-8, v5p-16, v5p-32, v5p-64)" \
        in text
