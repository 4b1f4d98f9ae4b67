// The verifier states what is legal tile IR: operand counts and types, shapes and broadcasting,
// attributes, dominance (a value is used only where its definition is visible), region
// terminators and call signatures. The first violation is thrown as a UserError at the op's location.
#pragma once

#include "ir/IR.h"

namespace tawa::ir {

void verify(const Module& m);

// Every backend holds a tile whole, per program: a tile of more than kMaxTileElements elements (Triton's
// own TRITON_MAX_TENSOR_NUMEL) only exhausts memory or time. verify() checks it with the rest; the front
// end checks it first, as the kernel's error rather than its own.
constexpr int64_t kMaxTileElements = int64_t{1} << 20;
void checkTileSize(const Op& op);
void checkTileSizes(const Module& m);

}  // namespace tawa::ir
