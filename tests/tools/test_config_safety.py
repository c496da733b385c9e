"""A ``config`` argument that names a file cannot leak, block or exhaust the server.

A file is read only if, links resolved, it is a regular ``.json`` file of at most 1 MB (checked
with ``os.stat`` before it is opened); JSON nested more than 64 levels is refused without
recursion; no error shows a value from a config; over HTTP only inline objects are read, or
paths inside the operator's ``--config-dir`` (see ``compute_budget.skill.model.source``).
"""

import argparse
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server import MCPServer
from pydantic import ValidationError

from compute_budget.skill import ConfigError, ModelSource, describe_error, load_config
from compute_budget.skill.model import source as model_source_module
from compute_budget.skill.model.source import ConfigPolicy, using_config_policy
from compute_budget.tools.http import config_policy_from_args

pytestmark = pytest.mark.adversarial

CONFIGS = Path(__file__).parent.parent / "fixtures" / "configs"
LLAMA = json.loads((CONFIGS / "meta-llama-3-8b.json").read_text())
SECRET = "sk-live-0123456789abcdef"
READABLE = "config: not a readable .json file of at most 1 MB"
HTTP_REFUSAL = "config: paths are not read over HTTP"
MEMORY = {"gpu_count": 8, "gpu": "h100"}


@pytest.fixture(autouse=True)
def local_policy() -> Iterator[None]:
    """Every test starts from the CLI's and stdio's policy, whatever another test set."""
    with using_config_policy(ConfigPolicy()):
        yield


def _refused(config: object) -> str:
    """The message ``config`` is refused with (it must come from a ConfigError)."""
    with pytest.raises(ValidationError) as info:
        ModelSource(config=config)  # type: ignore[arg-type]
    errors = info.value.errors(include_url=False)
    assert len(errors) == 1 and isinstance(errors[0]["ctx"]["error"], ConfigError)
    return describe_error(info.value)


def _finishes_fast(call: Callable[[], object], seconds: float = 5.0) -> None:
    """Run ``call`` in a daemon thread: a blocking read fails the test instead of hanging it."""
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            call()
        except BaseException as exc:
            outcome.append(exc)
        else:
            outcome.append(None)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still blocked after {seconds}s"
    assert isinstance(outcome[0], ConfigError), outcome[0]


def _write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data))
    return path


# --- what is read, and what is refused before it is opened ----------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)  # opening it to read would wait for a writer forever
    _finishes_fast(lambda: load_config(fifo))
    assert "not a regular file" in _refused(str(fifo))


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_dev_zero_is_refused_even_behind_a_json_link(tmp_path: Path) -> None:
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    _finishes_fast(lambda: load_config("/dev/zero"))
    _finishes_fast(lambda: load_config(link))
    assert "a readable .json file of at most 1 MB" in _refused(str(link))


def test_a_huge_sparse_file_is_refused_quickly(tmp_path: Path) -> None:
    big = tmp_path / "config.json"
    with big.open("wb") as handle:
        handle.truncate(2 * 1024**3)  # 2 GiB of holes: nothing is written to disk
    start = time.monotonic()
    assert "larger than 1 MB" in _refused(str(big))
    assert time.monotonic() - start < 1.0


def test_a_file_just_over_1_mb_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**LLAMA, "padding": "x" * 1_000_000}))
    assert "larger than 1 MB" in _refused(str(path))


def test_a_file_not_named_json_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "config.txt", LLAMA)  # valid config contents, wrong name
    assert "does not end in .json" in _refused(str(path))


def test_a_json_link_to_a_file_not_named_json_is_refused(tmp_path: Path) -> None:
    target = _write(tmp_path / "secrets.env", LLAMA)
    link = tmp_path / "config.json"
    link.symlink_to(target)
    assert "does not end in .json" in _refused(str(link))


def test_a_link_to_a_json_file_is_read(tmp_path: Path) -> None:
    link = tmp_path / "config.json"
    link.symlink_to(CONFIGS / "meta-llama-3-8b.json")
    arch = ModelSource(config=str(link)).architecture
    assert arch is not None and arch.source == str(link)


def test_the_fixture_configs_still_load() -> None:
    for path in sorted(CONFIGS.glob("*.json")):
        assert ModelSource(config=str(path)).architecture is not None


# --- nesting -------------------------------------------------------------------------------


DEEP = '{"model_type": "llama", "x": ' + "[" * 3000 + "]" * 3000 + "}"


def test_deep_nesting_in_a_file_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(DEEP)
    assert _refused(str(path)) == (
        "config: not a JSON object nested at most 64 levels deep (value not shown)")


def test_deep_nesting_inline_is_refused_clearly() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(3000):
        node["a"] = {}
        node = node["a"]
    for config in (DEEP, deep, {**LLAMA, "x": deep}):
        assert "nested at most 64 levels deep" in _refused(config)


def test_nesting_a_config_actually_uses_is_accepted() -> None:
    nested: Any = 1
    for _ in range(20):
        nested = {"n": nested}
    assert ModelSource(config={**LLAMA, "rope_scaling": nested}).architecture is not None
    assert ModelSource(config=json.dumps({**LLAMA, "x": nested})).architecture is not None


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path: Path) -> None:
    path = _write(tmp_path / "config.json", {**LLAMA, "note": "[" * 500 + '\\"{' * 100})
    assert load_config(path).layers == 32


# --- no value from a config comes back ------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"model_type": SECRET},
        {"hidden_size": SECRET},
        {"_name_or_path": SECRET, "num_attention_heads": SECRET},
        {"_name_or_path": SECRET, "num_key_value_heads": 5},
        {"_name_or_path": SECRET, "num_hidden_layers": 0},
        {"model_type": "llama", "tie_word_embeddings": SECRET},
        {"model_type": "mixtral", "num_local_experts": 8, "num_experts_per_tok": SECRET},
    ],
)
def test_a_secret_in_a_config_is_never_echoed(change: dict[str, Any], tmp_path: Path) -> None:
    data = {**LLAMA, **change}
    path = _write(tmp_path / "config.json", data)
    for config in (str(path), data, json.dumps(data)):
        message = _refused(config)
        assert SECRET not in message and "(value not shown)" in message, message
        assert message.split(":")[0] in change or message.startswith("num_key_value_heads")


def test_the_model_type_error_names_the_field_and_what_is_allowed() -> None:
    message = _refused({**LLAMA, "model_type": SECRET})
    assert message.startswith("model_type: not one of the supported families gpt2, gpt_neox, llama")
    assert message.endswith("(value not shown)")


def test_invalid_inline_json_is_not_echoed() -> None:
    message = _refused('{"model_type": "' + SECRET + '", oops}')
    assert message.startswith("config: not valid JSON") and SECRET not in message


@pytest.mark.anyio
async def test_a_secret_is_not_echoed_by_a_tool(server: MCPServer, tmp_path: Path) -> None:
    path = _write(tmp_path / "config.json", {**LLAMA, "hidden_size": SECRET,
                                             "_name_or_path": SECRET})
    async with Client(server) as client:
        result = await client.call_tool("estimate_memory", {**MEMORY, "config": str(path)})
    text = _tool_text(result)
    assert result.is_error and "hidden_size:" in text and SECRET not in text


# --- the policy: local paths for the CLI and stdio, inline objects over HTTP ----------------


def _tool_text(result: Any) -> str:
    return str(result.content[0].text).removeprefix("Error executing tool estimate_memory: ")


@pytest.mark.anyio
async def test_http_policy_refuses_paths_and_accepts_inline_objects(server: MCPServer) -> None:
    path = str(CONFIGS / "meta-llama-3-8b.json")
    with using_config_policy(ConfigPolicy(allow_paths=False)):
        async with Client(server) as client:
            refused = await client.call_tool("estimate_memory", {**MEMORY, "config": path})
            inline = await client.call_tool("estimate_memory", {**MEMORY, "config": LLAMA})
            text = await client.call_tool("estimate_memory",
                                          {**MEMORY, "config": json.dumps(LLAMA)})
    assert refused.is_error and _tool_text(refused).startswith(HTTP_REFUSAL)
    assert "--config-dir" in _tool_text(refused)
    assert not inline.is_error and not text.is_error


def test_a_config_dir_reads_only_inside_it_and_says_nothing_about_the_rest(
    tmp_path: Path,
) -> None:
    inside = tmp_path / "configs"
    inside.mkdir()
    _write(inside / "llama.json", LLAMA)
    outside = _write(tmp_path / "other.json", LLAMA)
    (inside / "escape.json").symlink_to(outside)
    (inside / "unreadable.json").write_text("{}")
    (inside / "unreadable.json").chmod(0)
    with using_config_policy(ConfigPolicy(allow_paths=False, config_dir=inside.resolve())):
        assert ModelSource(config="llama.json").architecture is not None
        assert ModelSource(config=str(inside / "llama.json")).architecture is not None
        root = getattr(os, "geteuid", lambda: 0)() == 0  # root reads a mode-0 file
        for path in ("nope.json", str(outside), "../other.json", "escape.json",
                     "/etc/passwd", "x.json" if root else "unreadable.json"):
            assert _refused(path) == READABLE, path


def test_the_server_flags_set_the_policy(tmp_path: Path) -> None:
    def policy(http: bool, config_dir: str | None) -> ConfigPolicy:
        return config_policy_from_args(argparse.Namespace(http=http, config_dir=config_dir))

    assert policy(False, None) == ConfigPolicy(allow_paths=True)
    assert policy(True, None) == ConfigPolicy(allow_paths=False)
    assert policy(True, str(tmp_path)).config_dir == tmp_path.resolve()
    with pytest.raises(ValueError, match="--config-dir must be an existing directory"):
        policy(True, str(tmp_path / "missing"))
    no_hub = argparse.Namespace(http=True, config_dir=None, no_hub=True)
    assert config_policy_from_args(no_hub) == ConfigPolicy(allow_paths=False, allow_hub=False)


@pytest.mark.anyio
async def test_a_server_without_the_hub_refuses_model_ids_and_fetches_nothing(
    server: MCPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--no-hub: a model id is refused by name, before any request; presets still work."""
    from compute_budget.skill.model import hub

    def fetch(model_id: str) -> dict[str, Any]:
        raise AssertionError("the Hub was asked")

    monkeypatch.setattr(hub, "fetch_config", fetch)
    monkeypatch.setattr(model_source_module, "fetch_config", fetch)
    with using_config_policy(ConfigPolicy(allow_paths=False, allow_hub=False)):
        async with Client(server) as client:
            refused = await client.call_tool("estimate_run_cost", {
                "model": "Qwen/Qwen2.5-7B", "tokens": "1T", "gpu": "h100", "gpu_count": 8})
            assert refused.is_error
            assert "model: 'Qwen/Qwen2.5-7B' is not allowed; not on this server" in \
                refused.content[0].text
            preset = await client.call_tool("estimate_run_cost", {
                "preset": "qwen2.5-7b", "tokens": "1T", "gpu": "h100", "gpu_count": 8})
            assert not preset.is_error


@pytest.mark.anyio
async def test_a_config_is_validated_off_the_event_loop(
    server: MCPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop_thread = threading.get_ident()
    seen: list[int] = []
    load = model_source_module._load_path

    def recording(path: str) -> Any:
        seen.append(threading.get_ident())
        return load(path)

    monkeypatch.setattr(model_source_module, "_load_path", recording)
    async with Client(server) as client:
        result = await client.call_tool(
            "estimate_memory", {**MEMORY, "config": str(CONFIGS / "gpt2.json")})
    assert not result.is_error, _tool_text(result)
    assert seen and loop_thread not in seen


# --- a real HTTP server ---------------------------------------------------------------------


@pytest.mark.external
@pytest.mark.anyio
@pytest.mark.anyio
async def test_http_server_reads_paths_only_inside_its_config_dir(tmp_path: Path) -> None:
    from .test_http import _running

    path = str(CONFIGS / "gpt2.json")
    with _running(tmp_path / "plain.log") as url:
        async with Client(url, mode="legacy") as client:
            refused = await client.call_tool("estimate_memory", {**MEMORY, "config": path})
            inline = await client.call_tool("estimate_memory", {**MEMORY, "config": LLAMA})
    assert refused.is_error and _tool_text(refused).startswith(HTTP_REFUSAL)
    assert not inline.is_error
    with _running(tmp_path / "dir.log", "--config-dir", str(CONFIGS)) as url:
        async with Client(url, mode="legacy") as client:
            inside = await client.call_tool("estimate_memory",
                                            {**MEMORY, "config": "gpt2.json"})
            outside = await client.call_tool("estimate_memory",
                                             {**MEMORY, "config": "/etc/hostname"})
    assert not inside.is_error, _tool_text(inside)
    assert outside.is_error and _tool_text(outside) == READABLE


def test_inside_the_config_directory_a_non_json_file_is_refused_as_a_missing_one(
        tmp_path: Path) -> None:
    # issue 18: "not valid JSON (line 1 …)" against the uniform refusal told a caller which
    # names exist; and a file's _name_or_path is not echoed back.
    from compute_budget.skill.errors import ConfigError
    from compute_budget.skill.model.config_file import load_config

    (tmp_path / "notes.json").write_text("these are my notes")
    (tmp_path / "deep.json").write_text("[" * 200)
    (tmp_path / "model.json").write_text(
        '{"_name_or_path": "private/name", "model_type": "llama", "num_hidden_layers": 2, '
        '"hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128, '
        '"vocab_size": 100}')
    messages = set()
    for name in ("notes.json", "deep.json", "absent.json"):
        with pytest.raises(ConfigError) as info:
            load_config(name, root=tmp_path)
        messages.add(str(info.value))
    assert messages == {"config: not a readable .json file of at most 1 MB"}
    arch = load_config("model.json", root=tmp_path)
    assert arch.name is None and "private" not in arch.model_dump_json()
