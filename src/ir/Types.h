// Types of the tile IR: scalars, pointers to scalars, tiles (shape x element) and tensor
// descriptors; after warp specialization, asynchronous references; after lowering, mbarrier arrays
// and shared-memory rings. Every switch over TypeKind is exhaustive, so a new kind that is not
// handled everywhere fails to build.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tawa::ir {

// Integers are i* (signed) and u* (unsigned, Triton's tl.uint*): one bit pattern, and the element
// type says how division, remainder, right shift, comparison, max/min and conversion read it.
enum class Scalar : uint8_t { I1, I8, I16, I32, I64, F8E4M3, F8E5M2, F16, BF16, F32, F64, U8, U16, U32, U64 };

std::string_view scalarName(Scalar s);
std::optional<Scalar> parseScalar(std::string_view name);
bool isFloat(Scalar s);
bool isInt(Scalar s);  // i1 and the unsigned types included
bool isUnsigned(Scalar s);  // u8, u16, u32, u64
int bitWidth(Scalar s);
inline int byteWidth(Scalar s) { return s == Scalar::I1 ? 1 : bitWidth(s) / 8; }
// The integers an address converts to and from (tile.bitcast with a pointer, arrays of pointers).
inline bool holdsAddress(Scalar s) { return s == Scalar::I64 || s == Scalar::U64; }

enum class TypeKind : uint8_t {
  Scalar,  // i32, f16, ...
  Ptr,     // ptr<f16>: an address of one scalar in global memory
  Tile,    // tile<64x32xf16>, tile<64x32xptr<f16>>: a value distributed over a block's threads
  Desc,    // tdesc<64x64xf16>: a global tensor view (base, shape, strides) with a block shape
  Aref,    // aref<2, tile<64x32xf16>, ...>: a ring of D slots, each holding one value of each member
  MBar,    // mbar<2>: N mbarriers (phase, pending arrivals, transaction bytes)
  Smem,    // smem<2x64x32xf16>: a ring of D shared-memory slots, each one tile of the given shape
};

// A value type. Small and copyable; compared structurally.
struct Type {
  TypeKind kind = TypeKind::Scalar;
  Scalar scalar = Scalar::I32;  // Scalar: itself; Ptr: pointee; Tile: element (or pointee); Desc: element
  bool elemIsPtr = false;       // Tile only: elements are ptr<scalar>
  std::vector<int64_t> shape;   // Tile: dims; Desc: block shape; Aref: {D}; MBar: {N}; Smem: {D, dims...}
  std::vector<Type> members;    // Aref only: the payload of one slot

  static Type scalarOf(Scalar s) { return Type{TypeKind::Scalar, s, false, {}, {}}; }
  static Type ptrTo(Scalar s) { return Type{TypeKind::Ptr, s, false, {}, {}}; }
  // A tile whose element is `elem` (a scalar or pointer type).
  static Type tileOf(std::vector<int64_t> shape, const Type& elem);
  static Type descOf(Scalar s, std::vector<int64_t> block) { return Type{TypeKind::Desc, s, false, std::move(block), {}}; }
  static Type arefOf(int64_t depth, std::vector<Type> payload) { return Type{TypeKind::Aref, Scalar::I32, false, {depth}, std::move(payload)}; }
  static Type mbarOf(int64_t n) { return Type{TypeKind::MBar, Scalar::I32, false, {n}, {}}; }
  // A ring of `depth` slots, each a tile of `tile`'s shape and element.
  static Type smemOf(int64_t depth, const Type& tile);

  bool isScalar() const { return kind == TypeKind::Scalar; }
  bool isPtr() const { return kind == TypeKind::Ptr; }
  bool isTile() const { return kind == TypeKind::Tile; }
  bool isDesc() const { return kind == TypeKind::Desc; }
  // Element type: for a tile its scalar or pointer element, otherwise the type itself.
  Type element() const;
  // Same element, other shape (a scalar when shape is empty).
  Type withShape(std::vector<int64_t> shape) const;
  // Same shape, other element.
  Type withElement(const Type& elem) const;
  bool isAref() const { return kind == TypeKind::Aref; }
  bool isMBar() const { return kind == TypeKind::MBar; }
  bool isSmem() const { return kind == TypeKind::Smem; }
  // Scalars and tiles of scalars: the values that arithmetic applies to.
  bool isData() const { return (kind == TypeKind::Scalar) || (kind == TypeKind::Tile && !elemIsPtr); }
  bool elemIsFloat() const { return isData() && isFloat(scalar); }
  bool elemIsInt() const { return isData() && isInt(scalar); }
  bool isPtrLike() const { return kind == TypeKind::Ptr || (kind == TypeKind::Tile && elemIsPtr); }
  bool isI1() const { return isData() && scalar == Scalar::I1; }
  // Smem only: the tile type of one slot.
  Type slotType() const;
  int64_t numel() const;
  int rank() const { return static_cast<int>(shape.size()); }

  bool operator==(const Type&) const = default;
  std::string str() const;
};

// Parses the printed form of a type; returns nullopt (and sets err) on malformed text.
std::optional<Type> parseType(std::string_view text, std::string* err);

}  // namespace tawa::ir
