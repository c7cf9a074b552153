"""On a GPU: `ncuwrap profile` of the bundled cases names, for each finding, the source line a reader of
the .cu file would point at (issue 20). The lines are found in the current kernels/ sources by their
text, so an edit of a .cu file moves the expectation with it.

Skipped without a GPU (conftest), ncu or nvcc; scripts/test-gpu source runs this file.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import run_cli

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not shutil.which("ncu") or not shutil.which("nvcc"), reason="needs ncu and nvcc on PATH"),
]

KERNELS = Path(__file__).resolve().parent.parent / "kernels"

# case, finding, file, the text of the line that causes it (after the kernel's signature, if given)
CASES = [
    ("transpose/naive", "uncoalesced_global_stores", "transpose.cu", "transpose_naive(", "out[static_cast<size_t>(c) * rows + r]"),
    ("transpose/shared_tile", "shared_bank_conflicts", "transpose.cu", None, "tile[threadIdx.x][threadIdx.y + j]"),
    ("smem_banks/strided", "shared_bank_conflicts", "smem_banks.cu", None, "acc += row["),
    ("spill/spill", "local_memory_spill", "spill.cu", None, "st[k] = fmaf("),
    ("divergence/per_lane", "warp_divergence", "divergence.cu", None, "switch (sel)"),
    ("vecadd/strided", "uncoalesced_global_stores", "vecadd.cu", "vecadd_strided(", "c[j] = a[j] + b[j]"),
]


def line_of(file: str, after: str | None, text: str) -> int:
    lines = (KERNELS / file).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if after in line) if after else 0
    return next(i for i in range(start, len(lines)) if text in lines[i]) + 1


@pytest.mark.parametrize("case, finding, file, after, text", CASES, ids=[c[0] for c in CASES])
def test_profile_names_the_line(case, finding, file, after, text, tmp_path, capsys):
    code, out, err = run_cli(capsys, "profile", case, "-o", tmp_path / "run", "-f", "json", "--no-bench")  # lines, not the stop line
    assert code == 0, err
    kernel = json.loads(out)["kernels"][0]
    assert kernel["source_counters"]["by"] == "line"
    found = next(f for f in kernel["findings"] if f["id"] == finding)
    top = found["where"]["lines"][0]
    assert (Path(top["file"]).name, top["line"]) == (file, line_of(file, after, text))
    assert text in top["text"] and top["share"] >= 0.5
