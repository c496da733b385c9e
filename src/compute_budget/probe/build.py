"""The probed model: the config at full width with a few decoder layers, random weights.

:func:`full_config` fills the config's defaults through transformers
(``AutoConfig.for_model(model_type, **config)``, so a partial preset works); :func:`at_depth`
cuts it to ``n`` decoder layers; :func:`build_model` builds it in fp32 on the device, in train
mode, with recomputation and LoRA adapters as asked.

Cutting to ``n`` layers keeps the layers a deeper model starts with:

- per-layer lists (``layer_types`` of Gemma 2/3 and Qwen: which layers slide their attention
  window) keep their first ``n`` entries, so a Gemma 3 probe at 1–2 layers measures local
  (sliding-window) layers; at a context within the window a local and a global layer cost the
  same, beyond it the global layers of the full model are measured as local ones;
- indices of dense layers in a MoE (Qwen's ``mlp_only_layers``) keep those below ``n``;
- DeepSeek's ``first_k_dense_replace`` (the first k layers dense, the rest MoE) becomes
  min(k, L1) at both depths L1 < L2 of the probe, so the layers the deeper model adds are MoE
  layers, as most of the full model's are. Extrapolating from L1 then counts the full model's
  other k − min(k, L1) dense layers as MoE layers (DeepSeek-V3: 2 of 61 layers with the
  default 1–2 layer probe): their memory and time are a little over-counted.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from .backend import load
from .errors import ProbeError

__all__ = ["LORA_SKIPPED", "add_lora", "at_depth", "build_model", "causal_lm_configs",
           "full_config", "layer_count"]

torch: Any = load("torch")
transformers: Any = load("transformers")

LORA_SKIPPED = frozenset({"gate", "router", "lm_head", "score", "classifier"})
"""Linear layers inside a decoder layer that get no LoRA adapter: MoE routers (``gate``)."""


def full_config(config: Mapping[str, Any]) -> Any:
    """The transformers config of ``config`` (a config.json mapping) with the family's
    defaults filled in; ProbeError when transformers cannot build its ``model_type``."""
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise ProbeError("the config has no model_type: the probe builds the model with "
                         "transformers, which needs it (e.g. 'llama')")
    fields = {k: v for k, v in config.items() if k != "model_type"}
    try:
        cfg = transformers.AutoConfig.for_model(model_type, **fields)
    except (ValueError, KeyError):
        raise ProbeError(f"model_type {model_type!r}: transformers "
                         f"{transformers.__version__} cannot build it (not a model type it "
                         "knows)") from None
    except TypeError as exc:
        raise ProbeError(f"model_type {model_type!r}: transformers cannot read this config "
                         f"({_first_line(exc)})") from None
    if type(cfg).__name__ not in causal_lm_configs():
        raise ProbeError(f"model_type {model_type!r}: transformers has no causal language "
                         "model for it (the probe trains a decoder-only model)")
    return cfg


@cache
def causal_lm_configs() -> frozenset[str]:
    """The config classes transformers has a causal language model for."""
    auto = load("transformers.models.auto.modeling_auto")
    mapping = auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    configs = load("transformers.models.auto.configuration_auto").CONFIG_MAPPING_NAMES
    return frozenset(configs[k] for k in mapping if k in configs)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def layer_count(cfg: Any) -> int:
    """Decoder layers of ``cfg`` (``num_hidden_layers``, or the family's name for it)."""
    layers = getattr(cfg, "num_hidden_layers", None)
    if not isinstance(layers, int) or layers < 1:
        raise ProbeError(f"model_type {cfg.model_type!r}: the config gives no number of "
                         "decoder layers (num_hidden_layers)")
    return layers


def at_depth(cfg: Any, layers: int, shallowest: int) -> Any:
    """A copy of ``cfg`` with ``layers`` decoder layers, per-layer settings cut to match (see
    the module's docstring); ``shallowest`` is the probe's smaller depth."""
    full = layer_count(cfg)
    cut = copy.deepcopy(cfg)
    for name, value in cfg.to_dict().items():
        if isinstance(value, list | tuple) and len(value) == full and full > 1:
            setattr(cut, name, type(value)(value[:layers]))
    cut.num_hidden_layers = layers
    dense = getattr(cfg, "mlp_only_layers", None)
    if isinstance(dense, list | tuple):
        cut.mlp_only_layers = [i for i in dense if i < layers]
    first_dense = getattr(cfg, "first_k_dense_replace", None)
    if isinstance(first_dense, int):
        cut.first_k_dense_replace = min(first_dense, shallowest)
    return cut


def _lora_class() -> Any:
    nn = torch.nn
    module: Any = nn.Module

    class LoraLinear(module):  # type: ignore[misc]
        """A frozen Linear plus a trained low-rank update: W·x + (alpha / r)·B·A·x, with
        alpha = r (scale 1), A random (rank × in), B zeros (out × rank)."""

        def __init__(self, base: Any, rank: int, sizes: tuple[int, int]) -> None:
            super().__init__()
            self.base = base
            options = {"device": base.weight.device, "dtype": base.weight.dtype}
            self.lora_a = nn.Parameter(torch.empty(rank, sizes[0], **options))
            self.lora_b = nn.Parameter(torch.zeros(sizes[1], rank, **options))
            nn.init.kaiming_uniform_(self.lora_a, a=5**0.5)
            self.scale = 1.0

        def forward(self, x: Any) -> Any:
            update = torch.nn.functional.linear(torch.nn.functional.linear(x, self.lora_a),
                                                self.lora_b)
            return self.base(x) + update * self.scale

    return LoraLinear


def _projection_sizes(module: Any) -> tuple[int, int] | None:
    """(in, out) of a Linear layer, or of transformers' Conv1D (GPT-2's projections, which
    keep the weight transposed); None for anything else."""
    if isinstance(module, torch.nn.Linear):
        return int(module.in_features), int(module.out_features)
    conv1d = getattr(load("transformers.pytorch_utils"), "Conv1D", None)
    if conv1d is not None and isinstance(module, conv1d):
        return int(module.weight.shape[0]), int(module.nf)
    return None


def add_lora(model: Any, rank: int) -> None:
    """Freeze every weight of ``model`` and put a LoRA adapter of ``rank`` on each Linear
    (or Conv1D) layer of its decoder layers: the attention and MLP projections, not the MoE
    routers. Expert weights that transformers keeps as stacked 3-D parameters get none."""
    lora = _lora_class()
    for param in model.parameters():
        param.requires_grad_(False)
    targets = [(name, module, sizes) for name, module in model.named_modules()
               if (sizes := _projection_sizes(module)) is not None
               and re.search(r"(^|\.)(layers|h|blocks)\.\d+\.", name)
               and name.rsplit(".", 1)[-1] not in LORA_SKIPPED]
    if not targets:
        raise ProbeError(f"model_type {model.config.model_type!r}: its decoder layers have no "
                         "Linear projections for LoRA adapters")
    for name, module, sizes in targets:
        parent_name, _, child = name.rpartition(".")
        setattr(model.get_submodule(parent_name), child, lora(module, rank, sizes))


def build_model(cfg: Any, *, device: Any, attn_implementation: str | None,
                recompute: str, lora_rank: int | None) -> Any:
    """``cfg`` built with random fp32 weights on ``device``, in train mode, with full
    recomputation and LoRA adapters when asked."""
    options: dict[str, Any] = {"dtype": torch.float32}
    if attn_implementation is not None:
        options["attn_implementation"] = attn_implementation
    with torch.device(device):
        try:
            model = transformers.AutoModelForCausalLM.from_config(cfg, **options)
        except (ValueError, ImportError) as exc:
            raise ProbeError(f"model_type {cfg.model_type!r}: transformers cannot build it "
                             f"as asked ({_first_line(exc)})") from None
    if lora_rank is not None:
        add_lora(model, lora_rank)
    if recompute == "full":
        options = {"use_reentrant": False}
        if hasattr(model, "activation_checkpointing_enable"):  # transformers 5.2x and later
            model.activation_checkpointing_enable(activation_checkpointing_kwargs=options)
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=options)
    model.config.use_cache = False
    model.train()
    return model
