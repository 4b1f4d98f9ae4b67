// Launch specs: the argument list of a kernel launch, in Triton's AOT signature grammar extended
// with names and buffer shapes, e.g.
//   a:*fp16[M,K], b:*fp16[K,N], M:i32=512, K:i32=512, BLOCK_M=64, num_warps=4
//   name:*dtype[dims]     a pointer to a fresh buffer of that shape; dims are integers or names of
//                         scalars/constexprs in the spec; an optional ":16" after the dtype is a
//                         divisibility hint (recorded, as Triton's AOT does)
//   name:tensordesc<dtype[block]>[dims]
//                         a host tensor descriptor (Triton's TensorDescriptor) with that block over a
//                         fresh row-major buffer of that shape: the kernel receives the descriptor
//                         ending in `in LO..HI` fills it with random values in [LO, HI) instead
//                         of the default ones (indices, labels: Y:*i32[B] in 0..V)
//   name:*dtype[dims] = values(v0, v1, ...)
//                         a buffer with these elements in row-major order (the dims may be left out:
//                         one dimension of as many values), e.g. sizes:*i32 = values(128, 64, 256)
//   name:*i64 = addresses(a, b, ...)
//                         an array of pointers (i64 or u64): the address of each named buffer, in each
//                         backend's own address space (Triton's grouped GEMM: `tl.load(ptrs + g)
//                         .to(tl.pointer_type(tl.float16))`); a buffer named here need not be a
//                         parameter of the kernel
//   name:dtype=value      a runtime scalar
//   NAME=VALUE            a constexpr: integer, float, True/False, a quoted string, None (Triton
//                         specializes a None argument so: `if bias is None`), or a dtype such as
//                         tl.float16; num_warps and num_stages are launch options
// A scalar's or constexpr's value may be taken from a buffer's shape: dim(a, 0) is a's first
// dimension, stride(a, 0) its stride in elements along it (buffers are fresh and row-major).
// Dtypes accept Triton's names (fp16, bf16, fp32, fp64, fp8e4nv, fp8e5, i1..i64) and the IR's
// (f16, bf16, f32, f64, f8e4m3, f8e5m2). Errors are UserErrors located at <spec>:1:COL.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/Types.h"

namespace tawa::driver {

struct DtypeValue {  // a constexpr that names a dtype (tl.float16)
  ir::Scalar scalar;
  bool operator==(const DtypeValue&) const = default;
};
struct NoneValue {  // a constexpr None
  bool operator==(const NoneValue&) const = default;
};
using ConstValue = std::variant<int64_t, double, bool, std::string, DtypeValue, NoneValue>;

struct FillRange {  // `in LO..HI`: random values in [lo, hi)
  double lo = 0, hi = 0;
};

struct SpecEntry {
  enum class Kind { Buffer, Scalar, Constexpr };
  Kind kind = Kind::Constexpr;
  std::string name;
  Location loc;                                            // where the entry starts in the spec text
  ir::Scalar dtype = ir::Scalar::I32;                      // Buffer: element; Scalar: its type
  std::vector<std::variant<int64_t, std::string>> dims;    // Buffer only
  int divisibility = 0;                                    // Buffer: the ":16" hint, 0 when absent
  bool descriptor = false;                                 // Buffer given as name:tensordesc<dtype[block]>[dims]
  std::vector<std::variant<int64_t, std::string>> block;   // descriptor: its block shape
  std::optional<FillRange> fill;                           // Buffer: `in LO..HI`
  // Buffer `= addresses(a, b, ...)`: an array of pointers (i64 or u64), element k the address of
  // buffer k named (each located for errors); such named buffers need not be kernel parameters.
  std::vector<std::string> addresses;
  std::vector<Location> addressLocs;
  std::optional<std::vector<double>> values;               // Buffer `= values(1, 2, ...)`: its elements, in order
  ConstValue value = int64_t{0};                           // Scalar and Constexpr
  bool hasValue = true;                                    // false: a scalar of a signature (parseSignature) given no value
};

struct Spec {
  std::vector<SpecEntry> entries;
  const SpecEntry* find(const std::string& name) const;
  // Integer values of scalars and constexprs (for dims and grid expressions).
  std::map<std::string, int64_t> intValues() const;
  // The buffer's shape with names resolved; UserError at the entry if a name is unknown or not an
  // integer, or a dim is not positive.
  std::vector<int64_t> shapeOf(const SpecEntry& buffer) const;
  // A descriptor's block shape with names resolved; UserError at the entry for an unknown name or a
  // dimension outside 1..256.
  std::vector<int64_t> blockOf(const SpecEntry& desc) const;
};

Spec parseSpec(const std::string& text);
// The same grammar for a kernel's signature alone (what compiling needs, not running): buffer shapes
// and scalar values may be left out (`x:*fp32:16, n:i32, BLOCK=256`), as in Triton's AOT signatures.
// A buffer without a shape has no dims; a scalar without a value holds 0.
Spec parseSignature(const std::string& text);
// Parses a dtype name in either spelling ("fp16", "f16", "tl.float16", "float16").
std::optional<ir::Scalar> parseDtypeName(const std::string& s);

}  // namespace tawa::driver
