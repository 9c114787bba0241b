"""Shared helpers. Every simulation run in these tests is checked by the core itself: buffer bounds on every
enqueue, packet conservation at the end of the run (a violation raises RuntimeError)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "detailsim.cli"]


def run_cli(*args: str, check: bool = False, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    return subprocess.run([*CLI, *args], capture_output=True, text=True, check=check, timeout=timeout, env=env, cwd=ROOT)


def assert_invariants(summary: dict) -> None:
    p = summary["packets"]
    assert p["created"] == p["delivered"] + p["dropped"] + p["in_flight"], p
    assert summary["invariants"]["conservation"] is True


@pytest.fixture
def cli():
    return run_cli
