"""``ncuwrap timeline --per-rank -- torchrun ...``: the command line that puts nsys inside each rank.
Tested exactly, without a GPU; run once on an NVIDIA H200 x2 (see ncuwrap/timeline/ranks/capture.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ncuwrap.errors import InputError
from ncuwrap.timeline.ranks.capture import per_rank_argv

NSYS = ["nsys", "profile", "--trace=cuda,nvtx,osrt", "--sample=none", "--cpuctxsw=none", "--cuda-graph-trace=node", "-o", "run/rank%q{RANK}",
        "--force-overwrite", "true", "--"]


@pytest.mark.parametrize("program, launcher, rank_program", [
    (["torchrun", "--nproc-per-node", "2", "train.py", "--lr", "0.1"], ["torchrun", "--nproc-per-node", "2"], ["python3", "train.py", "--lr", "0.1"]),
    (["/usr/bin/torchrun", "--standalone", "--nproc_per_node=2", "-m", "pkg.train", "-x"], ["/usr/bin/torchrun", "--standalone", "--nproc_per_node=2"],
     ["python3", "-m", "pkg.train", "-x"]),
    (["torchrun", "--nnodes", "1", "--no-python", "./train_bin", "--steps", "3"], ["torchrun", "--nnodes", "1"], ["./train_bin", "--steps", "3"]),
    (["torchrun", "--rdzv-endpoint", "h:29500", "--max-restarts=0", "train.py"], ["torchrun", "--rdzv-endpoint", "h:29500", "--max-restarts=0"],
     ["python3", "train.py"]),
])
def test_per_rank_argv(program, launcher, rank_program):
    assert per_rank_argv(program, "nsys", Path("run"), python="python3") == [*launcher, "--no-python", *NSYS, *rank_program]


@pytest.mark.parametrize("program, message", [
    (["srun", "python3", "train.py"], "srun: --per-rank rewrites a torchrun command line"),
    (["torchrun", "--nproc-per-node", "2"], "torchrun --nproc-per-node 2: no training script after torchrun's options"),
    (["torchrun", "--nproc-per-node"], "--nproc-per-node: a torchrun option without its value"),
    (["torchrun", "-m", "--no-python", "x"], "torchrun: -m/--module and --no-python cannot be used together"),
])
def test_per_rank_argv_refusals(program, message):
    with pytest.raises(InputError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        per_rank_argv(program, "nsys", Path("run"))


def test_per_rank_argv_passes_the_nsys_options_on():
    from ncuwrap.timeline.nsysrep import NsysOptions

    options = NsysOptions(trace="cuda,nvtx", extra=("--stats=false",))
    assert per_rank_argv(["torchrun", "--nproc-per-node", "2", "train.py"], "nsys", Path("run"), python="python3", options=options) == [
        "torchrun", "--nproc-per-node", "2", "--no-python", "nsys", "profile", "--trace=cuda,nvtx", "--sample=none", "--cpuctxsw=none",
        "--cuda-graph-trace=node", "-o", "run/rank%q{RANK}", "--force-overwrite", "true", "--stats=false", "--", "python3", "train.py"]
