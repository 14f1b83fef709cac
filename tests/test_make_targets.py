"""What the Makefile's entry points need: `make install` and `make run` only Python (no Node, npm
or network once `.venv` is installed: the README's promise), `make test` also npm's axe-core."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _commands(target: str) -> str:
    """The commands `make <target>` would run with every file out of date (dry run, -B)."""
    return subprocess.run(
        ["make", "--dry-run", "--always-make", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


def test_npm_ci_comes_with_the_test_target_only() -> None:
    """axe-core is a test tool: a fresh clone without Node or network still runs PayOps."""
    for target in ("install", "migrate", "run"):
        assert "npm" not in _commands(target), target
    assert "npm ci" in _commands("test")
