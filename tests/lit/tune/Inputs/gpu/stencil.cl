// The same stencil in OpenCL.
__kernel void stencil(__global float* out, __global const float* in, __constant float* weights, int n) {
  __local float tile[block_size_x * tile_size_x + 2];
  int base = get_group_id(0) * block_size_x * tile_size_x;
  for (int t = 0; t < tile_size_x; t++) {
    int i = base + t * block_size_x + get_local_id(0);
    tile[t * block_size_x + get_local_id(0) + 1] = i < n ? in[i] : 0.0f;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int t = 0; t < tile_size_x; t++) {
    int j = t * block_size_x + get_local_id(0) + 1;
    int i = base + j - 1;
    if (i < n) out[i] = weights[0] * tile[j - 1] + weights[1] * tile[j] + weights[2] * exp(tile[j + 1]);
  }
}
