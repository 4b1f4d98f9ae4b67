#include "profile/CostModel.h"

#include <algorithm>
#include <cmath>

#include "ir/MathFns.h"

namespace tawa::profile {

using ir::OpKind;

double CostModel::mmaCycles(int64_t m, int64_t n, int64_t k, ir::Scalar in) const {
  double rate = flopsPerClkPerSM;
  if (in == ir::Scalar::F8E4M3 || in == ir::Scalar::F8E5M2) rate *= 2;
  else if (in == ir::Scalar::F32) rate /= 2;  // tf32
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / rate;
}

double CostModel::opCycles(const ir::Op& op) const {
  auto elems = [](const ir::Type& t) { return static_cast<double>(std::max<int64_t>(1, t.numel())); };
  // A whole tile spreads over the warp group's 128 threads; a scalar is one uniform instruction.
  auto lanes = [&](double n, double perClk) { return n <= 1 ? scalarOp : std::ceil(n / perClk); };
  switch (op.kind()) {
    case OpKind::Constant: case OpKind::Arange: case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::Assume:
    case OpKind::ExpandDims: case OpKind::Reshape: case OpKind::MakeDesc: case OpKind::Splat:
    case OpKind::FenceProxyAsync: case OpKind::SetMaxNReg: case OpKind::SmemAlloc: case OpKind::MbarInit:
    case OpKind::ArefCreate: case OpKind::WgRegion: case OpKind::Call: case OpKind::Return: case OpKind::Yield:
    case OpKind::Condition: case OpKind::For: case OpKind::If: case OpKind::While:
      return 0;  // compile-time values, register renaming, or control flow charged through its body
    case OpKind::Exp: case OpKind::Exp2: case OpKind::Log: case OpKind::Log2: case OpKind::Sqrt: case OpKind::Rsqrt:
    case OpKind::Sin: case OpKind::Cos:
      return lanes(elems(op.result()->type()), mufuPerClk);
    case OpKind::Math:  // a libdevice function: a few MUFU and FMA instructions, or ALU ones (floor, ...)
      return lanes(elems(op.result()->type()), ir::verifiedMathFn(op).alu ? aluPerClk : mufuPerClk);
    case OpKind::Div:
      if (op.result()->type().elemIsFloat()) return lanes(elems(op.result()->type()), mufuPerClk);
      return lanes(elems(op.result()->type()), aluPerClk);
    case OpKind::Cast:
      return lanes(elems(op.result()->type()), cvtPerClk);
    case OpKind::Bitcast:  // a register rename, or a move
      return lanes(elems(op.result()->type()), aluPerClk);
    case OpKind::Reduce: {
      double n = elems(op.operand(0)->type());
      return lanes(n, aluPerClk) + reduceExtra;
    }
    case OpKind::Dot: {  // a synchronous MMA (an unspecialized kernel)
      const auto& a = op.operand(0)->type();
      const auto& r = op.result()->type();
      return mmaIssue + mmaCycles(r.shape[0], r.shape[1], a.shape[1], a.scalar);
    }
    case OpKind::Load: case OpKind::DescLoad: {  // a synchronous global load
      const auto& t = op.result()->type();
      return tmaLatency + transferCycles(elems(t) * ir::byteWidth(t.scalar));
    }
    case OpKind::Store: {
      const auto& t = op.operand(1)->type();
      return transferCycles(elems(t) * ir::byteWidth(t.scalar));
    }
    case OpKind::DescStore: {
      const auto& t = op.operand(1)->type();
      return transferCycles(elems(t) * ir::byteWidth(t.scalar));
    }
    default:
      return lanes(op.numResults() ? elems(op.result()->type()) : 1, aluPerClk);
  }
}

}  // namespace tawa::profile
