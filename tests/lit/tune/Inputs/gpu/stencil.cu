// A 1-D stencil written as Kernel Tuner kernels are: its tunable parameters are macros, defined when
// it is compiled (block_size_x, tile_size_x); here at the space's default.
#include <cuda_runtime.h>

__constant__ float weights[3];

__global__ void stencil(float* out, const float* __restrict__ in, int n) {
  __shared__ float tile[block_size_x * tile_size_x + 2];
  int base = blockIdx.x * block_size_x * tile_size_x;
#pragma unroll
  for (int t = 0; t < tile_size_x; t++) {
    int i = base + t * block_size_x + threadIdx.x;
    tile[t * block_size_x + threadIdx.x + 1] = i < n ? __ldg(in + i) : 0.0f;
  }
  __syncthreads();
#pragma unroll
  for (int t = 0; t < tile_size_x; t++) {
    int j = t * block_size_x + threadIdx.x + 1;
    int i = base + j - 1;
    if (i < n) out[i] = weights[0] * tile[j - 1] + weights[1] * tile[j] + weights[2] * expf(tile[j + 1]);
  }
}
