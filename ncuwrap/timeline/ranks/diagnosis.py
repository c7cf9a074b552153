"""A multi-GPU run from one nsys capture per rank: read and analyse the captures in parallel on Dask,
compare the ranks, apply the rank rules (rules/ranks.yaml), and give the verdict (its type and JSON form:
:mod:`ncuwrap.timeline.ranks.verdict`).

>>> from ncuwrap.timeline.ranks.diagnosis import diagnose_ranks
>>> result = diagnose_ranks("captures/")              # rank0.sqlite, rank1.sqlite, ...
>>> result.bound, result.set.metrics["straggler_rank"]

Parallelism: each capture is read and analysed by one task (:func:`ncuwrap.timeline.ranks.analysis.analyze_file`)
on a dask.distributed cluster: a LocalCluster of worker processes (one thread each: the analysis holds
the GIL) when the captures are large enough for it to pay on this machine's cores (:func:`choose_workers`;
the output says which and why), or the cluster at ``scheduler`` (its workers must see the files at the
same paths). ``workers=0`` analyses the captures one after the other in this process, without Dask;
``workers=N`` forces a LocalCluster of N.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import statistics
import tempfile
import threading
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

from ncuwrap.core.errors import ClusterError, InputError, NcuwrapError
from ncuwrap.core.rules_choice import RulesChoice
from ncuwrap.timeline.options import TimelineOptions
from ncuwrap.timeline.ranks.analysis import analyze_file, compare
from ncuwrap.timeline.ranks.files import find
from ncuwrap.timeline.ranks.verdict import RanksDiagnosis

# Captures of one run start within seconds of each other (the launcher starts every rank); more than
# this apart, they are from different runs.
MAX_START_SPREAD_NS = 10 * 60 * 1_000_000_000


def check_same_run(ranks) -> None:
    """Refuse a set of captures from different runs: different programs, or started far apart."""
    first = ranks[0]
    for r in ranks[1:]:
        if first.command and r.command and r.command != first.command:
            raise InputError(f"{r.path}: a capture of '{r.command}' while {first.path} (rank {first.rank}) captured "
                             f"'{first.command}': the folder mixes runs; keep only the captures of one run")
    starts = [(r.start_utc_ns, r) for r in ranks if r.start_utc_ns is not None]
    if len(starts) > 1:
        median = statistics.median_low([s for s, _ in starts])
        far, r = max(starts, key=lambda item: abs(item[0] - median))
        if abs(far - median) > MAX_START_SPREAD_NS:
            minutes = abs(far - median) / 60e9
            raise InputError(f"{r.path}: captured {minutes:,.0f} minutes {'after' if far > median else 'before'} the other ranks "
                             f"(more than {MAX_START_SPREAD_NS // 60_000_000_000} minutes apart): the folder mixes runs; "
                             "keep only the captures of one run")


@dataclass(frozen=True)
class _Failed:
    error: NcuwrapError


def _analyze_caught(*args):
    """:func:`analyze_file` on a worker: ncuwrap's own errors returned, not raised (see analyse)."""
    try:
        return analyze_file(*args)
    except NcuwrapError as exc:
        return _Failed(exc)


# When a local Dask cluster pays (benchmarks/ranks_scale.py; the figures: docs/scale.md, figures behind the
# code): this process analyses ~32 MiB of capture a second (a gzipped one counts 4x its size: what it unpacks
# to), and a LocalCluster costs ~5 s to start, its workers importing pandas and ncuwrap. The cluster starts
# when spreading the analysis over its workers saves more than its start.
ANALYSIS_BYTES_PER_S = 32 << 20
CLUSTER_START_S = 5.0


def choose_workers(paths, cores: int | None) -> tuple[int, str]:
    """How many local worker processes to analyse ``paths`` on (0: this process), and why, in words."""
    size = sum(p.stat().st_size * (4 if p.name.lower().endswith(".gz") else 1) for p in paths)
    serial_s = size / ANALYSIS_BYTES_PER_S
    n = max(1, min(len(paths), cores or 1))
    what = f"{len(paths)} capture{'s' if len(paths) != 1 else ''}, ~{size / 2**20:,.0f} MiB to read"
    if n > 1 and serial_s * (1 - 1 / n) > CLUSTER_START_S:
        return n, f"{what}: {n} workers save more than the cluster's start"
    return 0, f"{what}: too little for a cluster to pay on {cores or 1} core{'s' if (cores or 1) != 1 else ''}; --workers N starts one"


def analyse(tasks: list[tuple], scheduler: str | None = None, workers: int | None = None, why: str = "") -> tuple[list, str]:
    """Run :func:`analyze_file` over ``tasks`` (argument tuples); return the results in order and how
    they were run. Errors raised by a task (InputError naming its file) come back as they were raised."""
    if workers == 0 and scheduler is None:
        return [analyze_file(*t) for t in tasks], f"this process (no Dask{': ' + why if why else ''})"
    with _interrupts_polled() as interrupted:
        return _on_dask(tasks, scheduler, workers, why, interrupted)


def _on_dask(tasks: list[tuple], scheduler: str | None, workers: int | None, why: str, interrupted) -> tuple[list, str]:
    try:
        import dask
        from distributed import Client, LocalCluster, wait
    except ImportError:  # pragma: no cover - a dependency of ncuwrap
        raise ClusterError("dask.distributed: not installed; pip install 'dask[distributed]' (or pass --workers 0)") from None
    cluster = scratch = None
    try:
        if scheduler is not None:
            try:
                client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError, ValueError) as exc:
                raise ClusterError(f"{scheduler}: cannot reach a Dask scheduler ({type(exc).__name__}: {exc}); start one "
                                   "('dask scheduler' and 'dask worker ADDRESS'), or leave --scheduler out for a local cluster") from None
            how = f"Dask scheduler {scheduler}"
        else:
            n = workers or max(1, min(len(tasks), os.cpu_count() or 1))
            # The workers' scratch space and lock files in a folder of this run's own, removed on every way
            # out (Dask's default, $TMPDIR/dask-scratch-space, stayed behind, its lock files too).
            scratch = tempfile.mkdtemp(prefix="ncuwrap-dask-")
            with dask.config.set({"temporary-directory": scratch}), warnings.catch_warnings():
                # Its HTTP server moves to a free port when 8787 is taken (another cluster on the machine): said on stderr.
                warnings.filterwarnings("ignore", message="Port .* is already in use")
                cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=logging.CRITICAL, local_directory=scratch)
            client = Client(cluster)
            how = f"Dask LocalCluster, {n} worker process{'es' if n > 1 else ''}{' (' + why + ')' if why else ''}"
        try:
            futures = client.map(_analyze_caught, *zip(*tasks), pure=False)
            while not interrupted():
                try:
                    wait(futures, timeout=0.2)
                    break
                except TimeoutError:
                    pass
            results = client.gather(futures)
        finally:
            client.close()
        # A task's own error comes back as a value: a raised one is logged by the worker, with its
        # traceback, on the user's terminal before the one line the CLI prints.
        error = next((r for r in results if isinstance(r, _Failed)), None)
        if error is not None:
            raise error.error
        return results, how
    finally:
        try:
            if cluster is not None:
                cluster.close()
        finally:
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)


@contextlib.contextmanager
def _interrupts_polled():
    """SIGINT blocked while Dask runs, and polled (the context's value raises KeyboardInterrupt once one
    came). Dask's threads and worker processes, started inside, inherit the block, so a Ctrl-C at the
    terminal reaches none of them (each printed its traceback: 126 lines, with an atexit error) and ends
    in the CLI's one line, exit 130, once the cluster and its folder are gone. multiprocessing's resource
    tracker is started first: starting it unblocks SIGINT in the thread that does."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()

    def interrupted() -> bool:
        if signal.sigtimedwait({signal.SIGINT}, 0) is not None:
            raise KeyboardInterrupt
        return False

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield interrupted
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # one that came meanwhile is raised here


def diagnose_ranks(folder: str | Path, *, rules: RulesChoice = RulesChoice(), timeline: TimelineOptions = TimelineOptions(),
                   scheduler: str | None = None, workers: int | None = None, allow_mixed: bool = False) -> RanksDiagnosis:
    """Diagnose the rank captures in ``folder`` (naming rule: ncuwrap.timeline.ranks.files) with ``rules``
    (default: the bundled rank rules), each rank's steps found as ``timeline`` says. Captures of different
    programs or started far apart are refused unless ``allow_mixed``. ``timeline.warmup``: leading steps
    left out of every rank's window (None: detected per rank, ncuwrap.timeline.steps)."""
    from ncuwrap.timeline.ranks.metrics import RANKS
    from ncuwrap.ruleset.evaluate import Evaluation
    from ncuwrap.timeline.values import CaptureValues

    from ncuwrap import ruleset

    rule_set = ruleset.chosen(rules, RANKS)
    files = find(folder)
    warmup = timeline.warmup

    def task(f, warm):
        return (f.rank, str(f.path), replace(timeline, warmup=warm))

    why = ""
    if workers is None and scheduler is None:  # chosen by the captures' size and the cores; --workers N forces
        workers, why = choose_workers([f.path for f in files.files], os.cpu_count())
    results, how = analyse([task(f, warmup) for f in files.files], scheduler=scheduler, workers=workers, why=why)
    # One warm-up for every rank: the ranks run the same iterations, and windows of different steps
    # would not compare. Ranks that detected fewer warm-up steps than the most of any are analysed again.
    detected = [r.steps.warmup for r in results if r.steps is not None]
    if warmup is None and detected and len(set(detected)) > 1:
        most = max(detected)
        again = [i for i, r in enumerate(results) if r.steps is not None and r.steps.warmup != most and r.steps.all_count > most]
        redone, _ = analyse([task(files.files[i], most) for i in again], scheduler=scheduler, workers=workers)
        for i, r in zip(again, redone):
            results[i] = r
    if not allow_mixed:
        check_same_run(results)
    rank_set = compare(results, files.naming)
    decision = Evaluation(CaptureValues(rank_set.metrics, rank_set.unknown, names=RANKS), rule_set).decide(0)
    notes = []
    if not files.by_name:
        notes.append(f"{files.naming}: " + ", ".join(f"rank {f.rank} = {f.path.name}" for f in files.files))
    if files.skipped:
        notes.append(f"skipped, not regular files: {', '.join(files.skipped[:5])}{'...' if len(files.skipped) > 5 else ''}")
    gpus = sorted({r.device for r in results if r.device})
    if len(gpus) > 1:
        on = "; ".join(f"{g}: rank{'s' if len(rs) > 1 else ''} {', '.join(map(str, rs[:8]))}{'...' if len(rs) > 8 else ''}"
                       for g in gpus for rs in [[r.rank for r in sorted(results, key=lambda r: r.rank) if r.device == g]])
        notes.append(f"ranks on different GPUs ({on}): a rank's times reflect its GPU as well as its work")
    hosts = sorted({r.hostname for r in results if r.hostname})
    if len(hosts) > 1:
        notes.append(f"{len(hosts)} hosts: {', '.join(hosts)}")
    if allow_mixed:
        notes.append("mixed runs allowed (--allow-mixed): the captures were not checked to be of one run")
    in_steps = [r for r in results if r.window_scope == "steps"]
    if in_steps:
        left = ", ".join(f"rank {r.rank}: {_seconds(r.window_ns)} of {_seconds(r.capture_ns)}, {r.steps.warmup} warm-up step"
                         f"{'s' if r.steps.warmup != 1 else ''} left out" for r in sorted(in_steps, key=lambda r: r.rank)[:4])
        notes.append(f"windows are the steady steps ('{in_steps[0].steps.name}', after the warm-up), not the whole capture: start-up, "
                     f"warm-up and teardown left out ({left}{'...' if len(in_steps) > 4 else ''}); warm-up: "
                     f"{in_steps[0].steps.warmup_why}")
    if not rank_set.metrics["nccl_kernel_count"]:
        notes.append("no NCCL kernel in any capture: communication cannot be measured (single-GPU captures, or NCCL not traced)")
    return RanksDiagnosis(
        folder=str(folder), naming=files.naming, rules_path=rule_set.path, rules_version=rule_set.version, rules_name=rule_set.name,
        set=rank_set, decision=decision, workers=how, notes=tuple(notes),
    )


def _seconds(ns: int) -> str:
    return f"{ns / 1e9:.2f} s" if ns >= 1e9 else f"{ns / 1e6:.1f} ms"
