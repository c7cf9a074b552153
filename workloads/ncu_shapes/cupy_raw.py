"""A CuPy RawKernel (extern "C", compiled by NVRTC at run time: C linkage), for workloads/ncu_shapes/capture.sh:
launched twice, checked against CuPy's own arithmetic."""

import cupy as cp

SOURCE = r'''
extern "C" __global__ void cupy_axpy(const float a, const float* x, float* y, const int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
'''


def main() -> None:
    axpy = cp.RawKernel(SOURCE, "cupy_axpy")
    n = 1 << 22
    x = cp.arange(n, dtype=cp.float32)
    y = cp.ones(n, dtype=cp.float32)
    for _ in range(2):
        axpy(((n + 255) // 256,), (256,), (cp.float32(2.0), x, y, cp.int32(n)))
    cp.cuda.runtime.deviceSynchronize()
    assert bool(cp.allclose(y, 4 * x + 1))
    print("cupy RawKernel: ok")


if __name__ == "__main__":
    main()
