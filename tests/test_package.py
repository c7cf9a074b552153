"""The built wheel carries the data files the tool needs at run time."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    (path,) = out.glob("ncuwrap-*.whl")
    return zipfile.ZipFile(path)


def test_wheel_contains_rules_templates_kernels_and_sample(wheel):
    names = set(wheel.namelist())
    for required in ["ncuwrap/rules/default.yaml", "ncuwrap/rules/reference.yaml", "ncuwrap/samples/transpose_h200.ncu-rep.gz",
                     "ncuwrap/kernels/manifest.yaml", "ncuwrap/kernels/transpose.cu", "ncuwrap/cli/__init__.py"]:
        assert required in names, required
    kernel_sources = {Path(n).name for n in names if n.startswith("ncuwrap/kernels/") and n.endswith(".cu")}
    assert kernel_sources == {p.name for p in (ROOT / "kernels").glob("*.cu")}
    templates = {Path(n).name for n in names if n.startswith("ncuwrap/templates/")}
    assert templates == {p.name for p in (ROOT / "templates").iterdir() if p.is_file()}
    assert not any(n.startswith("tests/") for n in names)


def test_wheel_declares_the_console_script(wheel):
    entry_points = next(n for n in wheel.namelist() if n.endswith("entry_points.txt"))
    assert "ncuwrap = ncuwrap.cli:main" in wheel.read(entry_points).decode()
