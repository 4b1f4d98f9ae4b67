# A project package that re-exports Triton, as vLLM's `vllm.triton_utils` does.
HAS_TRITON = True
if HAS_TRITON:
    import triton
    import triton.language as tl
else:
    triton = None
    tl = None
