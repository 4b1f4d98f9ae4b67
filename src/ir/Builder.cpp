#include "ir/Builder.h"

#include <algorithm>

namespace tawa::ir {

Op* Builder::create(OpKind kind, std::vector<Value*> operands, std::vector<Type> results,
                    std::map<std::string, AttrValue> attrs) {
  auto op = std::make_unique<Op>(kind, loc_);
  op->operands = std::move(operands);
  for (auto& t : results) op->addResult(std::move(t));
  op->attrs = std::move(attrs);
  op->parent = block_;
  Op* raw = op.get();
  auto& ops = block_->ops();
  if (before_) {
    auto it = std::find_if(ops.begin(), ops.end(), [&](auto& p) { return p.get() == before_; });
    TAWA_ASSERT(it != ops.end(), "insertion point belongs to its block");
    ops.insert(it, std::move(op));
  } else {
    ops.push_back(std::move(op));
  }
  return raw;
}

Value* Builder::constInt(int64_t v, Type t) { return op1(OpKind::Constant, {}, std::move(t), {{"value", v}}); }
Value* Builder::constFloat(double v, Type t) { return op1(OpKind::Constant, {}, std::move(t), {{"value", v}}); }

}  // namespace tawa::ir
