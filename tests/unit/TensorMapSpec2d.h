// A row-major 2-D tensor map description for tests that build kernels' launches by hand: rows x
// cols elements from buffer argument `arg`, rows `rowStride` elements apart, moved in boxes of
// boxRows x boxCols.
#pragma once

#include <string>

#include "backends/cuda/Emitter.h"

namespace tawa::test {

inline cuda::TensorMapSpec tensorMap2d(const std::string& param, ir::Scalar elem, int arg, int64_t rows, int64_t cols, int64_t rowStride,
                                       int64_t boxRows, int64_t boxCols, int swizzleBytes = 0) {
  cuda::TensorMapSpec m;
  m.param = param;
  m.elem = elem;
  m.baseArg = arg;
  m.rows.constant = rows;
  m.cols.constant = cols;
  m.rowStride.constant = rowStride;
  m.colStride.constant = 1;
  m.boxRows = boxRows;
  m.boxCols = boxCols;
  m.swizzleBytes = swizzleBytes;
  return m;
}

}  // namespace tawa::test
