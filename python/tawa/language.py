"""What a kernel module needs from ``triton.language`` when it is imported without Triton.

A kernel written for tawa imports ``tawa`` and ``tawa.language as tl`` instead of Triton; its body is
never run by Python (tawa's front end reads the source), so only the names evaluated when the
``def`` statement runs are needed here: ``tl.constexpr`` (annotations, module-level constants) and
the dtypes (default values, constexpr arguments such as ``OUT_DTYPE=tl.float16``).
"""


class constexpr:  # noqa: N801 - Triton's spelling
    """Marks a parameter as a compile-time constant, or wraps a module-level constant."""

    def __init__(self, value=None):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self):
        return f"constexpr[{self.value!r}]"


class dtype:  # noqa: N801 - Triton's spelling
    """A scalar type; ``name`` is Triton's short name (fp16, bf16, fp32, i32, ...)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, dtype) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


float8e4nv = dtype("fp8e4nv")
float8e5 = dtype("fp8e5")
float16 = dtype("fp16")
bfloat16 = dtype("bf16")
float32 = dtype("fp32")
float64 = dtype("fp64")
int1 = dtype("i1")
int8 = dtype("i8")
int16 = dtype("i16")
int32 = dtype("i32")
int64 = dtype("i64")
uint8 = dtype("u8")
uint16 = dtype("u16")
uint32 = dtype("u32")
uint64 = dtype("u64")
