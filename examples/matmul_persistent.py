# Persistent matmul: launch one program per SM and let each walk over output tiles with a stride
# of NUM_SMS. The tile loop and the K loop are flattened into one pipeline (flatten=True).
import triton
import triton.language as tl


@triton.jit
def tile_coords(tile_id, blocks_m, blocks_n, GROUP_M: tl.constexpr):
    per_group = GROUP_M * blocks_n
    group = tile_id // per_group
    first_m = group * GROUP_M
    rows_in_group = min(blocks_m - first_m, GROUP_M)
    pid_m = first_m + (tile_id % per_group) % rows_in_group
    pid_n = (tile_id % per_group) // rows_in_group
    return pid_m, pid_n


@triton.jit
def matmul_persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                             GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
    first_tile = tl.program_id(0)
    blocks_m = tl.cdiv(M, BLOCK_M)
    blocks_n = tl.cdiv(N, BLOCK_N)
    k_steps = tl.cdiv(K, BLOCK_K)
    num_tiles = blocks_m * blocks_n
    offs_k = tl.arange(0, BLOCK_K)
    for tile_id in tl.range(first_tile, num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = tile_coords(tile_id, blocks_m, blocks_n, GROUP_M)
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ks in range(k_steps):
            kk = ks * BLOCK_K + offs_k
            a = tl.load(a_ptr + offs_m[:, None] * K + kk[None, :],
                        mask=(offs_m[:, None] < M) & (kk[None, :] < K), other=0.0)
            b = tl.load(b_ptr + kk[:, None] * N + offs_n[None, :],
                        mask=(kk[:, None] < K) & (offs_n[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)
        out = c_ptr + offs_m[:, None] * N + offs_n[None, :]
        tl.store(out, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
