"""Foundation: the built Pulumi engine runs Python programs and policy packs offline (issue 2).

The programs are written into temp dirs here so each test shows, end to end, that the CLI, our
language host, the dynamic-provider shim and the project venv work together on a file:// backend.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from toolchain import locate, pulumienv

pytestmark = pytest.mark.pulumi

STACK = "foundation"

DYNAMIC_PROGRAM = '''
import json
from pathlib import Path

import pulumi
from pulumi.dynamic import CreateResult, Resource, ResourceProvider


class MarkerProvider(ResourceProvider):
    """Writes a marker file on create and removes it on delete, so the test can see both calls."""

    def create(self, props):
        marker = Path(props["marker"])
        marker.write_text(json.dumps({"message": props["message"]}))
        return CreateResult(
            id_="marker-1",
            outs={**props, "length": len(props["message"]), "created": True},
        )

    def delete(self, id, props):
        Path(props["marker"]).unlink()


class Marker(Resource):
    length: pulumi.Output[int]
    created: pulumi.Output[bool]

    def __init__(self, name, message, marker, opts=None):
        super().__init__(
            MarkerProvider(),
            name,
            {"message": message, "marker": marker, "length": None, "created": None},
            opts,
        )


config = pulumi.Config()
marker = Marker("marker", config.require("message"), config.require("marker"))
pulumi.export("length", marker.length)
pulumi.export("created", marker.created)
pulumi.export("message", marker.message)
'''

POLICY_PACK = '''
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy


def no_forbidden_message(args, report_violation):
    if args.props.get("message") == "forbidden":
        report_violation("the message must not be 'forbidden'; choose another message")


PolicyPack(
    name="foundation-pack",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=[
        ResourceValidationPolicy(
            name="no-forbidden-message",
            description="Rejects resources whose message is 'forbidden'.",
            validate=no_forbidden_message,
        ),
    ],
)
'''


def runtime_block(with_virtualenv: bool) -> str:
    """A `runtime:` block; without the virtualenv option the host falls back to CILIUM_IPAM_PYTHON."""
    if not with_virtualenv:
        return "runtime: python\n"
    venv = locate.project_python().parent.parent
    return f"runtime:\n  name: python\n  options:\n    toolchain: pip\n    virtualenv: {venv}\n"


def write_project(directory: Path, name: str, with_virtualenv: bool = True) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "Pulumi.yaml").write_text(f"name: {name}\n" + runtime_block(with_virtualenv))
    (directory / "__main__.py").write_text(DYNAMIC_PROGRAM)
    return directory


def write_policy_pack(directory: Path, with_virtualenv: bool = True) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "PulumiPolicy.yaml").write_text(
        "description: Foundation test pack\n" + runtime_block(with_virtualenv)
    )
    (directory / "__main__.py").write_text(POLICY_PACK)
    return directory


def init_stack(engine: pulumienv.PulumiEngine, project: Path, message: str, marker: Path) -> None:
    engine.run(["stack", "init", STACK, "--non-interactive"], cwd=project)
    engine.run(["config", "set", "message", message], cwd=project)
    engine.run(["config", "set", "marker", str(marker)], cwd=project)


def stack_resources(engine: pulumienv.PulumiEngine, project: Path) -> list[dict[str, Any]]:
    exported = json.loads(engine.run(["stack", "export"], cwd=project).stdout)
    return list(exported["deployment"].get("resources") or [])


def test_built_cli_reports_the_pinned_version(pulumi_engine: pulumienv.PulumiEngine, tmp_path: Path) -> None:
    from toolchain import versions

    result = pulumi_engine.run(["version"], cwd=tmp_path)
    assert result.stdout.strip() == versions.PULUMI


def test_pulumi_up_and_destroy_of_a_dynamic_resource(
    pulumi_engine: pulumienv.PulumiEngine, tmp_path: Path
) -> None:
    """`pulumi up` creates the dynamic resource with the expected outputs; `destroy` deletes it."""
    project = write_project(tmp_path / "program", "foundation-dynamic")
    marker = tmp_path / "marker.json"
    init_stack(pulumi_engine, project, "hello", marker)

    pulumi_engine.run(["up", "--yes", "--skip-preview", "--non-interactive"], cwd=project)

    outputs = json.loads(pulumi_engine.run(["stack", "output", "--json"], cwd=project).stdout)
    assert outputs == {"length": 5, "created": True, "message": "hello"}
    assert json.loads(marker.read_text()) == {"message": "hello"}
    types = sorted(r["type"] for r in stack_resources(pulumi_engine, project))
    assert types == [
        "pulumi-python:dynamic:Resource",
        "pulumi:providers:pulumi-python",
        "pulumi:pulumi:Stack",
    ]

    pulumi_engine.run(["destroy", "--yes", "--skip-preview", "--non-interactive"], cwd=project)

    assert not marker.exists(), "the dynamic provider's delete did not run"
    assert stack_resources(pulumi_engine, project) == []


def test_policy_pack_mandatory_violation_fails_preview(
    pulumi_engine: pulumienv.PulumiEngine, tmp_path: Path
) -> None:
    """A Python policy pack runs under `pulumi preview --policy-pack`; its mandatory violation fails
    the preview and names the policy, while a compliant program previews cleanly with the same pack.
    Neither names a virtualenv, so this also covers the host's interpreter fallback (CILIUM_IPAM_PYTHON)."""
    pack = write_policy_pack(tmp_path / "policies", with_virtualenv=False)
    project = write_project(tmp_path / "program", "foundation-policy", with_virtualenv=False)
    init_stack(pulumi_engine, project, "hello", tmp_path / "unused-marker.json")

    compliant = pulumi_engine.run(["preview", "--non-interactive", "--policy-pack", str(pack)], cwd=project)
    assert "foundation-pack" in compliant.stdout

    pulumi_engine.run(["config", "set", "message", "forbidden"], cwd=project)
    violating = pulumi_engine.run(
        ["preview", "--non-interactive", "--policy-pack", str(pack)], cwd=project, check=False
    )
    output = violating.stdout + violating.stderr
    assert violating.returncode != 0, output
    assert "no-forbidden-message" in output
    assert "the message must not be 'forbidden'" in output


def test_program_error_fails_up_and_reaches_the_user(
    pulumi_engine: pulumienv.PulumiEngine, tmp_path: Path
) -> None:
    """A Python exception in the program fails `pulumi up` and its message is shown (exec exit 32 ->
    the host's bail path), and nothing is created."""
    project = write_project(tmp_path / "program", "foundation-error")
    (project / "__main__.py").write_text('raise ValueError("pool dc1 needs a maskSize: set it to 24")\n')
    pulumi_engine.run(["stack", "init", STACK, "--non-interactive"], cwd=project)
    up = ["up", "--yes", "--skip-preview", "--non-interactive"]
    failed = pulumi_engine.run(up, cwd=project, check=False)
    output = failed.stdout + failed.stderr
    assert failed.returncode != 0
    assert "pool dc1 needs a maskSize: set it to 24" in output
    assert [r["type"] for r in stack_resources(pulumi_engine, project)] in ([], ["pulumi:pulumi:Stack"])
