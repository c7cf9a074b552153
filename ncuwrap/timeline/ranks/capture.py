"""Capture one nsys report per rank of a ``torchrun`` launch: ``ncuwrap timeline --per-rank -- torchrun ...``.

nsys profiling the launcher (``nsys profile torchrun ...``) writes one report holding every rank's
process; a report per rank needs nsys inside each rank. torchrun runs a non-Python program per rank
with ``--no-python``, and sets ``RANK`` for it, which nsys expands in its output name (``%q{RANK}``)::

    torchrun --nproc-per-node 2 train.py --lr 0.1
    ->
    torchrun --nproc-per-node 2 --no-python nsys profile --trace=cuda,nvtx,osrt --sample=none
             --cpuctxsw=none -o RUN/rank%q{RANK} --force-overwrite true -- python3 train.py --lr 0.1

The command line is tested here exactly (tests/test_ranks_capture.py). On an NVIDIA H200 x2, ``ncuwrap timeline
--per-rank --workers 0 -o DIR -- torchrun --standalone --nproc-per-node 2 workloads/ranks/ddp_step.py --steps 8
--slow-rank 1 --slow-ms 20`` wrote DIR/rank0 and rank1 (.nsys-rep, .sqlite) and named rank 1 the straggler, as
the captures made by hand (workloads/ranks/capture_ranks.sh); docs/ranks.md ("The real capture") says when and
with which torch, NCCL and nsys, and tests/data/h200_ncuwrap/ranks/per_rank_cli.log is its log (which names the
program where it stood then, benchmarks/device/). Slurm needs no rewriting:
``srun nsys profile -o RUN/rank%q{SLURM_PROCID} python3 train.py`` (docs/ranks.md).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from ncuwrap.core.errors import InputError
from ncuwrap.timeline import nsysrep

# torchrun's options that take no value (torch/distributed/run.py); every other option takes one,
# as the next argument unless written --opt=value.
TORCHRUN_FLAGS = frozenset({"--standalone", "--no-python", "--no_python", "--run-path", "--run_path", "--virtual-local-rank",
                            "--virtual_local_rank"})
MODULE_FLAGS = frozenset({"-m", "--module"})
RANK_STEM = "rank%q{RANK}"


def is_torchrun(program: list[str]) -> bool:
    return bool(program) and Path(program[0]).name == "torchrun"


def per_rank_argv(program: list[str], nsys: str, run_dir: Path, python: str = "python3",
                  options: nsysrep.NsysOptions | None = None) -> list[str]:
    """``program`` (a torchrun command line) rewritten so each rank runs under its own ``nsys profile``
    (with ``options``: --nsys-trace, --nsys-arg), writing ``run_dir/rank<RANK>.nsys-rep``."""
    if not is_torchrun(program):
        raise InputError(f"{program[0] if program else '(nothing)'}: --per-rank rewrites a torchrun command line; for another "
                         "launcher put nsys inside it yourself (srun nsys profile -o DIR/rank%q{SLURM_PROCID} ..., see "
                         "docs/ranks.md) and run 'ncuwrap timeline --ranks DIR'")
    launcher, args = [program[0]], program[1:]
    module = no_python = False
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg in MODULE_FLAGS:
            module = True
        elif arg in ("--no-python", "--no_python"):
            no_python = True
        elif arg in TORCHRUN_FLAGS or "=" in arg:
            launcher.append(arg)
        else:
            if i + 1 >= len(args):
                raise InputError(f"{arg}: a torchrun option without its value; check the command line")
            launcher += [arg, args[i + 1]]
            i += 1
        i += 1
    if i >= len(args):
        raise InputError(f"{shlex.join(program)}: no training script after torchrun's options; "
                         "give it as in 'torchrun --nproc-per-node 2 train.py'")
    if module and no_python:
        raise InputError("torchrun: -m/--module and --no-python cannot be used together; drop one of them")
    script = args[i:]
    rank_program = script if no_python else [python, *(["-m"] if module else []), *script]
    return [*launcher, "--no-python", *nsysrep.profile_argv(nsys, run_dir / RANK_STEM, rank_program, options)]


def export_ranks(run_dir: Path, nsys: str) -> list[Path]:
    """Export every ``rank*.nsys-rep`` of ``run_dir`` to SQLite next to it; the files written."""
    reports = sorted(run_dir.glob("rank*.nsys-rep"))
    if not reports:
        raise InputError(f"{run_dir}: no rank*.nsys-rep after the run; check the log (did torchrun start nsys in each rank?)")
    return [nsysrep.export_sqlite(r, r.with_suffix(".sqlite"), nsys=nsys) for r in reports]


def capture_ranks(program: list[str], run_dir: Path, *, nsys: str | Path | None = None, force: bool = False, started=None,
                  python: str | None = None, options: nsysrep.NsysOptions | None = None) -> Path:
    """Run ``program`` (torchrun) with nsys inside each rank, export every rank's report to SQLite in
    ``run_dir`` and return the folder (for :func:`ncuwrap.timeline.ranks.diagnosis.diagnose_ranks`)."""
    import sys

    from ncuwrap.core import fileio
    from ncuwrap.core.errors import OutputExistsError, ProfilerError

    exe = nsysrep.find_nsys(nsys)
    argv = per_rank_argv(program, exe, run_dir, python=python or sys.executable, options=options)
    if run_dir.exists() and not run_dir.is_dir():
        raise OutputExistsError(f"{run_dir}: exists and is not a folder; choose another -o RUN_DIR")
    if run_dir.is_dir() and any(run_dir.iterdir()):
        if not force:
            raise OutputExistsError(f"{run_dir}: run folder exists and is not empty; choose another -o RUN_DIR or pass --force")
        for stale in [*run_dir.glob("rank*.nsys-rep"), *run_dir.glob("rank*.sqlite"), *run_dir.glob("rank*.qdstrm")]:
            stale.unlink()
    run_dir.mkdir(parents=True, exist_ok=True)
    log = run_dir / "ranks.log"
    fileio.write_atomic(log, f"$ {shlex.join(argv)}\n")
    if started is not None:
        started(argv)
    done = nsysrep.run_profile(argv, log)
    if done.interrupted:
        raise KeyboardInterrupt
    if done.returncode != 0:
        raise ProfilerError(f"{program[0]}: the launch failed under nsys with exit code {done.returncode}; full output in {log}")
    export_ranks(run_dir, exe)
    return run_dir
