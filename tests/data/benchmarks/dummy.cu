// placeholder source for the invalid-manifest fixtures
__global__ void k_ok() {}
