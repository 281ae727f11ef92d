"""Where the toolchain's binaries are: user-provided first, then the versioned build cache.

Stdlib only, because build.py (run before the venv's test deps matter) imports it too.
Order of preference: KUBEBUILDER_ASSETS / TEST_ASSET_KUBE_APISERVER / TEST_ASSET_ETCD, `pulumi` on
PATH, then `${CILIUM_IPAM_TOOLCHAIN_CACHE:-$HOME/.cache/cilium-ipam/toolchain}/<tool>-<version>/`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

if __package__:
    from . import versions
else:  # imported by build.py run as a script
    import versions  # type: ignore[no-redef]

TOOLCHAIN_DIR = Path(__file__).resolve().parent
REPO_ROOT = TOOLCHAIN_DIR.parent.parent
LANGUAGE_HOST_SRC = TOOLCHAIN_DIR / "language-host"


class ToolchainMissing(RuntimeError):
    """A binary the tests need is neither provided nor built."""


@dataclass(frozen=True)
class Tool:
    """One cached tool: its cache key and the binaries it puts in `<cache>/<key>/bin`."""

    name: str
    version: str
    binaries: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"

    @property
    def bin_dir(self) -> Path:
        return cache_root() / self.key / "bin"

    def cached(self, binary: str) -> Path | None:
        path = self.bin_dir / binary
        return path if _executable(path) else None

    def complete(self) -> bool:
        return all(self.cached(binary) for binary in self.binaries)


def cache_root() -> Path:
    """The build cache, outside the repository so no binary is ever committed."""
    configured = os.environ.get("CILIUM_IPAM_TOOLCHAIN_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "cilium-ipam" / "toolchain"


def language_host_digest() -> str:
    """A short hash of our language host's source: editing it yields a new cache key."""
    digest = hashlib.sha256()
    for path in sorted(LANGUAGE_HOST_SRC.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(LANGUAGE_HOST_SRC).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


KUBE_APISERVER = Tool("kube-apiserver", versions.KUBERNETES, ("kube-apiserver",))
ETCD = Tool("etcd", versions.ETCD, ("etcd",))
PULUMI = Tool("pulumi", versions.PULUMI, ("pulumi",))
PULUMI_LANGUAGE_PYTHON = Tool(
    "pulumi-language-python",
    f"{versions.PULUMI}-{language_host_digest()}",
    ("pulumi-language-python", "pulumi-language-python-exec", "pulumi-resource-pulumi-python"),
)
ALL_TOOLS = (ETCD, KUBE_APISERVER, PULUMI, PULUMI_LANGUAGE_PYTHON)


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _from_env(variable: str) -> Path | None:
    value = os.environ.get(variable)
    if value and _executable(Path(value)):
        return Path(value)
    return None


def _from_kubebuilder_assets(binary: str) -> Path | None:
    assets = os.environ.get("KUBEBUILDER_ASSETS")
    if assets and _executable(Path(assets) / binary):
        return Path(assets) / binary
    return None


def provided(tool: Tool) -> Path | None:
    """The binary the user supplied for `tool`, if any (never the build cache)."""
    if tool is KUBE_APISERVER:
        return _from_env("TEST_ASSET_KUBE_APISERVER") or _from_kubebuilder_assets("kube-apiserver")
    if tool is ETCD:
        return _from_env("TEST_ASSET_ETCD") or _from_kubebuilder_assets("etcd")
    if tool is PULUMI:
        found = shutil.which("pulumi")
        return Path(found) if found else None
    if tool is PULUMI_LANGUAGE_PYTHON:
        pulumi = provided(PULUMI)
        beside = pulumi.parent / "pulumi-language-python" if pulumi else None
        return beside if beside and _executable(beside) else None
    return None


def find(tool: Tool) -> Path | None:
    """The first binary of `tool`: provided, else cached, else None."""
    return provided(tool) or tool.cached(tool.binaries[0])


def require(tool: Tool) -> Path:
    """Like `find`, but a missing binary is one clear error saying how to get it."""
    path = find(tool)
    if path is None:
        raise ToolchainMissing(
            f"{tool.name} {tool.version} is not built: run `make toolchain` "
            f"(or `python tests/toolchain/build.py`), or point the env vars at existing binaries."
        )
    return path


def pulumi_cli() -> Path:
    """The pulumi to run: the copy bundled beside our language host when there is one (see
    build.py's bundle_pulumi), else the provided or cached CLI."""
    host = find(PULUMI_LANGUAGE_PYTHON)
    if host is not None and _executable(host.parent / "pulumi"):
        return host.parent / "pulumi"
    return require(PULUMI)


def project_python() -> Path:
    """The interpreter Pulumi programs and dynamic providers run with: the project venv."""
    configured = os.environ.get("CILIUM_IPAM_PYTHON")
    if configured:
        return Path(configured)
    return REPO_ROOT / ".venv" / "bin" / "python"
