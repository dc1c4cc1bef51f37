"""Shared fixtures: the repository's root and the `mufc` command."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def mufc_bin() -> pathlib.Path:
    """The `mufc` command of this checkout: `MUFC_BIN`, or built here."""
    given = os.environ.get("MUFC_BIN")
    if given:
        return pathlib.Path(given)
    subprocess.run(["cargo", "build", "-q", "-p", "mufc-cli"], cwd=ROOT, check=True)
    return ROOT / "target" / "debug" / "mufc"
