#include "driver/Spec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <limits>
#include <memory>
#include <string_view>

namespace tawa::driver {

namespace {

using ir::Scalar;

struct DtypeSpelling {
  std::string_view name;
  Scalar s;
};
// Triton's names first, then the IR's and NumPy's; "tl." may precede any of them.
constexpr DtypeSpelling kDtypes[] = {
    {"fp16", Scalar::F16},        {"f16", Scalar::F16},
    {"float16", Scalar::F16},     {"bf16", Scalar::BF16},
    {"bfloat16", Scalar::BF16},   {"fp32", Scalar::F32},
    {"f32", Scalar::F32},         {"float32", Scalar::F32},
    {"fp64", Scalar::F64},        {"f64", Scalar::F64},
    {"float64", Scalar::F64},     {"fp8e4nv", Scalar::F8E4M3},
    {"f8e4m3", Scalar::F8E4M3},   {"float8e4nv", Scalar::F8E4M3},
    {"fp8e5", Scalar::F8E5M2},    {"f8e5m2", Scalar::F8E5M2},
    {"float8e5", Scalar::F8E5M2}, {"i1", Scalar::I1},
    {"int1", Scalar::I1},         {"i8", Scalar::I8},
    {"int8", Scalar::I8},         {"i16", Scalar::I16},
    {"int16", Scalar::I16},       {"i32", Scalar::I32},
    {"int32", Scalar::I32},       {"i64", Scalar::I64},
    {"int64", Scalar::I64},       {"u8", Scalar::U8},
    {"uint8", Scalar::U8},        {"u16", Scalar::U16},
    {"uint16", Scalar::U16},      {"u32", Scalar::U32},
    {"uint32", Scalar::U32},      {"u64", Scalar::U64},
    {"uint64", Scalar::U64},
};

constexpr std::string_view kDtypeList = "fp16, bf16, fp32, fp64, fp8e4nv, fp8e5, i1, i8, i16, i32, i64, u8, u16, u32, u64";

// Keywords cannot be names in the Python signature the spec mirrors.
constexpr std::string_view kKeywords[] = {"False",  "None",   "True",    "and",      "as",       "assert", "async",
                                          "await",  "break",  "class",   "continue", "def",      "del",    "elif",
                                          "else",   "except", "finally", "for",      "from",     "global", "if",
                                          "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
                                          "pass",   "raise",  "return",  "try",      "while",    "with",   "yield"};

bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isIdentChar(char c) { return isIdentStart(c) || (c >= '0' && c <= '9'); }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

Location specLoc(size_t pos) {
  static const auto file = std::make_shared<const std::string>("<spec>");
  return Location::at(file, 1, static_cast<int>(pos) + 1);
}

[[noreturn]] void fail(size_t pos, const std::string& msg, const std::string& hint = {}) {
  throw UserError(specLoc(pos), msg, hint);
}

// A readable rendering of the character at pos for "unexpected ..." messages.
std::string charAt(const std::string& t, size_t pos) {
  if (pos >= t.size()) return "end of spec";
  return "'" + std::string(1, t[pos]) + "'";
}

std::string valueKind(const ConstValue& v) {
  switch (v.index()) {
    case 0: return "an integer";
    case 1: return "a float";
    case 2: return "a bool";
    case 3: return "a string";
    case 5: return "None";
    default: return "a dtype";
  }
}

// The value of a dim name, checked to be a positive integer; errors point at `at`.
int64_t resolveDim(const Spec& spec, const std::string& buffer, const std::string& dim, const Location& at) {
  const SpecEntry* e = spec.find(dim);
  if (!e)
    throw UserError(at, "dimension '" + dim + "' of buffer '" + buffer + "' names no scalar or constexpr in the spec",
                    "add it, e.g. " + dim + ":i32=128 or " + dim + "=128");
  if (e->kind == SpecEntry::Kind::Buffer)
    throw UserError(at, "dimension '" + dim + "' of buffer '" + buffer + "' names a buffer, not an integer");
  const auto* v = std::get_if<int64_t>(&e->value);
  if (!v)
    throw UserError(at, "dimension '" + dim + "' of buffer '" + buffer + "' names " + valueKind(e->value) +
                            (e->kind == SpecEntry::Kind::Scalar ? " scalar" : " constexpr") + ", not an integer");
  if (*v <= 0)
    throw UserError(at, "dimension '" + dim + "' of buffer '" + buffer + "' is " + std::to_string(*v) +
                            "; dimensions must be positive");
  return *v;
}

class SpecParser {
 public:
  SpecParser(const std::string& text, bool signature) : t_(text), signature_(signature) {}

  Spec run() {
    Spec spec;
    skipSpace();
    while (pos_ < t_.size()) {
      entry(spec);
      skipSpace();
      if (pos_ >= t_.size()) break;
      if (t_[pos_] != ',')
        fail(pos_, "unexpected " + charAt(t_, pos_) + " after entry '" + spec.entries.back().name +
                       "'; entries are separated by ','");
      ++pos_;
      skipSpace();  // a trailing comma is allowed, as in a Python argument list
    }
    // dim(a, i) and stride(a, i) read shapes, which may name entries given later.
    for (const auto& d : derived_) resolveDerived(spec, d);
    // Dims may name entries that come later, so they are checked once everything is read.
    for (const auto& [bufferIdx, dim, pos] : namedDims_)
      resolveDim(spec, spec.entries[bufferIdx].name, dim, specLoc(pos));
    return spec;
  }

 private:
  const std::string& t_;
  bool signature_ = false;  // parseSignature: buffer shapes and scalar values may be left out
  size_t pos_ = 0;
  struct NamedDim {
    size_t buffer;
    std::string name;
    size_t pos;
  };
  std::vector<NamedDim> namedDims_;
  struct Derived {  // an entry's value written as dim(buffer, axis) or stride(buffer, axis)
    size_t entry;
    bool stride;
    std::string buffer;
    int64_t axis;
    size_t pos, bufferPos, axisPos;
    bool widen = false;  // from strides(...): i32, or i64 for a stride past i32's range
  };
  std::vector<Derived> derived_;
  struct PendingStride {  // a name in `strides(...)`: an entry added after its buffer's
    std::string name;
    size_t pos;
    std::string buffer;
    int64_t axis;
  };
  std::vector<PendingStride> pendingStrides_;
  std::string dtypeText_;  // the last dtype as the user spelled it, for messages

  void skipSpace() {
    while (pos_ < t_.size() && isSpace(t_[pos_])) ++pos_;
  }
  bool atEntryEnd() const { return pos_ >= t_.size() || t_[pos_] == ','; }

  std::string_view scanWhile(bool (*pred)(char)) {
    size_t start = pos_;
    while (pos_ < t_.size() && pred(t_[pos_])) ++pos_;
    return std::string_view(t_).substr(start, pos_ - start);
  }

  std::string name() {
    size_t start = pos_;
    if (pos_ < t_.size() && t_[pos_] == ',') fail(pos_, "empty entry in the spec (two ',' in a row?)");
    std::string n(scanWhile(isIdentChar));
    if (n.empty()) fail(start, "expected an entry name, found " + charAt(t_, start));
    if (isDigit(n[0]))
      fail(start, "'" + n + "' is not a valid name: names are Python identifiers and cannot start with a digit");
    if (std::find(std::begin(kKeywords), std::end(kKeywords), n) != std::end(kKeywords))
      fail(start, "'" + n + "' is a Python keyword and cannot name a spec entry");
    return n;
  }

  Scalar dtype(const std::string& entryName, const char* after) {
    size_t start = pos_;
    std::string tok(scanWhile([](char c) { return isIdentChar(c) || c == '.'; }));
    if (tok.empty())
      fail(start, "expected a dtype after '" + std::string(after) + "' in entry '" + entryName + "', found " +
                      charAt(t_, start));
    auto s = parseDtypeName(tok);
    if (!s) fail(start, "unknown dtype '" + tok + "' (expected " + std::string(kDtypeList) + ")");
    dtypeText_ = tok;
    return *s;
  }

  // An entry's name, at `at`, must not name an earlier entry.
  void requireNew(const Spec& spec, const std::string& name, size_t at) {
    for (const auto& prev : spec.entries)
      if (prev.name == name) fail(at, "duplicate spec entry '" + name + "'", "it is first given at column " + std::to_string(prev.loc.col));
  }

  void entry(Spec& spec) {
    SpecEntry e;
    size_t start = pos_;
    e.name = name();
    e.loc = specLoc(start);
    requireNew(spec, e.name, start);
    skipSpace();
    if (atEntryEnd())
      fail(start, "entry '" + e.name + "' has neither a type nor a value",
           "write " + e.name + ":i32=512 for a scalar, " + e.name + "=512 for a constexpr or " + e.name +
               ":*fp16[M, K] for a buffer");
    if (t_[pos_] == '=') {
      ++pos_;
      e.kind = SpecEntry::Kind::Constexpr;
      if (!derived(e, spec.entries.size())) e.value = value(e.name).first;
    } else if (t_[pos_] == ':') {
      ++pos_;
      skipSpace();
      if (pos_ < t_.size() && t_[pos_] == '*') {
        ++pos_;
        skipSpace();
        buffer(e, spec.entries.size());
      } else if (t_.compare(pos_, 4, "None") == 0 && (pos_ + 4 >= t_.size() || !isIdentChar(t_[pos_ + 4]))) {
        fail(pos_, "'" + e.name + ":None' gives None a type; None is a constexpr", "write " + e.name + "=None");
      } else if (t_.compare(pos_, 10, "tensordesc") == 0 && (pos_ + 10 >= t_.size() || !isIdentChar(t_[pos_ + 10]))) {
        pos_ += 10;
        descriptor(e, spec.entries.size());
      } else {
        scalar(e, spec.entries.size());
      }
    } else {
      fail(pos_, "unexpected " + charAt(t_, pos_) + " after name '" + e.name + "'; expected ':' or '='");
    }
    spec.entries.push_back(std::move(e));
    for (auto& s : pendingStrides_) {
      requireNew(spec, s.name, s.pos);
      SpecEntry st;
      st.name = s.name;
      st.loc = specLoc(s.pos);
      st.kind = SpecEntry::Kind::Scalar;
      st.dtype = Scalar::I32;
      st.value = int64_t{0};
      Derived d;
      d.entry = spec.entries.size();
      d.stride = true;
      d.buffer = s.buffer;
      d.axis = s.axis;
      d.pos = d.bufferPos = d.axisPos = s.pos;
      d.widen = true;
      derived_.push_back(d);
      spec.entries.push_back(std::move(st));
    }
    pendingStrides_.clear();
  }

  void buffer(SpecEntry& e, size_t index) {
    e.kind = SpecEntry::Kind::Buffer;
    e.dtype = dtype(e.name, "*");
    skipSpace();
    if (pos_ < t_.size() && t_[pos_] == ':') {
      ++pos_;
      skipSpace();
      size_t start = pos_;
      std::string_view digits = scanWhile(isDigit);
      int div = 0;
      auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), div);
      if (digits.empty() || ec != std::errc() || div <= 0 || (pos_ < t_.size() && isIdentChar(t_[pos_])))
        fail(start, "the divisibility hint of buffer '" + e.name + "' must be a positive integer, e.g. :16");
      e.divisibility = div;
      skipSpace();
    }
    if (pos_ < t_.size() && t_[pos_] == '=') {  // contents without dims: one dimension
      contents(e);  // sets values or addresses, or fails
      e.dims = {static_cast<int64_t>(e.values ? e.values->size() : e.addresses.size())};
      return;
    }
    if (signature_ && (pos_ >= t_.size() || t_[pos_] != '[')) return;
    if (pos_ >= t_.size() || t_[pos_] != '[')
      fail(pos_, "buffer '" + e.name + "' has no shape",
           "give its dims in brackets, e.g. " + e.name + ":*" + dtypeText_ + "[M, K]");
    dimList(index, e.dims, "buffer '" + e.name + "'", "shape");
    skipSpace();
    if (t_.compare(pos_, 7, "strides") == 0 && (pos_ + 7 >= t_.size() || !isIdentChar(t_[pos_ + 7]))) stridesOf(e);
    skipSpace();
    if (t_.compare(pos_, 2, "in") == 0 && (pos_ + 2 >= t_.size() || !isIdentChar(t_[pos_ + 2]))) fillRange(e);
    else if (pos_ < t_.size() && t_[pos_] == '=') contents(e);
  }

  // `= values(v, ...)` or `= addresses(name, ...)` after a buffer's type (and shape): its elements.
  // Counts are checked against the shape when the spec is bound (dims may name scalars).
  void contents(SpecEntry& e) {
    ++pos_;
    skipSpace();
    const size_t at = pos_;
    const std::string form = "write " + e.name + ":*" + dtypeText_ + " = values(1, 2, 3), or " + e.name +
                             ":*i64 = addresses(a, b) for an array of pointers to buffers a and b";
    std::string word(scanWhile(isIdentChar));
    skipSpace();
    if ((word != "values" && word != "addresses") || pos_ >= t_.size() || t_[pos_] != '(')
      fail(at, "expected values(...) or addresses(...) after '=' in buffer '" + e.name + "'", form);
    const bool addr = word == "addresses";
    if (addr && !ir::holdsAddress(e.dtype))
      fail(at, "buffer '" + e.name + "' holds addresses, so its dtype must be i64 or u64, not " + dtypeText_,
           "write " + e.name + ":*i64 = addresses(...)");
    ++pos_;
    std::vector<double> vals;
    while (true) {
      skipSpace();
      const size_t item = pos_;
      if (addr) {
        e.addresses.push_back(name());
        e.addressLocs.push_back(specLoc(item));
      } else {
        vals.push_back(element(e, item));
      }
      skipSpace();
      if (pos_ < t_.size() && t_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < t_.size() && t_[pos_] == ')') break;
      fail(pos_, "unexpected " + charAt(t_, pos_) + " in the " + word + " of buffer '" + e.name + "'; items are separated by ','", form);
    }
    ++pos_;
    if (!addr) e.values = std::move(vals);
  }

  // One number of a buffer's values(...), exact in the buffer's dtype's range.
  double element(const SpecEntry& e, size_t at) {
    const std::string tok(scanWhile([](char c) { return c != ',' && c != ')' && !isSpace(c); }));
    const std::optional<double> n = number(tok);
    if (!n) fail(at, "'" + tok + "' in the values of buffer '" + e.name + "' is not a number");
    const double d = *n;
    if (!ir::isFloat(e.dtype)) {
      if (d != std::floor(d)) fail(at, "value " + tok + " of integer buffer '" + e.name + "' is not an integer");
      const int bits = ir::bitWidth(e.dtype);
      double lo = -std::ldexp(1.0, bits - 1), hi = std::ldexp(1.0, bits - 1) - 1;
      if (e.dtype == Scalar::I1) lo = 0, hi = 1;
      else if (ir::isUnsigned(e.dtype)) lo = 0, hi = std::ldexp(1.0, bits) - 1;
      if (d < lo || d > hi)
        fail(at, "value " + tok + " does not fit in buffer '" + e.name + "' (" + dtypeText_ + ")");
      if (std::fabs(d) >= 9007199254740992.0) fail(at, "value " + tok + " of buffer '" + e.name + "' is beyond 2^53, which the spec does not take exactly");
    }
    return d;
  }

  // `strides(NAME, ...)` after a buffer's shape: one name per dimension (`_` for a stride the kernel
  // does not take), each made the scalar entry NAME:i32=stride(buffer, axis) (i64 where it does not
  // fit), the buffer's row-major strides in elements.
  void stridesOf(const SpecEntry& e) {
    const std::string form = "write " + e.name + ":*" + dtypeText_ + "[...] strides(stride_0, stride_1, ...)";
    pos_ += 7;
    skipSpace();
    if (pos_ >= t_.size() || t_[pos_] != '(') fail(pos_, "expected '(' after 'strides' of buffer '" + e.name + "'", form);
    const size_t open = pos_++;
    std::vector<std::pair<std::string, size_t>> names;
    while (true) {
      skipSpace();
      const size_t at = pos_;
      std::string n = name();
      names.emplace_back(n, at);
      skipSpace();
      if (pos_ < t_.size() && t_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < t_.size() && t_[pos_] == ')') break;
      fail(pos_, "unexpected " + charAt(t_, pos_) + " in the strides of buffer '" + e.name + "'; names are separated by ','", form);
    }
    ++pos_;
    if (names.size() != e.dims.size())
      fail(open, "buffer '" + e.name + "' has " + std::to_string(e.dims.size()) + " dimension(s) but strides() names " +
                     std::to_string(names.size()),
           "give one name per dimension, '_' for a stride the kernel does not take");
    for (size_t k = 0; k < names.size(); ++k)
      if (names[k].first != "_") pendingStrides_.push_back({names[k].first, names[k].second, e.name, static_cast<int64_t>(k)});
  }

  // A whole token read as a finite number (a leading '+' allowed), or nullopt.
  static std::optional<double> number(const std::string& tok) {
    double d = 0;
    const char* b = tok.data() + (!tok.empty() && tok[0] == '+');
    auto [p, ec] = std::from_chars(b, tok.data() + tok.size(), d);
    if (tok.empty() || p != tok.data() + tok.size() || ec != std::errc() || !std::isfinite(d)) return std::nullopt;
    return d;
  }

  // `in LO..HI` after a buffer's shape: its random values are drawn from [LO, HI).
  void fillRange(SpecEntry& e) {
    size_t at = pos_;
    pos_ += 2;
    skipSpace();
    const std::string hint = "write e.g. " + e.name + ":*" + dtypeText_ + "[N] in " + (ir::isFloat(e.dtype) ? "-2.0..2.0" : "0..100");
    auto bound = [&](const char* which) {
      size_t start = pos_;
      if (pos_ < t_.size() && (t_[pos_] == '-' || t_[pos_] == '+')) ++pos_;
      while (pos_ < t_.size() && (isDigit(t_[pos_]) || t_[pos_] == 'e' || t_[pos_] == 'E' ||
                                  (t_[pos_] == '.' && !(pos_ + 1 < t_.size() && t_[pos_ + 1] == '.')) ||
                                  ((t_[pos_] == '-' || t_[pos_] == '+') && (t_[pos_ - 1] == 'e' || t_[pos_ - 1] == 'E'))))
        ++pos_;
      const std::string tok = t_.substr(start, pos_ - start);
      const std::optional<double> n = number(tok);
      if (!n) fail(start, std::string("the ") + which + " bound of buffer '" + e.name + "'s range is not a number", hint);
      const double d = *n;
      if (!ir::isFloat(e.dtype) && d != std::floor(d))
        fail(start, std::string("the ") + which + " bound of integer buffer '" + e.name + "'s range must be an integer", hint);
      return d;
    };
    FillRange r;
    r.lo = bound("lower");
    if (t_.compare(pos_, 2, "..") != 0) fail(pos_, "expected '..' in the range of buffer '" + e.name + "'", hint);
    pos_ += 2;
    r.hi = bound("upper");
    if (!(r.lo < r.hi))
      fail(at, "the range of buffer '" + e.name + "' is empty: LO..HI draws from [LO, HI), so LO must be below HI", hint);
    if (e.dtype == Scalar::I1 && (r.lo < 0 || r.hi > 2))
      fail(at, "the range of i1 buffer '" + e.name + "' must lie within 0..2");
    if (!ir::isFloat(e.dtype) && e.dtype != Scalar::I1) {
      int bits = ir::bitWidth(e.dtype);
      double lim = std::ldexp(1.0, bits - 1);
      const bool uns = ir::isUnsigned(e.dtype);
      if (uns ? (r.lo < 0 || r.hi > 2 * lim + 1) : (r.lo < -lim || r.hi > lim + 1))
        fail(at, "the range of buffer '" + e.name + "' does not fit in " + dtypeText_);
    }
    e.fill = r;
  }

  // `dim(buffer, axis)` or `stride(buffer, axis)` as an entry's value (resolved after the whole spec
  // is read); false when the text at pos_ is neither.
  bool derived(SpecEntry& e, size_t index) {
    skipSpace();
    size_t start = pos_;
    std::string word(scanWhile(isIdentChar));
    skipSpace();
    if ((word != "dim" && word != "stride") || pos_ >= t_.size() || t_[pos_] != '(') {
      pos_ = start;
      return false;
    }
    const std::string form = word + "(BUFFER, AXIS)";
    ++pos_;
    skipSpace();
    Derived d;
    d.entry = index;
    d.stride = word == "stride";
    d.pos = start;
    d.bufferPos = pos_;
    d.buffer = std::string(scanWhile(isIdentChar));
    if (d.buffer.empty()) fail(pos_, "expected a buffer name in " + word + "() for '" + e.name + "'", "write " + e.name + "=" + form);
    skipSpace();
    if (pos_ >= t_.size() || t_[pos_] != ',') fail(pos_, "expected ',' and an axis after '" + d.buffer + "' in " + word + "()", "write " + e.name + "=" + form);
    ++pos_;
    skipSpace();
    d.axisPos = pos_;
    bool neg = pos_ < t_.size() && t_[pos_] == '-';
    if (neg) ++pos_;
    std::string_view digits = scanWhile(isDigit);
    int64_t ax = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), ax);
    if (digits.empty() || ec != std::errc()) fail(d.axisPos, "the axis in " + word + "() for '" + e.name + "' must be an integer");
    d.axis = neg ? -ax : ax;
    skipSpace();
    if (pos_ >= t_.size() || t_[pos_] != ')') fail(pos_, "expected ')' to close " + word + "(", "write " + e.name + "=" + form);
    ++pos_;
    skipSpace();
    if (!atEntryEnd()) fail(pos_, "unexpected " + charAt(t_, pos_) + " after " + word + "(...) in entry '" + e.name + "'");
    e.value = int64_t{0};
    derived_.push_back(d);
    return true;
  }

  void resolveDerived(Spec& spec, const Derived& d) {
    SpecEntry& e = spec.entries[d.entry];
    const std::string call = std::string(d.stride ? "stride" : "dim") + "(" + d.buffer + ", " + std::to_string(d.axis) + ")";
    const SpecEntry* b = spec.find(d.buffer);
    if (!b) fail(d.bufferPos, "'" + d.buffer + "' in " + call + " names no buffer in the spec");
    if (b->kind != SpecEntry::Kind::Buffer) fail(d.bufferPos, "'" + d.buffer + "' in " + call + " is not a buffer");
    for (const auto& dim : b->dims)
      if (const auto* n = std::get_if<std::string>(&dim))
        for (const auto& other : derived_)
          if (spec.entries[other.entry].name == *n)
            fail(d.pos, "the shape of '" + d.buffer + "' names '" + *n + "', itself given by dim() or stride(); give one of them as a number");
    const int64_t rank = static_cast<int64_t>(b->dims.size());
    int64_t ax = d.axis < 0 ? d.axis + rank : d.axis;
    if (ax < 0 || ax >= rank)
      fail(d.axisPos, "axis " + std::to_string(d.axis) + " is out of range for buffer '" + d.buffer + "' of rank " + std::to_string(rank));
    const auto shape = spec.shapeOf(*b);
    int64_t v = shape[static_cast<size_t>(ax)];
    if (d.stride) {
      v = 1;
      for (int64_t k = ax + 1; k < rank; ++k) v *= shape[static_cast<size_t>(k)];
    }
    if (d.widen && v > std::numeric_limits<int32_t>::max()) e.dtype = Scalar::I64;
    if (e.kind == SpecEntry::Kind::Scalar) {
      if (ir::isFloat(e.dtype)) {
        e.value = static_cast<double>(v);
        return;
      }
      checkFits(e.name, e.dtype, ir::scalarName(e.dtype), v, d.pos);
    }
    e.value = v;
  }

  static void checkFits(const std::string& name, Scalar dt, std::string_view ty, int64_t i, size_t at) {
    int bits = ir::bitWidth(dt);
    const bool uns = ir::isUnsigned(dt);
    int64_t lo = bits == 1 || uns ? 0 : bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
    int64_t hi = bits == 1 ? 1 : bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - (uns ? 0 : 1))) - 1;
    if (i < lo || i > hi)
      fail(at, "value " + std::to_string(i) + " of scalar '" + name + "' does not fit in " + std::string(ty) + " (range " +
                   std::to_string(lo) + ".." + std::to_string(hi) + ")");
  }

  // `[d0, d1, ...]` at pos_, the `part` ("shape", "block") of `owner` ("buffer 'a'"): positive integers
  // or names (checked once the whole spec is read).
  void dimList(size_t index, std::vector<std::variant<int64_t, std::string>>& out, const std::string& owner,
               const std::string& part) {
    const std::string in = "the " + part + " of " + owner;
    size_t open = pos_++;
    skipSpace();
    if (pos_ < t_.size() && t_[pos_] == ']') fail(open, owner + " has an empty " + part + "; give at least one dimension");
    while (true) {
      skipSpace();
      if (pos_ >= t_.size()) fail(open, "unclosed '[' in " + in);
      size_t start = pos_;
      std::string tok(scanWhile(isIdentChar));
      if (tok.empty()) fail(start, "unexpected " + charAt(t_, start) + " in " + in + "; dimensions are positive integers or names");
      if (isDigit(tok[0])) {
        int64_t v = 0;
        auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
        if (p != tok.data() + tok.size()) fail(start, "dimension '" + tok + "' of " + owner + " is neither an integer nor a name");
        if (ec != std::errc()) fail(start, "dimension " + tok + " of " + owner + " is too large");
        if (v <= 0) fail(start, "dimension " + tok + " of " + owner + " is 0; dimensions must be positive");
        out.emplace_back(v);
      } else {
        namedDims_.push_back({index, tok, start});
        out.emplace_back(tok);
      }
      skipSpace();
      if (pos_ < t_.size() && t_[pos_] == ',') {
        ++pos_;
        skipSpace();
        if (pos_ < t_.size() && t_[pos_] == ']') break;
        continue;
      }
      if (pos_ < t_.size() && t_[pos_] == ']') break;
      if (pos_ >= t_.size()) fail(open, "unclosed '[' in " + in);
      fail(pos_, "unexpected " + charAt(t_, pos_) + " in " + in + "; dimensions are positive integers or names separated by ','");
    }
    ++pos_;  // ']'
  }

  // name:tensordesc<dtype[b0, b1]>[d0, d1]: a host tensor descriptor (Triton's TensorDescriptor) over a
  // fresh row-major buffer of shape [d0, d1], with block [b0, b1] (Triton's AOT spelling of the type).
  void descriptor(SpecEntry& e, size_t index) {
    e.kind = SpecEntry::Kind::Buffer;
    e.descriptor = true;
    skipSpace();
    if (pos_ >= t_.size() || t_[pos_] != '<')
      fail(pos_, "expected '<' after 'tensordesc' in entry '" + e.name + "'", "write " + e.name + ":tensordesc<fp16[64, 64]>[M, K]");
    ++pos_;
    skipSpace();
    e.dtype = dtype(e.name, "tensordesc<");
    skipSpace();
    if (pos_ >= t_.size() || t_[pos_] != '[')
      fail(pos_, "descriptor '" + e.name + "' has no block shape", "write " + e.name + ":tensordesc<" + dtypeText_ + "[64, 64]>[M, K]");
    dimList(index, e.block, "descriptor '" + e.name + "'", "block");
    skipSpace();
    if (pos_ >= t_.size() || t_[pos_] != '>') fail(pos_, "expected '>' after the block of descriptor '" + e.name + "'");
    ++pos_;
    skipSpace();
    if (pos_ >= t_.size() || t_[pos_] != '[')
      fail(pos_, "descriptor '" + e.name + "' has no tensor shape", "write " + e.name + ":tensordesc<" + dtypeText_ + "[64, 64]>[M, K]");
    dimList(index, e.dims, "descriptor '" + e.name + "'", "shape");
    if (e.block.size() != e.dims.size())
      fail(pos_ - 1, "descriptor '" + e.name + "' has a block of rank " + std::to_string(e.block.size()) + " over a tensor of rank " +
                         std::to_string(e.dims.size()));
    skipSpace();  // its buffer's random values drawn from a range, as a buffer's: `in LO..HI`
    if (t_.compare(pos_, 2, "in") == 0 && (pos_ + 2 >= t_.size() || !isIdentChar(t_[pos_ + 2]))) fillRange(e);
  }

  void scalar(SpecEntry& e, size_t index) {
    e.kind = SpecEntry::Kind::Scalar;
    e.dtype = dtype(e.name, ":");
    skipSpace();
    if (pos_ < t_.size() && t_[pos_] == '[')
      fail(pos_, "'" + e.name + "' has a shape but no '*'",
           "buffers are pointers: write " + e.name + ":*" + dtypeText_ + "[...]");
    if (pos_ < t_.size() && t_[pos_] == ':')
      fail(pos_, "divisibility hints apply to buffers only, not to scalar '" + e.name + "'");
    if (signature_ && (pos_ >= t_.size() || t_[pos_] != '=')) {
      e.hasValue = false;
      return;
    }
    if (pos_ >= t_.size() || t_[pos_] != '=')
      fail(pos_, "scalar '" + e.name + "' has no value",
           "give one, e.g. " + e.name + ":" + dtypeText_ + "=" + (ir::isFloat(e.dtype) ? "1.0" : "512"));
    ++pos_;
    if (derived(e, index)) return;
    auto [v, start] = value(e.name);
    const std::string ty = dtypeText_;
    if (ir::isFloat(e.dtype)) {
      if (auto* i = std::get_if<int64_t>(&v))
        v = static_cast<double>(*i);
      else if (!std::holds_alternative<double>(v))
        fail(start, "scalar '" + e.name + "' of type " + ty + " takes a number, not " + valueKind(v));
    } else {
      if (auto* b = std::get_if<bool>(&v); b && e.dtype == Scalar::I1) v = int64_t{*b};
      auto* i = std::get_if<int64_t>(&v);
      if (!i) fail(start, "scalar '" + e.name + "' of type " + ty + " takes an integer, not " + valueKind(v));
      checkFits(e.name, e.dtype, ty, *i, start);
    }
    e.value = v;
  }

  // A constexpr or scalar value; returns it with the position where it starts.
  std::pair<ConstValue, size_t> value(const std::string& entryName) {
    skipSpace();
    size_t start = pos_;
    if (atEntryEnd()) fail(start, "entry '" + entryName + "' has '=' but no value");
    char q = t_[pos_];
    if (q == '\'' || q == '"') return {quoted(entryName), start};
    std::string tok(scanWhile([](char c) { return c != ',' && !isSpace(c) && c != '\'' && c != '"'; }));
    if (tok == "True") return {true, start};
    if (tok == "None") return {NoneValue{}, start};
    if (tok == "False") return {false, start};
    // Sign handled here because from_chars rejects a leading '+'.
    std::string_view body(tok);
    bool neg = false;
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
      neg = body[0] == '-';
      body.remove_prefix(1);
    }
    if (!body.empty() && std::all_of(body.begin(), body.end(), isDigit)) {
      uint64_t mag = 0;
      auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), mag);
      uint64_t limit = neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
      if (ec != std::errc() || mag > limit)
        fail(start, "integer " + tok + " in the value of '" + entryName + "' is out of the int64 range");
      return {neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag), start};
    }
    if (!body.empty() && (isDigit(body[0]) || body[0] == '.')) {
      double d = 0;
      auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), d);
      if (p == body.data() + body.size() && ec == std::errc()) return {neg ? -d : d, start};
      if (ec == std::errc::result_out_of_range)
        fail(start, "float " + tok + " in the value of '" + entryName + "' is out of the double range");
    }
    if (!neg && body == tok)
      if (auto s = parseDtypeName(tok)) return {DtypeValue{*s}, start};
    fail(start, "cannot read '" + tok + "' as the value of '" + entryName + "'",
         "values are integers, floats, True/False, quoted strings or dtypes such as tl.float16" +
             (std::all_of(tok.begin(), tok.end(), isIdentChar)
                  ? "; to pass a string, quote it: " + entryName + "='" + tok + "'"
                  : std::string()));
  }

  std::string quoted(const std::string& entryName) {
    size_t open = pos_;
    char q = t_[pos_++];
    std::string s;
    while (pos_ < t_.size() && t_[pos_] != q) {
      char c = t_[pos_++];
      if (c == '\\' && pos_ < t_.size()) {
        char n = t_[pos_++];
        switch (n) {
          case 'n': s += '\n'; break;
          case 't': s += '\t'; break;
          case '\\':
          case '\'':
          case '"': s += n; break;
          default:
            s += '\\';
            s += n;
            break;  // Python keeps unknown escapes verbatim
        }
      } else {
        s += c;
      }
    }
    if (pos_ >= t_.size()) fail(open, "unterminated string in the value of '" + entryName + "'");
    ++pos_;
    return s;
  }
};

}  // namespace

Spec parseSpec(const std::string& text) { return SpecParser(text, false).run(); }
Spec parseSignature(const std::string& text) { return SpecParser(text, true).run(); }

std::optional<ir::Scalar> parseDtypeName(const std::string& s) {
  std::string_view n(s);
  if (n.starts_with("tl.")) n.remove_prefix(3);
  for (const auto& d : kDtypes)
    if (d.name == n) return d.s;
  return std::nullopt;
}

const SpecEntry* Spec::find(const std::string& name) const {
  for (const auto& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

std::map<std::string, int64_t> Spec::intValues() const {
  std::map<std::string, int64_t> out;
  for (const auto& e : entries) {
    if (e.kind == SpecEntry::Kind::Buffer) continue;
    if (const auto* i = std::get_if<int64_t>(&e.value))
      out[e.name] = *i;
    else if (const auto* b = std::get_if<bool>(&e.value))
      out[e.name] = *b ? 1 : 0;
  }
  return out;
}

// A dim of `owner` as written: an integer, or the value of the entry it names (resolveDim).
static int64_t dimValue(const Spec& spec, const SpecEntry& owner, const std::variant<int64_t, std::string>& d) {
  if (const auto* i = std::get_if<int64_t>(&d)) return *i;
  return resolveDim(spec, owner.name, std::get<std::string>(d), owner.loc);
}

std::vector<int64_t> Spec::blockOf(const SpecEntry& desc) const {
  TAWA_ASSERT(desc.kind == SpecEntry::Kind::Buffer && desc.descriptor, "blockOf takes a descriptor entry");
  std::vector<int64_t> block;
  for (const auto& d : desc.block) {
    const int64_t v = dimValue(*this, desc, d);
    if (v <= 0 || v > 256)
      throw UserError(desc.loc, "the block of descriptor '" + desc.name + "' has a dimension of " + std::to_string(v) +
                                    "; block dimensions are 1 to 256 (TMA's limit)");
    block.push_back(v);
  }
  return block;
}

std::vector<int64_t> Spec::shapeOf(const SpecEntry& buffer) const {
  TAWA_ASSERT(buffer.kind == SpecEntry::Kind::Buffer, "shapeOf takes a buffer entry");
  std::vector<int64_t> shape;
  int64_t numel = 1;
  for (const auto& d : buffer.dims) {
    const int64_t v = dimValue(*this, buffer, d);  // a named dim is positive (resolveDim)
    if (v <= 0)
      throw UserError(buffer.loc, "dimension " + std::to_string(v) + " of buffer '" + buffer.name + "' is not positive");
    if (__builtin_mul_overflow(numel, v, &numel))
      throw UserError(buffer.loc, "buffer '" + buffer.name + "' has more elements than fit in int64");
    shape.push_back(v);
  }
  return shape;
}

}  // namespace tawa::driver
