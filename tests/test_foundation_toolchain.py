"""Foundation: the toolchain build script's go.mod rewriting and the binaries it produced (issue 2)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from toolchain import build, locate, versions

KUBERNETES_GOMOD_EXCERPT = """\
module k8s.io/kubernetes

require (
\tk8s.io/api v0.0.0
\tk8s.io/client-go v0.0.0
)

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/client-go => ./staging/src/k8s.io/client-go
\tk8s.io/cri-api => ./staging/src/k8s.io/cri-api
)
"""

PULUMI_GOMOD_EXCERPT = """\
module github.com/pulumi/pulumi/pkg/v3

replace github.com/pulumi/pulumi/sdk/v3 => ../sdk

replace github.com/atotto/clipboard => github.com/tgummerer/clipboard v0.0.0-20241001131231-d02d263e614e

replace (
\tgolang.org/x/text => golang.org/x/text v0.41.0 // pinned upstream
\texample.com/local => /abs/path
)
"""


def test_staging_modules_are_replaced_by_their_published_versions() -> None:
    """Every `=> ./staging/src/...` line becomes a replace by the published v0.X.Y module."""
    assert build.staging_replaces(KUBERNETES_GOMOD_EXCERPT, "v0.35.4") == [
        "\tk8s.io/api => k8s.io/api v0.35.4",
        "\tk8s.io/client-go => k8s.io/client-go v0.35.4",
        "\tk8s.io/cri-api => k8s.io/cri-api v0.35.4",
    ]


def test_a_kubernetes_gomod_without_staging_replaces_is_an_error() -> None:
    with pytest.raises(SystemExit, match="no staging replaces"):
        build.staging_replaces("module k8s.io/kubernetes\n", "v0.35.4")


def test_only_non_local_replace_lines_are_copied() -> None:
    """pkg's `=> ../sdk` cannot work outside its repo; the module-to-module replaces must be kept."""
    assert build.non_local_replaces(PULUMI_GOMOD_EXCERPT) == [
        "\tgithub.com/atotto/clipboard => github.com/tgummerer/clipboard v0.0.0-20241001131231-d02d263e614e",
        "\tgolang.org/x/text => golang.org/x/text v0.41.0",
    ]


@pytest.mark.parametrize(("release", "staging"), [("v1.35.4", "v0.35.4"), ("v1.34.0", "v0.34.0")])
def test_staging_version_follows_the_release(release: str, staging: str) -> None:
    assert versions.kubernetes_staging_version(release) == staging


def test_cache_root_honours_the_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CILIUM_IPAM_TOOLCHAIN_CACHE", str(tmp_path))
    assert locate.ETCD.bin_dir == tmp_path / f"etcd-{versions.ETCD}" / "bin"


def test_provided_binaries_win_over_the_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """KUBEBUILDER_ASSETS is used before anything is built (the envtest convention)."""
    for name in ("etcd", "kube-apiserver"):
        binary = tmp_path / name
        binary.write_text("#!/bin/sh\n")
        binary.chmod(0o755)
    monkeypatch.delenv("TEST_ASSET_ETCD", raising=False)
    monkeypatch.delenv("TEST_ASSET_KUBE_APISERVER", raising=False)
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(tmp_path))
    assert locate.find(locate.ETCD) == tmp_path / "etcd"
    assert locate.find(locate.KUBE_APISERVER) == tmp_path / "kube-apiserver"


def test_missing_toolchain_is_one_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CILIUM_IPAM_TOOLCHAIN_CACHE", str(tmp_path))
    monkeypatch.delenv("TEST_ASSET_ETCD", raising=False)
    monkeypatch.delenv("KUBEBUILDER_ASSETS", raising=False)
    with pytest.raises(locate.ToolchainMissing, match="run `make toolchain`"):
        locate.require(locate.ETCD)


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        (locate.ETCD, f"etcd Version: {versions.ETCD.removeprefix('v')}"),
        (locate.KUBE_APISERVER, f"Kubernetes {versions.KUBERNETES}"),
    ],
)
def test_built_servers_report_the_pinned_versions(tool: locate.Tool, expected: str) -> None:
    binary = locate.require(tool)
    command = [str(binary), "--version"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    assert expected in result.stdout
