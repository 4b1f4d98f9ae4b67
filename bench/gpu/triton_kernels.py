"""The Triton 3.6 kernels tawa is compared with (GEMM and attention forward), a CUDA-event timer,
and their correctness checks against torch. Imported by bench.py on the GPU machine only."""
import torch
import triton
import triton.language as tl


def time_ms(fn, reps=20, warmup=3):
    """Median milliseconds of `reps` calls, each between two CUDA events, after `warmup` calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    ms = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    mid = len(ms) // 2
    return ms[mid] if len(ms) % 2 else 0.5 * (ms[mid - 1] + ms[mid])


# ---- GEMM: C[M,N] = A[M,K] @ B[K,N], f32 accumulation, fp16 output; tiles visited in groups of
# GROUP_M rows so that neighbouring programs share B tiles in L2.
@triton.jit
def _gemm(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    per_group = GROUP_M * tiles_n
    group = pid // per_group
    first_m = group * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    tm = first_m + (pid % per_group) % rows_in_group
    tn = (pid % per_group) // rows_in_group
    rm = tm * BM + tl.arange(0, BM)
    rn = tn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_tile = a_ptr + rm[:, None] * s_am + rk[None, :] * s_ak
    b_tile = b_ptr + rk[:, None] * s_bk + rn[None, :] * s_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a_tile, mask=(rm[:, None] < M) & (rk[None, :] + k0 < K), other=0.0)
        y = tl.load(b_tile, mask=(rk[:, None] + k0 < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
        a_tile += BK * s_ak
        b_tile += BK * s_bk
    c = c_ptr + rm[:, None] * s_cm + rn[None, :] * s_cn
    tl.store(c, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


_GEMM_CONFIGS = {
    2: [(128, 256, 64, 8, 3), (128, 128, 64, 4, 4), (128, 256, 64, 8, 4)],  # fp16: BM, BN, BK, warps, stages
    1: [(128, 256, 128, 8, 3), (128, 128, 128, 4, 4), (128, 256, 128, 8, 4)],  # fp8
}
_best_gemm = {}


def triton_matmul_fn(a, b):
    """A closure launching the Triton GEMM on (a, b) with the fastest of a few configurations (chosen once
    per shape and dtype by timing), writing a fresh fp16 output."""
    M, K = a.shape
    _, N = b.shape
    c = torch.empty(M, N, device=a.device, dtype=torch.float16)

    def launcher(cfg):
        bm, bn, bk, warps, stages = cfg
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)

        def go():
            _gemm[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                        BM=bm, BN=bn, BK=bk, GROUP_M=8, num_warps=warps, num_stages=stages)
        return go

    key = (M, N, K, a.dtype, b.stride())
    if key not in _best_gemm:
        timed = []
        for cfg in _GEMM_CONFIGS[a.element_size()]:
            try:
                timed.append((time_ms(launcher(cfg), reps=5, warmup=1), cfg))
            except Exception as e:  # a configuration that does not fit (shared memory) is skipped
                print(f"  triton gemm config {cfg} skipped: {type(e).__name__}: {str(e)[:200]}")
        if not timed:
            raise RuntimeError("no Triton GEMM configuration compiled")
        _best_gemm[key] = min(timed)[1]
    return launcher(_best_gemm[key])


# ---- attention forward (FlashAttention-2 style): each program owns BLOCK_M query rows of one
# (batch, head), walks the keys in BLOCK_N blocks with an online softmax in base 2, and for a
# causal mask does the blocks left of the diagonal unmasked and the diagonal block masked.
@triton.jit
def _attn_blocks(acc, l_i, m_i, q, k_base, v_base, s_n, offs_m, offs_d, lo, hi, qk_scale,
                 BLOCK_N: tl.constexpr, MASKED: tl.constexpr):
    for start in range(lo, hi, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        kt = tl.load(k_base + offs_n[None, :] * s_n + offs_d[:, None])
        s = tl.dot(q, kt) * qk_scale
        if MASKED:
            s = tl.where(offs_m[:, None] >= offs_n[None, :], s, -1.0e6)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_base + offs_n[:, None] * s_n + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(Q, K, V, O, sm_scale, s_z, s_h, s_n, H, N_CTX,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    zh = tl.program_id(1)
    base = (zh // H) * s_z + (zh % H) * s_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * s_n + offs_d[None, :])
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # log2(e)
    if CAUSAL:
        acc, l_i, m_i = _attn_blocks(acc, l_i, m_i, q, K + base, V + base, s_n, offs_m, offs_d, 0, start_m * BLOCK_M,
                                     qk_scale, BLOCK_N, False)
        acc, l_i, m_i = _attn_blocks(acc, l_i, m_i, q, K + base, V + base, s_n, offs_m, offs_d, start_m * BLOCK_M,
                                     (start_m + 1) * BLOCK_M, qk_scale, BLOCK_N, True)
    else:
        acc, l_i, m_i = _attn_blocks(acc, l_i, m_i, q, K + base, V + base, s_n, offs_m, offs_d, 0, N_CTX, qk_scale,
                                     BLOCK_N, False)
    out = acc / l_i[:, None]
    tl.store(O + base + offs_m[:, None] * s_n + offs_d[None, :], out.to(tl.float16))


def triton_attention_fn(q, k, v, causal, block_m=128, block_n=64, warps=8, stages=3):
    """A closure running the Triton attention forward on contiguous (B, H, S, D) fp16 tensors."""
    B, H, S, D = q.shape
    assert q.is_contiguous() and k.is_contiguous() and v.is_contiguous() and S % block_m == 0
    o = torch.empty_like(q)
    grid = (S // block_m, B * H)

    def go():
        _attn_fwd[grid](q, k, v, o, D ** -0.5, q.stride(0), q.stride(1), q.stride(2), H, S,
                        HEAD_DIM=D, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal, num_warps=warps, num_stages=stages)
        return o
    return go


# ---- the same source: Triton 3.6 compiling tawa's own example kernels (examples/matmul_desc.py and
# examples/attention.py from the bundle), which make their TMA descriptors on the device and so need
# Triton's global-memory allocator.
_examples = {}


def _example(bundle, rel, name):
    import importlib.util
    key = (bundle, rel)
    if key not in _examples:
        spec = importlib.util.spec_from_file_location("example_" + rel.replace("/", "_")[:-3], f"{bundle}/{rel}")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _examples[key] = mod
        triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    return getattr(_examples[key], name)


_SAME_GEMM_CONFIGS = [(128, 256, 64, 8), (128, 128, 64, 8), (128, 128, 64, 4)]  # BLOCK_M, BLOCK_N, BLOCK_K, warps
_best_same_gemm = {}


def same_source_matmul_fn(bundle, a, b):
    """examples/matmul_desc.py compiled by Triton: a closure writing a fresh fp16 C (its 3-stage loop
    is set in the kernel), with the fastest of a few block shapes, chosen once per shape by timing."""
    kernel = _example(bundle, "examples/matmul_desc.py", "matmul_desc_kernel")
    M, K = a.shape
    _, N = b.shape
    c = torch.empty(M, N, device=a.device, dtype=torch.float16)

    def launcher(cfg):
        bm, bn, bk, warps = cfg
        grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))

        def go():
            kernel[grid](a, b, c, M, N, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps)
            return c
        return go

    key = (M, N, K)
    if key not in _best_same_gemm:
        timed = []
        for cfg in _SAME_GEMM_CONFIGS:
            try:
                timed.append((time_ms(launcher(cfg), reps=5, warmup=1), cfg))
            except Exception as e:
                print(f"  triton (examples/matmul_desc.py) config {cfg} skipped: {type(e).__name__}: {str(e)[:200]}")
        if not timed:
            raise RuntimeError("no configuration of examples/matmul_desc.py compiled with Triton")
        _best_same_gemm[key] = min(timed)[1]
    return launcher(_best_same_gemm[key])


def same_source_attention_fn(bundle, q, k, v, causal, warps=8, stages=2):
    """examples/attention.py compiled by Triton on contiguous (B, H, S, D) fp16 tensors (read as
    [B*H*S, D] rows, as the kernel describes them): 128-row blocks, 128 keys (64 when causal)."""
    kernel = _example(bundle, "examples/attention.py", "attn_fwd")
    B, H, S, D = q.shape
    block_m, block_n = 128, (64 if causal else 128)
    o = torch.empty_like(q)
    grid = (S // block_m, B * H)

    def go():
        kernel[grid](q, k, v, o, D ** -0.5, B, H, N_CTX=S, HEAD_DIM=D, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal,
                     num_warps=warps, num_stages=stages)
        return o
    return go


def check_same_source(log, bundle):
    """Triton running tawa's example kernels against torch at small sizes; returns whether it works
    (a failure is logged, and the same-source column then reads n/a: it is a second comparison)."""
    def rel(x, y):
        return ((x.double() - y.double()).norm() / y.double().norm()).item()
    try:
        a = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
        b = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
        e = rel(same_source_matmul_fn(bundle, a, b)(), a.double() @ b.double())
        if not e < 1e-2:
            raise RuntimeError(f"relative error {e:.3g} against torch")
        worst = 0.0
        for causal in (False, True):
            q, k, v = (torch.randn(1, 2, 1024, 128, device="cuda", dtype=torch.float16) for _ in range(3))
            want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
            worst = max(worst, rel(same_source_attention_fn(bundle, q, k, v, causal)(), want))
        if not worst < 1e-2:
            raise RuntimeError(f"attention: relative error {worst:.3g} against SDPA")
    except Exception as e:
        log(f"NOT RUN: Triton on tawa's example kernels (the same source): {type(e).__name__}: {str(e)[:500]}")
        return False
    log(f"ok: Triton runs examples/matmul_desc.py (rel err {e:.1e}) and examples/attention.py (rel err {worst:.1e}) "
        "at 1024, matching torch")
    return True


def check_triton(log, torch_mod=torch):
    """The comparison kernels against torch on fresh random data; a failure stops the benchmark."""
    def rel(x, y):
        return ((x.double() - y.double()).norm() / y.double().norm()).item()

    a = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    e = rel(_run_gemm(a, b), a.double() @ b.double())
    if not e < 1e-2:
        raise SystemExit(f"FAILED: Triton fp16 GEMM vs torch: relative error {e:.3g}")
    a8 = a.to(torch.float8_e4m3fn)
    b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()
    e8 = rel(_run_gemm(a8, b8), a8.double() @ b8.double())
    if not e8 < 2e-2:
        raise SystemExit(f"FAILED: Triton fp8 GEMM vs torch: relative error {e8:.3g}")
    for causal in (False, True):
        q, k, v = (torch.randn(1, 2, 1024, 128, device="cuda", dtype=torch.float16) for _ in range(3))
        want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
        got = triton_attention_fn(q, k, v, causal)()
        ea = rel(got, want)
        if not ea < 1e-2:
            raise SystemExit(f"FAILED: Triton attention (causal={causal}) vs SDPA: relative error {ea:.3g}")
    log(f"ok: Triton GEMM fp16 (rel err {e:.1e}), fp8 (rel err {e8:.1e}) and attention match torch at 1024")


def _run_gemm(a, b):
    fn = triton_matmul_fn(a, b)
    fn()
    torch.cuda.synchronize()
    # The closure writes into its own output; run once more to read it back through a fresh call.
    M, N = a.shape[0], b.shape[1]
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    bm, bn, bk, warps, stages = _best_gemm[(M, N, a.shape[1], a.dtype, b.stride())]
    _gemm[(triton.cdiv(M, bm) * triton.cdiv(N, bn),)](a, b, c, M, N, a.shape[1], a.stride(0), a.stride(1), b.stride(0),
                                                        b.stride(1), c.stride(0), c.stride(1), BM=bm, BN=bn, BK=bk,
                                                        GROUP_M=8, num_warps=warps, num_stages=stages)
    torch.cuda.synchronize()
    return c
