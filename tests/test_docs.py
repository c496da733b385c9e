"""SKILL.md and README.md: valid front matter, every tool named, client configs that parse."""

import json
import re
from pathlib import Path

from compute_budget.tools import TOOL_NAMES

ROOT = Path(__file__).parent.parent
SKILL = (ROOT / "SKILL.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, flags=re.DOTALL)
    assert match, "SKILL.md must start with YAML front matter between --- lines"
    fields: dict[str, str] = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        assert sep and re.fullmatch(r"[a-z][a-z0-9_-]*", key), f"bad front-matter line {line!r}"
        fields[key] = value.strip()
    return fields, match.group(2)


def test_skill_front_matter() -> None:
    fields, body = _front_matter(SKILL)
    assert set(fields) == {"name", "description"}
    assert fields["name"] == "compute-budget"
    assert 0 < len(fields["description"]) <= 1024
    assert "Use it" in fields["description"]  # says when to use it
    assert len(body.splitlines()) < 500


def test_every_tool_is_named_in_skill_and_readme() -> None:
    for tool in TOOL_NAMES:
        assert f"`{tool}`" in SKILL, f"SKILL.md does not name {tool}"
        assert f"`{tool}`" in README, f"README.md does not name {tool}"
    assert "prevalidate_run" in SKILL and "prevalidate_run" in README


def test_skill_covers_the_procedure() -> None:
    for heading in ("## When to use it", "## The five steps", "## Reading the verdict",
                    "## Boundaries", "## Common mistakes"):
        assert heading in SKILL
    assert "kill criterion" in SKILL and "lower bound on cost" in SKILL
    assert "higher is better" in SKILL


def test_readme_client_configs_parse_and_run_the_server() -> None:
    configs = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", README,
                                                            flags=re.DOTALL)]
    assert any("mcpServers" in c for c in configs)
    assert any("servers" in c for c in configs)
    for config in configs:
        (entry,) = (config.get("mcpServers") or config["servers"]).values()
        assert entry["command"] == "uvx"
        assert entry["args"][0] == "--from" and entry["args"][-1] == "compute-budget-mcp"
    assert "claude mcp add compute-budget -- uvx --from" in README


def test_console_scripts_match_the_design() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'compute-budget = "compute_budget.cli:main"' in pyproject
    assert 'compute-budget-mcp = "compute_budget.tools.server:main"' in pyproject


def test_skill_example_numbers_are_what_the_tools_say() -> None:
    # SKILL.md's example: 7B × 100B tokens on 8 A100 → about 60 days (39–120 over the band),
    # about $31k with the failure budget; +0.3 ± 0.2 against a baseline of 1.0 → no-go.
    from compute_budget import RunSpec, decision_summary, estimate_run

    assert "about 60 days" in SKILL and "(39–120 over the MFU band)" in SKILL
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").replace("> ", "").split())
    assert "About 60 days (39–120 over the MFU band) and about $31k" in readme  # its session
    assert "about $31k with the failure budget" in SKILL
    est = estimate_run(RunSpec(params="7B", tokens="100B", gpu="a100", gpu_count=8))
    assert round(est.wall_days) == 60
    assert [round(d) for d in est.wall_days_range] == [39, 120]
    assert est.dollar_cost_with_failures is not None
    assert round(est.dollar_cost_with_failures / 1000) == 31
    assert decision_summary(est, 0.3, 0.2, 1.0).verdict == "no-go"
    assert "**no-go**: even 0.5 (gain + σ) is below 1.0" in SKILL


def test_server_json_is_fit_for_the_mcp_registry() -> None:
    # issue 19: the registry's own rules (modelcontextprotocol/registry, server.json format and
    # official registry requirements): one slash in a reverse-DNS name, a description of at
    # most 100 characters, concrete versions equal to the package's, a transport per package,
    # and the PyPI package's README naming the server (mcp-name).
    import tomllib

    server = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert server["$schema"].startswith("https://static.modelcontextprotocol.io/schemas/")
    namespace, _, name = server["name"].partition("/")
    assert "/" not in name and namespace.startswith("io.github.") and name == project["name"]
    assert len(server["description"]) <= 100
    (package,) = server["packages"]
    assert package["registryType"] == "pypi" and package["identifier"] == project["name"]
    assert server["version"] == package["version"] == project["version"]
    assert package["transport"] == {"type": "stdio"}
    assert f"<!-- mcp-name: {server['name']} -->" in README
