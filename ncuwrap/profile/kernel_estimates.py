"""A kernel report's verdicts as the estimates a timeline joins to its kernels (ncuwrap.timeline.kernel_join), for
the what-if's ``faster_kernel``, read from a report or run folder given to ``ncuwrap timeline CAPTURE --kernels
REPORT`` (``profile --top`` makes them of its own diagnosis: ncuwrap.profile.top.verdict_estimates).

Each launch ncu profiled gives its names, its launch configuration and its verdict's estimated gain (every
finding of it fixed together: ncuwrap.kernel.estimate); a run folder of ``profile --top`` also gives each
launch's mangled name (report.mangled.csv), which tells template instances apart as nsys does.
"""

from __future__ import annotations

from pathlib import Path

from ncuwrap.core.errors import InputError
from ncuwrap.profile.top import verdict_estimates
from ncuwrap.timeline.kernel_join import DiagnosedKernels

FIX = "give an Nsight Compute report (.ncu-rep, an ncu CSV export) or a run folder of 'ncuwrap profile'"


def read(path: str | Path, kind_of, *, ncu: str | None = None) -> DiagnosedKernels:
    """The estimates of a report's launches (a .ncu-rep, an ncu CSV export) or of a run folder's (its mangled names
    with them, where ``profile --top`` exported them); InputError for anything else. ``kind_of``: what kind of input
    a file is (ncuwrap.inputs.kind_of, handed in by the caller: that wing stands above this one)."""
    from ncuwrap.profile import top
    from ncuwrap.profile.rediagnose import diagnose_run_dir, is_run_dir

    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: --kernels: no such file or folder; {FIX}")
    if is_run_dir(path):
        ids = path / top.MANGLED_IDS
        mangled = top.read_mangled(ids.read_text(encoding="utf-8", errors="replace")) if ids.is_file() else {}
        return verdict_estimates(diagnose_run_dir(path, ncu=ncu), mangled, str(path))
    if path.is_dir():
        raise InputError(f"{path}: --kernels: a folder, but not a run folder of 'ncuwrap profile' (no profile.json); {FIX}")
    kind = kind_of(path)
    if kind == "timeline":
        raise InputError(f"{path}: --kernels: a timeline, not a kernel report; {FIX}")
    if kind == "document":
        raise InputError(f"{path}: --kernels: a diagnosis document, whose estimates are those of the ncuwrap that wrote it; "
                         f"{FIX} (the one the document was made from)")
    from ncuwrap.kernel.diagnosis import diagnose

    return verdict_estimates(diagnose(path, ncu=ncu), None, str(path))
