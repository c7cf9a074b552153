"""The bundled CUDA benchmarks (import the submodules; nothing is re-exported, so ``build`` the
module is never shadowed by ``build`` the function): manifest, build (nvcc, cached), run and baseline report.

* :mod:`~ncuwrap.benchmarks.manifest` - ``kernels/manifest.yaml`` as typed records
* :mod:`~ncuwrap.benchmarks.formula` - safe size formulas (bytes, FLOPs)
* :mod:`~ncuwrap.benchmarks.build` - nvcc command line, arch detection, build cache
* :mod:`~ncuwrap.benchmarks.runner` - run a binary, read its JSON, timing statistics
* :mod:`~ncuwrap.benchmarks.bench` - the ``ncuwrap.bench/v1`` report (ceiling, peaks, library)
"""
