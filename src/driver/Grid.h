// Grid expressions: one to three comma-separated integer expressions over a spec's names, with
// cdiv(a, b), min(a, b), max(a, b), + - * // % and parentheses, e.g. "cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N), 1".
// Errors (unknown name, division by zero, a non-positive size, syntax) are UserErrors at <grid>:1:COL.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace tawa::driver {

std::array<int64_t, 3> evalGrid(const std::string& text, const std::map<std::string, int64_t>& vars);

}  // namespace tawa::driver
