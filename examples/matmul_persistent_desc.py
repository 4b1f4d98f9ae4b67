# A persistent GEMM through tensor descriptors: a fixed grid of NUM_SMS programs walks the output
# tiles (tile_id = program, program + NUM_SMS, ...) in grouped order, so that tiles sharing rows of A
# run close together; each tile accumulates over K in f32 and is stored once.
import triton
import triton.language as tl


@triton.jit
def grouped_tile(tile_id, blocks_m, blocks_n, GROUP_M: tl.constexpr):
    tiles_per_group = GROUP_M * blocks_n
    group = tile_id // tiles_per_group
    first_m = group * GROUP_M
    group_rows = min(blocks_m - first_m, GROUP_M)
    pid_m = first_m + (tile_id % tiles_per_group) % group_rows
    pid_n = (tile_id % tiles_per_group) // group_rows
    return pid_m, pid_n


@triton.jit
def matmul_persistent_desc_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                                  GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    blocks_m = tl.cdiv(M, BLOCK_M)
    blocks_n = tl.cdiv(N, BLOCK_N)
    for tile_id in tl.range(tl.program_id(0), blocks_m * blocks_n, NUM_SMS, flatten=True):
        pid_m, pid_n = grouped_tile(tile_id, blocks_m, blocks_n, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            a = a_desc.load([pid_m * BLOCK_M, k])
            b = b_desc.load([k, pid_n * BLOCK_N])
            acc = tl.dot(a, b, acc)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))
