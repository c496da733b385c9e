"""The accelerator catalog: dense peaks, aliases, unknowns, sources."""

import pytest

from compute_budget import UnknownAcceleratorError, get_accelerator, list_accelerators
from compute_budget.skill.errors import InputError
from compute_budget.skill.hardware.catalog import PRICE_KINDS, PriceUsed, as_of_key
from compute_budget.skill.vocabulary import normalize_name


@pytest.mark.parametrize(
    ("alias", "key"),
    [
        ("a100", "a100-80gb"),
        ("A100", "a100-80gb"),
        ("a100-80gb", "a100-80gb"),
        ("A100 80GB SXM", "a100-80gb"),
        ("a100-40gb", "a100-40gb"),
        ("h100", "h100-sxm"),
        ("h100-sxm", "h100-sxm"),
        ("H100_SXM", "h100-sxm"),
        ("h100 pcie", "h100-pcie"),
        ("h800", "h800"),
        ("h200", "h200"),
        ("b200", "b200"),
        ("gb200", "gb200"),
        ("mi300x", "mi300x"),
        ("MI300X", "mi300x"),
        ("mi250x", "mi250x"),
        ("v100", "v100"),
        ("tpu-v4", "tpu-v4"),
        ("TPU v4", "tpu-v4"),
        ("tpu-v5p", "tpu-v5p"),
        ("tpu v5e", "tpu-v5e"),
        ("l40s", "l40s"),
        ("L4", "l4"),
        ("a10g", "a10g"),
        ("gaudi3", "gaudi3"),
        ("Gaudi 2", "gaudi2"),
        ("4090", "rtx-4090"),
        ("a800", "a800"),
        ("b300", "b300"),
        ("gb300", "gb300"),
        ("mi350x", "mi350x"),
        ("mi355x", "mi355x"),
        ("tpu-v6e", "tpu-v6e"),
        ("trillium", "tpu-v6e"),
        ("tpu-v7", "tpu-v7"),
        ("TPU7x", "tpu-v7"),
        ("ironwood", "tpu-v7"),
        ("h100-nvl", "h100-nvl"),
        ("h20", "h20"),
        ("gh200", "gh200"),
        ("a10", "a10"),
        ("t4", "t4"),
        ("rtx-5090", "rtx-5090"),
        ("5090", "rtx-5090"),
        ("a100-pcie", "a100-pcie"),
        ("trainium2", "trainium2"),
        ("trn2", "trainium2"),
        ("3090", "rtx-3090"),
        ("RTX A5000", "rtx-a5000"),
        ("a6000", "rtx-a6000"),
        ("RTX 6000 Ada", "rtx-6000-ada"),
    ],
)
def test_aliases(alias: str, key: str) -> None:
    assert get_accelerator(alias).key == key


def test_every_key_and_name_resolves_to_itself() -> None:
    for acc in list_accelerators():
        assert get_accelerator(acc.key) is acc
        assert get_accelerator(acc.name) is acc


def test_aliases_are_unambiguous() -> None:
    seen: dict[str, str] = {}
    for acc in list_accelerators():
        for label in (acc.key, acc.name, *acc.aliases):
            owner = seen.setdefault(normalize_name(label), acc.key)
            assert owner == acc.key, f"{label!r} names both {owner} and {acc.key}"


def test_unknown_name_suggests_close_names() -> None:
    with pytest.raises(UnknownAcceleratorError) as info:
        get_accelerator("h1000")
    assert "h100-sxm" in info.value.suggestions
    assert str(info.value).startswith("gpu: 'h1000' is not allowed")


def test_unknown_name_without_close_match() -> None:
    with pytest.raises(UnknownAcceleratorError) as info:
        get_accelerator("quantum-toaster")
    assert info.value.suggestions == []


@pytest.mark.parametrize("bad", ["", "   "])
def test_empty_name(bad: str) -> None:
    with pytest.raises(InputError, match=r"^gpu: "):
        get_accelerator(bad)


# Dense peaks from ../shared/data/accelerators.csv (NVIDIA datasheets list 2x with sparsity).
@pytest.mark.parametrize(
    ("key", "bf16", "fp8", "memory_gib"),
    [
        ("a100-80gb", 312, None, 80),  # A100 datasheet: 312 dense / 624 sparse
        ("h100-sxm", 989.5, 1979, 80),  # H100 page: 1,979* sparse BF16
        ("h200", 989.5, 1979, 141),
        ("b200", 2250, 4500, 180),  # HGX B200: 36 PF sparse per 8 GPUs
        ("mi300x", 1307.4, 2614.9, 192),  # AMD publishes dense
        ("tpu-v4", 275, None, 32),  # cloud.google.com/tpu/docs/v4
        ("gaudi3", 1835, 1835, 128),
        # GA102 whitepaper v2: RTX 3090 'Peak FP16 Tensor TFLOPS with FP32 Accumulate 71/142'
        # (GeForce halves FP32 accumulate; 142 is the FP16-accumulate rate, not for training)
        ("rtx-3090", 71, None, 24),
        ("rtx-a5000", 111.1, None, 24),  # datasheet: 'Tensor Performance 222.2 TFLOPS' sparse
        ("rtx-a6000", 154.8, None, 48),  # GA102 whitepaper Table 3: BF16 154.8/309.6
        ("rtx-6000-ada", 364.2, 728.5, 48),  # datasheet: 1457.0 FP8 sparse; BF16 = FP8 / 2
    ],
)
def test_dense_peaks(key: str, bf16: float, fp8: float | None, memory_gib: float) -> None:
    acc = get_accelerator(key)
    assert acc.peak_tflops.bf16 == bf16
    assert acc.peak_tflops.fp8 == fp8
    assert acc.memory_gib == memory_gib


def test_v100_has_fp16_but_no_bf16() -> None:
    v100 = get_accelerator("v100")
    assert v100.peak_tflops.bf16 is None
    assert v100.peak_tflops.fp16 == 125
    assert v100.default_precision == "fp16"


def test_a10g_tensor_peak_is_unknown_not_zero() -> None:
    a10g = get_accelerator("a10g")
    assert a10g.peak_tflops.bf16 is None
    assert a10g.peak_tflops.fp16 is None
    with pytest.raises(InputError, match="no published dense tensor peak"):
        a10g.peak("bf16")


def test_every_entry_has_a_dated_source_and_dated_prices_of_one_kind() -> None:
    for acc in list_accelerators():
        assert acc.spec_source.strip()
        as_of_key(acc.spec_as_of)  # YYYY, YYYY-MM or YYYY-Qn
        for quote in acc.prices:
            assert quote.kind in PRICE_KINDS
            assert quote.as_of and quote.source.strip() and quote.offer.strip()
            assert quote.usd_per_gpu_hour > 0
        on_demand = [q for q in acc.prices if q.kind == "on-demand"]
        assert sum(q.default for q in acc.prices) == (1 if on_demand else 0), acc.key


def test_no_figure_is_zero() -> None:
    for acc in list_accelerators():
        for value in (*acc.peak_tflops.model_dump().values(), acc.memory_gib,
                      acc.memory_bandwidth_tbs):
            assert value is None or value > 0


def test_default_price_is_the_newest() -> None:
    # H100 SXM: 4.92 (2025-01, AWS Capacity Blocks, reserved) and 3.99 (runpod.io/pricing,
    # Secure Cloud, read 2026-11-09): the default is the newest on-demand quote.
    quote = get_accelerator("h100").default_price
    assert quote is not None
    assert quote.usd_per_gpu_hour == 3.99
    assert quote.as_of == "2026-11"
    assert quote.kind == "on-demand"
    assert get_accelerator("tpu-v3").default_price is None


def test_price_yours_beats_the_catalog_and_unknown_stays_unknown() -> None:
    h100 = get_accelerator("h100")
    yours = h100.price(3.1)
    # Your price carries no catalog date or reference.
    assert yours == PriceUsed(usd_per_gpu_hour=3.1, origin="user", kind=None, as_of=None,
                              reference=None, label=None)
    catalog = h100.price(None)
    assert (catalog.usd_per_gpu_hour, catalog.origin) == (3.99, "catalog")
    assert catalog.as_of == "2026-11"
    assert catalog.kind == "on-demand"
    assert catalog.reference and catalog.label and len(catalog.label) < len(catalog.reference)
    # No quote for a TPU v3: the price is unknown (None), never 0.
    assert get_accelerator("tpu-v3").price(None).usd_per_gpu_hour is None
    assert get_accelerator("tpu-v3").price(None).origin is None
