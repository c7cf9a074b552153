"""The bundled CUDA benchmarks (import the submodules; nothing is re-exported, so ``build`` the
module is never shadowed by ``build`` the function): manifest, build (nvcc, cached), run and baseline report.

* :mod:`~ncuwrap.benchmarks.manifest` - ``kernels/manifest.yaml`` as typed records
* :mod:`~ncuwrap.benchmarks.formula` - size formulas (bytes, FLOPs): ncuwrap.expr's formula mode
* :mod:`~ncuwrap.benchmarks.build` - nvcc command line, arch detection, build cache
* :mod:`~ncuwrap.benchmarks.runner` - run a binary, read its JSON, timing statistics, is there a GPU
* :mod:`~ncuwrap.benchmarks.bench` - ``ncuwrap bench``: the report's numbers (ceiling, peaks, library)
* :mod:`~ncuwrap.benchmarks.report` - the ``ncuwrap.bench/v1`` report: typed records, written and read
"""
