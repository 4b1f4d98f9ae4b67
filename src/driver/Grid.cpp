#include "driver/Grid.h"

#include <algorithm>
#include <charconv>
#include <memory>
#include <string_view>
#include <vector>

#include "ir/Diagnostic.h"

namespace tawa::driver {

namespace {

Location gridLoc(size_t pos) {
  static const auto file = std::make_shared<const std::string>("<grid>");
  return Location::at(file, 1, static_cast<int>(pos) + 1);
}

[[noreturn]] void fail(size_t pos, const std::string& msg, const std::string& hint = {}) {
  throw UserError(gridLoc(pos), msg, hint);
}

bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isIdentChar(char c) { return isIdentStart(c) || (c >= '0' && c <= '9'); }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diag = up;
    }
  }
  return row[b.size()];
}

// Python's floor division and modulo: the remainder takes the divisor's sign.
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a % b < 0) != (b < 0))) --q;
  return q;
}
int64_t pyMod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
int64_t ceilDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a % b < 0) == (b < 0))) ++q;
  return q;
}

class GridParser {
 public:
  GridParser(const std::string& text, const std::map<std::string, int64_t>& vars)
      : t_(text), vars_(vars), end_(text.size()) {}

  std::array<int64_t, 3> run() {
    std::array<int64_t, 3> grid{1, 1, 1};
    skipSpace();
    if (pos_ >= t_.size()) fail(pos_, "empty grid expression", "give 1 to 3 sizes, e.g. \"cdiv(M, 64), 1\"");
    // A Python tuple "(x, y)" is accepted as well as the bare "x, y".
    size_t close = 0;
    if (t_[pos_] == '(' && wrapsWholeTuple(pos_, &close)) {
      ++pos_;
      end_ = close;
    }
    int n = 0;
    while (true) {
      skipSpace();
      size_t start = pos_;
      if (n == 3) fail(start, "grid has 4 dimensions; at most 3 are allowed");
      int64_t v = expr();
      if (v < 1) {
        static constexpr const char* kAxis[] = {"x", "y", "z"};
        fail(start, "grid dimension " + std::to_string(n) + " (" + kAxis[n] + ") is " + std::to_string(v) +
                        "; every grid size must be at least 1");
      }
      // CUDA's limits (x < 2^31, y and z <= 65535), which also keep the program count within int64.
      static constexpr int64_t kMax[] = {(int64_t{1} << 31) - 1, 65535, 65535};
      if (v > kMax[n]) {
        static constexpr const char* kAxis[] = {"x", "y", "z"};
        fail(start, "grid dimension " + std::to_string(n) + " (" + kAxis[n] + ") is " + std::to_string(v) + "; CUDA allows at most " +
                        std::to_string(kMax[n]));
      }
      grid[n++] = v;
      skipSpace();
      if (pos_ >= end_) break;
      if (t_[pos_] != ',') fail(pos_, "unexpected '" + std::string(1, t_[pos_]) + "' in grid expression");
      ++pos_;
      skipSpace();
      if (pos_ >= end_) break;  // trailing comma, as in the tuple "(4,)"
    }
    if (end_ < t_.size()) {
      pos_ = end_ + 1;
      end_ = t_.size();
      skipSpace();
      if (pos_ < t_.size()) fail(pos_, "unexpected '" + std::string(1, t_[pos_]) + "' after the grid tuple");
    }
    return grid;
  }

 private:
  const std::string& t_;
  const std::map<std::string, int64_t>& vars_;
  size_t pos_ = 0;
  size_t end_;  // where parsing stops: the text's end, or an outer tuple's ')'

  void skipSpace() {
    while (pos_ < end_ && (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\n' || t_[pos_] == '\r')) ++pos_;
  }
  bool at(char c) const { return pos_ < end_ && t_[pos_] == c; }
  bool atFloorDiv() const { return pos_ + 1 < end_ && t_[pos_] == '/' && t_[pos_ + 1] == '/'; }

  // Whether the '(' at `open` is matched by the text's last non-space ')' with a top-level comma inside.
  bool wrapsWholeTuple(size_t open, size_t* close) const {
    int depth = 0;
    bool comma = false;
    for (size_t i = open; i < t_.size(); ++i) {
      char c = t_[i];
      if (c == '(') ++depth;
      if (c == ')' && --depth == 0) {
        size_t rest = t_.find_first_not_of(" \t\r\n", i + 1);
        *close = i;
        return comma && rest == std::string::npos;
      }
      if (c == ',' && depth == 1) comma = true;
    }
    return false;
  }

  [[noreturn]] void overflow(size_t pos) { fail(pos, "integer overflow in grid expression (beyond int64)"); }

  std::string unexpected() const {
    if (pos_ >= end_) return "unexpected end of grid expression";
    return "unexpected '" + std::string(1, t_[pos_]) + "' in grid expression";
  }

  // Parentheses, calls and unary signs recurse: a bounded depth keeps a hostile grid from
  // overflowing the stack.
  static constexpr int kMaxDepth = 200;
  int depth_ = 0;
  NestingLevel deeper(size_t at) {
    return NestingLevel(depth_, kMaxDepth, [&] { fail(at, "grid expression nested more than " + std::to_string(kMaxDepth) + " levels deep"); });
  }

  int64_t expr() {
    auto level = deeper(pos_);
    int64_t v = term();
    while (true) {
      skipSpace();
      if (!at('+') && !at('-')) return v;
      size_t op = pos_++;
      int64_t r = term();
      bool bad = t_[op] == '+' ? __builtin_add_overflow(v, r, &v) : __builtin_sub_overflow(v, r, &v);
      if (bad) overflow(op);
    }
  }

  int64_t term() {
    int64_t v = unary();
    while (true) {
      skipSpace();
      size_t op = pos_;
      if (at('*')) {
        if (pos_ + 1 < end_ && t_[pos_ + 1] == '*') fail(op, "'**' (power) is not supported in grid expressions");
        ++pos_;
        if (__builtin_mul_overflow(v, unary(), &v)) overflow(op);
      } else if (atFloorDiv() || at('%')) {
        bool div = t_[op] == '/';
        pos_ += div ? 2 : 1;
        int64_t r = unary();
        if (r == 0) fail(op, div ? "division by zero in grid expression" : "modulo by zero in grid expression");
        if (v == INT64_MIN && r == -1) {
          if (div) overflow(op);
          v = 0;
        } else {
          v = div ? floorDiv(v, r) : pyMod(v, r);
        }
      } else if (at('/')) {
        fail(op, "'/' is true division, which gives a float; grid sizes are integers", "use '//' or cdiv(a, b)");
      } else {
        return v;
      }
    }
  }

  int64_t unary() {
    skipSpace();
    if (at('-')) {
      auto level = deeper(pos_);
      size_t op = pos_++;
      int64_t v = unary();
      if (v == INT64_MIN) overflow(op);
      return -v;
    }
    if (at('+')) {
      auto level = deeper(pos_);
      ++pos_;
      return unary();
    }
    return primary();
  }

  int64_t primary() {
    skipSpace();
    size_t start = pos_;
    if (at('(')) {
      ++pos_;
      int64_t v = expr();
      skipSpace();
      if (at(',')) fail(pos_, "unexpected ',' inside parentheses; only the grid's top level separates dimensions");
      if (!at(')')) fail(pos_ < end_ ? pos_ : start, pos_ < end_ ? unexpected() + "; expected ')'" : "unclosed '('");
      ++pos_;
      return v;
    }
    if (pos_ < end_ && isDigit(t_[pos_])) {
      while (pos_ < end_ && isIdentChar(t_[pos_])) ++pos_;
      std::string_view tok = std::string_view(t_).substr(start, pos_ - start);
      if (pos_ < end_ && t_[pos_] == '.')
        fail(start, "grid sizes are integers; '" + std::string(tok) + ".' is a float");
      int64_t v = 0;
      auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
      if (p != tok.data() + tok.size()) fail(start, "malformed integer '" + std::string(tok) + "' in grid expression");
      if (ec != std::errc()) overflow(start);
      return v;
    }
    if (pos_ < end_ && isIdentStart(t_[pos_])) {
      while (pos_ < end_ && isIdentChar(t_[pos_])) ++pos_;
      std::string name = t_.substr(start, pos_ - start);
      skipSpace();
      if (at('(')) return call(name, start);
      auto it = vars_.find(name);
      if (it == vars_.end()) unknownName(name, start);
      return it->second;
    }
    fail(pos_ < end_ ? pos_ : start, unexpected() + "; expected a number, a name, a call or '('");
  }

  int64_t call(const std::string& fn, size_t start) {
    if (fn != "cdiv" && fn != "min" && fn != "max")
      fail(start, "unknown function '" + fn + "' in grid expression (expected cdiv, min or max)");
    size_t open = pos_++;
    std::vector<std::pair<int64_t, size_t>> args;
    skipSpace();
    if (!at(')')) {
      while (true) {
        skipSpace();
        size_t argPos = pos_;
        args.emplace_back(expr(), argPos);
        skipSpace();
        if (at(',')) {
          ++pos_;
          continue;
        }
        if (at(')')) break;
        if (pos_ >= end_) fail(open, "unclosed '(' in the call to " + fn + "()");
        fail(pos_, unexpected() + "; expected ',' or ')' in the call to " + fn + "()");
      }
    }
    ++pos_;
    if (fn == "cdiv") {
      if (args.size() != 2)
        fail(start, "cdiv takes 2 arguments, got " + std::to_string(args.size()), "write cdiv(M, BLOCK_M)");
      if (args[1].first == 0) fail(args[1].second, "division by zero in grid expression (cdiv)");
      if (args[0].first == INT64_MIN && args[1].first == -1) overflow(start);
      return ceilDiv(args[0].first, args[1].first);
    }
    if (args.size() < 2) fail(start, fn + " takes at least 2 arguments, got " + std::to_string(args.size()));
    int64_t v = args[0].first;
    for (const auto& a : args) v = fn == "min" ? std::min(v, a.first) : std::max(v, a.first);
    return v;
  }

  [[noreturn]] void unknownName(const std::string& name, size_t start) {
    std::string msg = "unknown name '" + name + "' in grid expression";
    if (vars_.empty()) fail(start, msg + " (the spec defines no integers)");
    std::string known;
    int shown = 0;
    std::string best;
    size_t bestDist = 3;  // only close names are worth suggesting
    for (const auto& [k, v] : vars_) {
      if (shown < 8) known += (shown++ ? ", " : "") + k;
      size_t d = editDistance(name, k);
      if (d < bestDist) bestDist = d, best = k;
    }
    if (vars_.size() > 8) known += ", ...";
    fail(start, msg + " (known: " + known + ")", best.empty() ? "" : "did you mean '" + best + "'?");
  }
};

}  // namespace

std::array<int64_t, 3> evalGrid(const std::string& text, const std::map<std::string, int64_t>& vars) {
  return GridParser(text, vars).run();
}

}  // namespace tawa::driver
