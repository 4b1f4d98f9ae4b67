// The verifier states what is legal tile IR: operand counts and types, shapes and broadcasting,
// attributes, dominance (a value is used only where its definition is visible), region
// terminators and call signatures. The first violation is thrown as a UserError at the op's location.
#pragma once

#include "ir/IR.h"

namespace tawa::ir {

void verify(const Module& m);

}  // namespace tawa::ir
