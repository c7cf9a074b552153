"""The bundled CUDA benchmarks (import the submodules; nothing is re-exported, so ``build`` the
module is never shadowed by ``build`` the function): manifest, build (nvcc, cached), run and baseline report.

* :mod:`~ncuwrap.bundled.manifest` - ``kernels/manifest.yaml`` as typed records
* :mod:`~ncuwrap.bundled.formula` - size formulas (bytes, FLOPs): ncuwrap.core.expr's formula mode
* :mod:`~ncuwrap.bundled.build` - nvcc command line, arch detection, build cache
* :mod:`~ncuwrap.bundled.runner` - run a binary, read its JSON, timing statistics, is there a GPU
* :mod:`~ncuwrap.bundled.bench` - ``ncuwrap bench``: the report's numbers (ceiling, peaks, library)
* :mod:`~ncuwrap.bundled.report` - the ``ncuwrap.bench/v1`` report: typed records, written and read
* :mod:`~ncuwrap.bundled.peaks` - the GPU's spec peaks, from the report's environment record
* :mod:`~ncuwrap.bundled.library` - the library doing the same job (CuPy), timed beside a variant
* :mod:`~ncuwrap.bundled.stopline` - how far a profiled variant is from what the GPU can do
"""
