"""Find or build the real test toolchain: etcd, kube-apiserver, pulumi and the Python language host.

Run as `python tests/toolchain/build.py [--only NAME ...] [--force]`. Stdlib only. Each tool is
built once from its Go module into `<cache>/<tool>-<version>/` (see locate.py) and reused after;
a tool the user already provides (KUBEBUILDER_ASSETS, TEST_ASSET_*, pulumi on PATH) is not built.
Builds run niced with CGO_ENABLED=0 because the machine's two cores are shared.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

if __package__:
    from . import locate, versions
else:  # run as a script: `python tests/toolchain/build.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import locate  # type: ignore[no-redef]
    import versions  # type: ignore[no-redef]

Builder = Callable[[locate.Tool, Path, Path], None]

STAGING_REPLACE = re.compile(r"^\s*(k8s\.io/[\w.\-/]+)\s+=>\s+\./staging/src/(k8s\.io/[\w.\-/]+)\s*$")
REPLACE_LINE = re.compile(r"^\s*(?:replace\s+)?(\S+)(\s+\S+)?\s+=>\s+(\S+)(\s+\S+)?\s*$")


def log(message: str) -> None:
    print(f"[toolchain] {message}", flush=True)


def go_binary() -> str:
    found = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)
    if not found:
        raise SystemExit("[toolchain] Go is not installed: install Go 1.26+ and re-run `make toolchain`.")
    return found


def go_env() -> dict[str, str]:
    env = dict(os.environ)
    flags = [flag for flag in env.get("GOFLAGS", "").split() if not flag.startswith("-mod=")]
    env.update(
        GOFLAGS=" ".join([*flags, "-mod=mod"]),
        CGO_ENABLED="0",
        GOTOOLCHAIN="local",
    )
    return env


def go(args: Sequence[str], cwd: Path, capture: bool = False) -> str:
    """Run `nice -n 10 go ARGS` in `cwd`; output streams through unless captured."""
    command = ["nice", "-n", "10", go_binary(), *args]
    result = subprocess.run(
        command, cwd=cwd, env=go_env(), check=False, text=True, stdout=subprocess.PIPE if capture else None
    )
    if result.returncode != 0:
        raise SystemExit(f"[toolchain] `go {' '.join(args)}` failed in {cwd} (exit {result.returncode}).")
    return result.stdout or ""


def module_gomod(module_at_version: str, cwd: Path) -> str:
    """The go.mod text of a published module version, via the Go module cache."""
    info = json.loads(go(["mod", "download", "-json", module_at_version], cwd, capture=True))
    return Path(info["GoMod"]).read_text()


def module_dir(module: str, cwd: Path) -> Path:
    """Where the module cache unpacked a dependency of the module in `cwd`."""
    info = json.loads(go(["list", "-m", "-json", module], cwd, capture=True))
    return Path(info["Dir"])


def staging_replaces(kubernetes_gomod: str, staging_version: str) -> list[str]:
    """Turn kubernetes' `k8s.io/x => ./staging/src/k8s.io/x` lines into published-version replaces."""
    lines = []
    for line in kubernetes_gomod.splitlines():
        match = STAGING_REPLACE.match(line)
        if match:
            lines.append(f"\t{match.group(1)} => {match.group(1)} {staging_version}")
    if not lines:
        raise SystemExit("[toolchain] k8s.io/kubernetes go.mod has no staging replaces: layout changed?")
    return lines


def non_local_replaces(gomod: str) -> list[str]:
    """The replace directives of a go.mod that point at other modules, not at local directories."""
    lines = []
    in_block = False
    for raw in gomod.splitlines():
        line = raw.split("//")[0].rstrip()
        stripped = line.strip()
        if stripped.startswith("replace ("):
            in_block = True
            continue
        if in_block and stripped == ")":
            in_block = False
            continue
        if not (in_block or stripped.startswith("replace ")):
            continue
        match = REPLACE_LINE.match(stripped)
        if match and not match.group(3).startswith(("./", "../", "/")):
            lines.append("\t" + stripped.removeprefix("replace ").strip())
    return lines


def prepare_module(wrapper: str, work: Path) -> Path:
    """A fresh copy of the wrapper module in the cache (the repo copy is never modified)."""
    src = work / "src"
    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(locate.TOOLCHAIN_DIR / wrapper, src)
    return src


def append_gomod(src: Path, requires: Sequence[str], replaces: Sequence[str]) -> None:
    text = (src / "go.mod").read_text()
    text += "\nrequire (\n" + "".join(f"\t{req}\n" for req in requires) + ")\n"
    if replaces:
        text += "\nreplace (\n" + "".join(f"{rep}\n" for rep in replaces) + ")\n"
    (src / "go.mod").write_text(text)


def go_build(src: Path, output: Path, package: str, ldflags: Sequence[str]) -> None:
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(output.name + ".partial")
    go(["build", "-trimpath", "-ldflags", " ".join(["-s", "-w", *ldflags]), "-o", str(partial), package], src)
    partial.replace(output)


def version_ldflags(package: str, version: str) -> list[str]:
    major, minor, _ = version.removeprefix("v").split(".")
    build_date = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    values = {
        "gitVersion": version,
        "gitMajor": major,
        "gitMinor": minor,
        "gitTreeState": "clean",
        "buildDate": build_date,
    }
    return [f"-X {package}.{name}={value}" for name, value in values.items()]


def build_kube_apiserver(tool: locate.Tool, work: Path, bin_dir: Path) -> None:
    src = prepare_module("kube-apiserver", work)
    staging = versions.kubernetes_staging_version(tool.version)
    replaces = staging_replaces(module_gomod(f"k8s.io/kubernetes@{tool.version}", src), staging)
    append_gomod(src, [f"k8s.io/kubernetes {tool.version}"], replaces)
    log(f"  {len(replaces)} k8s.io staging modules replaced by their published {staging}")
    go(["mod", "tidy"], src)
    ldflags = version_ldflags("k8s.io/component-base/version", tool.version)
    ldflags += version_ldflags("k8s.io/client-go/pkg/version", tool.version)
    go_build(src, bin_dir / "kube-apiserver", ".", ldflags)


def build_etcd(tool: locate.Tool, work: Path, bin_dir: Path) -> None:
    src = prepare_module("etcd", work)
    append_gomod(src, [f"go.etcd.io/etcd/server/v3 {tool.version}"], [])
    go(["mod", "tidy"], src)
    go_build(src, bin_dir / "etcd", ".", [])


def build_pulumi(tool: locate.Tool, work: Path, bin_dir: Path) -> None:
    src = prepare_module("pulumi", work)
    replaces = non_local_replaces(module_gomod(f"github.com/pulumi/pulumi/pkg/v3@{tool.version}", src))
    requires = [f"github.com/pulumi/pulumi/{part}/v3 {tool.version}" for part in ("pkg", "sdk")]
    append_gomod(src, requires, replaces)
    go(["mod", "tidy"], src)
    ldflags = [f"-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version={tool.version}"]
    go_build(src, bin_dir / "pulumi", "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi", ldflags)




def build_language_host(tool: locate.Tool, work: Path, bin_dir: Path) -> None:
    src = prepare_module("language-host", work)
    sdk = f"github.com/pulumi/pulumi/sdk/v3@{versions.PULUMI}"
    replaces = non_local_replaces(module_gomod(sdk, src))
    append_gomod(src, [f"github.com/pulumi/pulumi/sdk/v3 {versions.PULUMI}"], replaces)
    go(["mod", "tidy"], src)
    stamp = f"-X main.hostVersion={versions.PULUMI.removeprefix('v')}"
    go_build(src, bin_dir / "pulumi-language-python", ".", [stamp])
    sdk_dir = module_dir("github.com/pulumi/pulumi/sdk/v3", src)
    exec_script = sdk_dir / "python" / "cmd" / "pulumi-language-python-exec"
    install_text(bin_dir / "pulumi-language-python-exec", exec_script.read_text())
    shim = locate.LANGUAGE_HOST_SRC / "pulumi-resource-pulumi-python"
    install_text(bin_dir / "pulumi-resource-pulumi-python", shim.read_text())


def install_text(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    partial.chmod(0o755)
    partial.replace(path)


def bundle_pulumi() -> None:
    """Hard-link the cached pulumi beside our language host, so the engine treats the host and the
    dynamic-provider shim as its bundled plugins instead of warning about plugins found on $PATH."""
    pulumi = locate.PULUMI.cached("pulumi")
    host_dir = locate.PULUMI_LANGUAGE_PYTHON.bin_dir
    target = host_dir / "pulumi"
    if pulumi is None or not locate.PULUMI_LANGUAGE_PYTHON.complete() or target.exists():
        return
    partial = target.with_name("pulumi.partial")
    partial.unlink(missing_ok=True)
    try:
        os.link(pulumi, partial)
    except OSError:
        shutil.copy2(pulumi, partial)
    partial.replace(target)
    log(f"pulumi: bundled with the language host in {host_dir}")


BUILDERS: dict[str, tuple[locate.Tool, Builder]] = {
    "etcd": (locate.ETCD, build_etcd),
    "kube-apiserver": (locate.KUBE_APISERVER, build_kube_apiserver),
    "pulumi": (locate.PULUMI, build_pulumi),
    "pulumi-language-python": (locate.PULUMI_LANGUAGE_PYTHON, build_language_host),
}


@contextmanager
def cache_lock() -> Iterator[None]:
    """One builder at a time per cache (parallel `make test` runs share it)."""
    root = locate.cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".build.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure(name: str, force: bool) -> None:
    tool, builder = BUILDERS[name]
    provided = locate.provided(tool)
    if provided and not force:
        log(f"{tool.name}: using provided {provided}")
        return
    if tool.complete() and not force:
        log(f"{tool.name} {tool.version}: cached in {tool.bin_dir}")
        return
    work = locate.cache_root() / tool.key
    log(f"{tool.name} {tool.version}: building into {tool.bin_dir} (this takes minutes)")
    started = time.monotonic()
    builder(tool, work, tool.bin_dir)
    seconds = time.monotonic() - started
    (work / "build-seconds.txt").write_text(f"{seconds:.0f}\n")
    log(f"{tool.name} {tool.version}: built in {seconds:.0f} s")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(BUILDERS), help="build only these tools")
    parser.add_argument("--force", action="store_true", help="rebuild even when cached or provided")
    args = parser.parse_args(argv)
    log(f"cache: {locate.cache_root()}")
    with cache_lock():
        for name in args.only or list(BUILDERS):
            ensure(name, args.force)
        bundle_pulumi()
    return 0


if __name__ == "__main__":
    sys.exit(main())
