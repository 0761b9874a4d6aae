"""The machine description printed at the top of every benchmark run (issue 5).

CPU model and flags that matter for int8 kernels (AVX2 / AVX-512 VNNI), cores, memory, OS, the
compiler, valgrind, Python and the versions of the packages measured, and the repository commit —
what someone needs to judge whether their numbers should match ours.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("tilewise", "numpy", "tflite-micro", "ai-edge-litert", "ortools", "matplotlib")


def _first_line(cmd: list[str]) -> str | None:
    if shutil.which(cmd[0]) is None:
        return None
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else None


def _cpuinfo() -> dict[str, str]:
    info: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if ":" in line:
                k, v = (s.strip() for s in line.split(":", 1))
                info.setdefault(k, v)
    except OSError:
        pass
    return info


def _mem_total() -> str | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                kb = int(line.split()[1])
                return f"{kb / 2**20:.1f} GiB"
    except OSError:
        pass
    return None


def _version(pkg: str) -> str | None:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return None


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() + (" (modified)" if dirty.stdout.strip() else "")


def describe() -> dict:
    cpu = _cpuinfo()
    flags = set(cpu.get("flags", "").split())
    simd = [f for f in ("sse4_2", "avx2", "avx512f", "avx512_vnni", "avx_vnni") if f in flags]
    return {
        "cpu": cpu.get("model name") or platform.processor() or platform.machine(),
        "cpu_flags": simd,
        "logical_cpus": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory": _mem_total(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "cc": _first_line([os.environ.get("CC", "gcc"), "--version"]),
        "valgrind": _first_line(["valgrind", "--version"]),
        "packages": {p: _version(p) for p in PACKAGES},
        "commit": _git_commit(),
    }


def render(m: dict) -> str:
    pk = ", ".join(f"{k} {v}" for k, v in m["packages"].items() if v)
    lines = [
        f"- CPU: {m['cpu']} ({m['logical_cpus']} logical CPUs, {m['usable_cpus']} usable; "
        f"SIMD: {', '.join(m['cpu_flags']) or 'none listed'}); memory {m['memory']}",
        f"- OS: {m['os']}; Python {m['python']}; C compiler: {m['cc'] or 'not found'}; "
        f"valgrind: {m['valgrind'] or 'not found'}",
        f"- packages: {pk}",
        f"- tilewise commit: {m['commit'] or 'unknown'}",
    ]
    return "\n".join(lines) + "\n"
