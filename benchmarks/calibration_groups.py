"""Which published runs are siblings: the model family and the organisation of each calibration row.

Grouped cross-validation holds out a whole group at a time, so that a run's siblings (Llama 2
7B/13B/70B, trained by one team on one cluster with one code base) are not in the fit that
predicts it. Two groupings are used, each read from the CSV's ``model`` and ``source`` columns:

- **family**: one model lineage released together (Llama 2 7B/13B/34B/70B; Phi-3 and Phi-3.5;
  Llama 3, 3.1 and 3.2, which share the cluster, the data and the year);
- **organisation**: who trained it (Meta holds LLaMA, Llama 2–4 and Chameleon; Google holds
  Gopher, Chinchilla and PaLM, both on TPU pods; MosaicML's MPT and Databricks' DBRX are one
  team after the 2023 acquisition).

:data:`LINEAGES` is the one table; the first pattern matching the model name (or, for the
organisation, the source) wins. A row no pattern matches (a run added to the CSV after this
table) is still grouped, by :func:`fallback_family`: its name without the size (``"Qwen2.5 7B"``
→ ``"Qwen2.5"``) is its family and the name's first word (``"Qwen"``) its organisation, so that
the scripts work on whatever the CSV holds; :func:`lineage` says it fell back, and the
benchmark lists such rows so that the table can be extended.

Architecture class (:func:`architecture_class`): ``moe`` when fewer parameters are active than
exist, ``encoder`` for encoder-only and encoder–decoder models (an ``architecture`` column when
the CSV has one, else the lineage's class or a known encoder name), else ``dense``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

__all__ = [
    "GROUPINGS",
    "LINEAGES",
    "ArchitectureClass",
    "Grouping",
    "Lineage",
    "architecture_class",
    "fallback_family",
    "group_of",
    "lineage",
]

Grouping = Literal["organisation", "family"]
GROUPINGS: tuple[Grouping, ...] = ("organisation", "family")
ArchitectureClass = Literal["dense", "moe", "encoder"]


@dataclass(frozen=True)
class Lineage:
    """A model family and the organisation that trained it."""

    pattern: str
    """Regular expression matched at the start of the CSV's ``model`` cell (case-insensitive)."""
    organisation: str
    family: str | None = None
    """None: the model name without its size (``"Qwen2.5 7B"`` → ``"Qwen2.5"``)."""
    architecture: ArchitectureClass | None = None
    """The class when the name does not say it (None: from the parameter counts)."""
    matched: bool = True
    """False for a row no pattern matched (grouped by :func:`fallback_family`)."""


LINEAGES: tuple[Lineage, ...] = (
    # Meta. Llama 3, 3.1 and 3.2 are one family: one cluster, one data mix, one year (2024).
    Lineage(r"llama 3", "Meta", "Llama 3"),
    Lineage(r"llama 4", "Meta", "Llama 4"),
    Lineage(r"llama|chameleon|opt-|galactica", "Meta"),
    # MobileLLM (2024): sub-billion decoders trained by Meta on 32 A100s, one paper and code base.
    Lineage(r"mobilellm", "Meta", "MobileLLM"),
    Lineage(r"roberta|xlm-r", "Meta", architecture="encoder"),
    # Google and DeepMind: TPU pods, one company (merged in 2023).
    Lineage(r"t5|mt5|ul2|flan-t5|bert|electra", "Google", architecture="encoder"),
    Lineage(r"gopher|chinchilla|palm|gemma|glam|lamda|gemini", "Google"),
    # XLNet (CMU and Google Brain) was trained on Google's TPU v3 pods: grouped with Google. Its
    # permutation objective with two-stream attention pretrains a bidirectional encoder for
    # understanding tasks, so it is scored with the encoders.
    Lineage(r"xlnet", "Google", "XLNet", architecture="encoder"),
    # Microsoft. Phi-3 and Phi-3.5 (mini, medium, MoE) are one family: one recipe, 2024.
    Lineage(r"phi-3", "Microsoft", "Phi-3"),
    Lineage(r"phi-|orca", "Microsoft"),
    # DeBERTa base, large and 1.5B (2020-21): masked-LM encoders on DGX-2 V100 nodes, one paper.
    Lineage(r"deberta", "Microsoft", "DeBERTa", architecture="encoder"),
    Lineage(r"megatron|nemotron", "NVIDIA"),
    Lineage(r"deepseek", "DeepSeek"),
    Lineage(r"bloombergGPT", "Bloomberg"),  # before BLOOM, whose name it starts with
    Lineage(r"bloom", "BigScience"),
    # Falcon2 and Falcon-Mamba (2024) share TII's Gigatron code base, SageMaker cluster and
    # RefinedWeb data: one family, apart from the 2023 Falcon-7B/40B/180B.
    Lineage(r"falcon2|falcon-mamba", "TII", "Falcon2 / Falcon-Mamba"),
    Lineage(r"falcon", "TII"),
    Lineage(r"mpt-|dbrx", "Databricks"),  # MosaicML joined Databricks in 2023
    Lineage(r"pythia|gpt-neox|gpt-j", "EleutherAI"),
    Lineage(r"tinyllama", "SUTD StatNLP"),
    Lineage(r"starcoder|santacoder", "BigCode"),
    Lineage(r"smollm", "Hugging Face"),
    Lineage(r"olmo", "Ai2"),
    Lineage(r"jetmoe", "JetMoE"),
    Lineage(r"snowflake|arctic", "Snowflake"),
    Lineage(r"gpt-", "OpenAI"),
    Lineage(r"baichuan", "Baichuan"),
    Lineage(r"glm", "Zhipu AI"),
    Lineage(r"qwen", "Alibaba"),
    Lineage(r"yi-", "01.AI"),
    Lineage(r"mixtral|mistral", "Mistral AI"),
    Lineage(r"granite", "IBM"),
    Lineage(r"stablelm", "Stability AI"),
    Lineage(r"zamba", "Zyphra"),
    Lineage(r"biomedlm", "Stanford CRFM"),  # trained by CRFM on the MosaicML platform
    Lineage(r"instella|amd-olmo|amd-llama", "AMD"),
    # HPLT: a consortium of European universities (Edinburgh, Helsinki, Oslo, Charles, Turku)
    # training data-ablation models on LUMI's MI250X.
    Lineage(r"hplt", "HPLT", "HPLT v2"),
    # Paloma's 1B baselines (2023): Ai2's six data-ablation models, four on LUMI's MI250X and two
    # on A100s, one recipe; a family apart from OLMo.
    Lineage(r"paloma", "Ai2", "Paloma"),
    Lineage(r"skywork", "Kunlun (Skywork)"),
    # FLM-101B (BAAI with CofeAI, 2023) and Tele-FLM (BAAI with TeleAI, 2024) share BAAI's FLM
    # code base and A800 clusters: one organisation, two families.
    Lineage(r"flm-101b", "BAAI", "FLM-101B"),
    Lineage(r"tele-flm", "BAAI", "Tele-FLM"),
    Lineage(r"pleias", "Pleias"),
    Lineage(r"rwkv", "RWKV (BlinkDL)", "RWKV"),
    Lineage(r"minicpm", "OpenBMB (ModelBest)", "MiniCPM"),
    Lineage(r"llada", "ML-GSAI (Renmin University, Ant Group)", "LLaDA"),
    Lineage(r"openllama", "OpenLM Research (UC Berkeley)", "OpenLLaMA"),
    Lineage(r"lucie", "LINAGORA (OpenLLM-France)", "Lucie"),
    Lineage(r"mgpt", "SberDevices (ai-forever)", "mGPT"),
    Lineage(r"bamba", "IBM", "Bamba"),
    Lineage(r"modernbert", "Answer.AI and LightOn", "ModernBERT", architecture="encoder"),
    Lineage(r"alexatm", "Amazon", "AlexaTM", architecture="encoder"),
    # MosaicML's BERT benchmark recipe (2023): MosaicML, Databricks since 2023, as MPT above.
    Lineage(r"mosaicml bert", "Databricks", "MosaicML BERT", architecture="encoder"),
    Lineage(r"trillion", "Trillion Labs", "Trillion"),
    Lineage(r"mamba-7b \(tri\)", "Toyota Research Institute", "Mamba-7B (TRI)"),
)
"""Every lineage of the calibration set, matched at the start of the model name, first match
wins (BloombergGPT comes before BLOOM, whose name it starts with)."""

_ENCODER_NAMES = re.compile(r"bert|electra|\bt5\b|-t5|bart|ul2|encoder", re.IGNORECASE)
_SIZE = re.compile(r"\s*\(.*?\)|[\s-]+\d+(\.\d+)?(x\d+(\.\d+)?)?[mbt](-\w+)?\b.*$", re.IGNORECASE)


def _name_family(name: str) -> str:
    """The model name without its size: ``"Qwen2.5 7B"`` → ``"Qwen2.5"``."""
    return _SIZE.sub("", name).strip() or name


def fallback_family(name: str) -> Lineage:
    """The group of a row no lineage matches: the name without its size is the family, its
    first word the organisation (``"InternLM2 20B"`` → family ``"InternLM2"``, organisation
    ``"InternLM"``)."""
    family = _name_family(name)
    word = re.match(r"[A-Za-z]+", family)
    return Lineage(pattern="", organisation=word.group(0) if word else family, family=family,
                   matched=False)


def lineage(name: str) -> Lineage:
    """The lineage of a calibration row, by its ``model`` cell, with its family filled in."""
    for entry in LINEAGES:
        if re.match(entry.pattern, name, flags=re.IGNORECASE):
            return replace(entry, family=entry.family or _name_family(name))
    return fallback_family(name)


def group_of(name: str, grouping: Grouping) -> str:
    """The group a run belongs to under ``grouping``."""
    entry = lineage(name)
    return (entry.family or name) if grouping == "family" else entry.organisation


def architecture_class(name: str, params: float, active_params: float | None,
                       row: Mapping[str, str] | None = None) -> ArchitectureClass:
    """dense, moe or encoder (encoder-only and encoder–decoder), as the module docstring says."""
    stated = ((row or {}).get("architecture") or "").lower()
    if "encoder" in stated or stated in ("t5", "bert"):
        return "encoder"
    if active_params is not None and active_params < params:
        return "moe"
    if "moe" in stated or "mixture" in stated:
        return "moe"
    entry = lineage(name)
    if entry.architecture is not None:
        return entry.architecture
    return "encoder" if _ENCODER_NAMES.search(name) else "dense"
