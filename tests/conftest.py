"""Shared helpers. Every simulation run in these tests is checked: the core asserts buffer bounds on every
enqueue and packet conservation at the end of the run; with DETAILSIM_STRICT_INVARIANTS=1 (set here, so CLI
subprocesses inherit it) a run whose lossless invariant fails raises RuntimeError. A test that wants to see a
violation unsets it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

os.environ["DETAILSIM_STRICT_INVARIANTS"] = "1"

# Property tests draw the same examples on every `make test` ("ci": a green run stays green, a red one is
# reproducible); `make fuzz` runs them again with fresh random examples ("explore", HYPOTHESIS_PROFILE).
settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "detailsim.cli"]


def run_cli(*args: str, check: bool = False, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    return subprocess.run([*CLI, *args], capture_output=True, text=True, check=check, timeout=timeout, env=env, cwd=ROOT)


def bench_script(name: str):
    """A script under benches/ (`bench`, `sizes`, `pairsum`, `code_lines`, ...) loaded as a module: they run
    as files, not as an installed package."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "benches" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def assert_invariants(summary: dict) -> None:
    p = summary["packets"]
    assert p["created"] == p["delivered"] + p["dropped"] + p["in_flight"], p
    assert summary["invariants"]["conservation"] is True
    assert summary["invariants"]["lossless"] is True, summary["invariants"]


@pytest.fixture
def cli():
    return run_cli
