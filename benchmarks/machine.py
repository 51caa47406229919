"""The machine and checkout a run was measured on: CPU, cores, RAM, OS, Python, torch, commit, load."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path


def cpu_model(cpuinfo: str) -> str:
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            return value.strip()
    return platform.processor() or "unknown"


def memory_total_gib(meminfo: str) -> float:
    for line in meminfo.splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / (1024 * 1024)
    return float("nan")


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def git_commit(root: Path) -> str:
    """HEAD, marked "+ local changes" when the tree differs (read-only git commands)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head} + local changes" if dirty else head


def describe(root: Path) -> dict[str, str]:
    import torch

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "CPU": cpu_model(_read("/proc/cpuinfo")),
        "cores (nproc)": str(cores),
        "RAM": f"{memory_total_gib(_read('/proc/meminfo')):.1f} GiB",
        "OS": platform.platform(),
        "Python": platform.python_version(),
        "torch": f"{torch.__version__} ({torch.get_num_threads()} threads)",
        "sentence-transformers": _version("sentence-transformers"),
        "commit": git_commit(root),
    }
