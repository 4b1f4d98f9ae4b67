// Creates ops at an insertion point (the end of a block, or before an op). Used by the front end
// and by passes. Ops get the builder's current location unless one is passed.
#pragma once

#include <initializer_list>
#include <vector>

#include "ir/IR.h"

namespace tawa::ir {

class Builder {
 public:
  explicit Builder(Block* b, Location loc = {}) : block_(b), loc_(std::move(loc)) {}

  void setInsertionPointToEnd(Block* b) { block_ = b, before_ = nullptr; }
  void setInsertionPointBefore(Op* op) { block_ = op->parent, before_ = op; }
  Block* block() const { return block_; }
  void setLoc(Location l) { loc_ = std::move(l); }
  const Location& loc() const { return loc_; }

  // The general form: any kind, operands, result types, attributes.
  Op* create(OpKind kind, std::vector<Value*> operands, std::vector<Type> results,
             std::map<std::string, AttrValue> attrs = {});
  // Single-result convenience.
  Value* op1(OpKind kind, std::vector<Value*> operands, Type result, std::map<std::string, AttrValue> attrs = {}) {
    return create(kind, std::move(operands), {std::move(result)}, std::move(attrs))->result();
  }

  Value* constInt(int64_t v, Type t);  // scalar or tile (splat constant)
  Value* constFloat(double v, Type t);

 private:
  Block* block_;
  Op* before_ = nullptr;
  Location loc_;
};

}  // namespace tawa::ir
