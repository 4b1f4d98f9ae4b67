#include "driver/Npy.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string_view>

#include "ir/Diagnostic.h"

namespace tawa::driver {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

// The descrs tawa reads and writes, in canonical spelling.
constexpr std::string_view kKnownDescrs[] = {"<f2", "<f4", "<f8", "|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8"};

// Canonical spelling of a supported descr: '=' means native order, which NumPy only writes on
// little-endian hosts for us to meet it, and a one-byte type has no byte order at all.
std::optional<std::string> canonicalDescr(std::string_view d) {
  if (d.size() != 3) return std::nullopt;
  char order = d[0];
  std::string_view body = d.substr(1);
  bool oneByte = body[1] == '1';
  if (order == '>' && !oneByte) return std::nullopt;
  if (order != '<' && order != '=' && order != '|' && order != '>') return std::nullopt;
  std::string c = std::string(oneByte ? "|" : "<") + std::string(body);
  for (auto k : kKnownDescrs)
    if (k == c) return c;
  return std::nullopt;
}

std::string shapeStr(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Parses the header: a Python dict literal with 'descr', 'fortran_order' and 'shape'.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const Location& loc) : t_(text), loc_(loc) {}

  struct Header {
    std::string descr;
    bool fortran = false;
    std::vector<int64_t> shape;
  };

  Header run() {
    Header h;
    bool seenDescr = false, seenFortran = false, seenShape = false;
    skipSpace();
    expect('{', "npy header is not a Python dict");
    while (true) {
      skipSpace();
      if (peek() == '}') break;
      std::string key = string("npy header has a key that is not a quoted string");
      skipSpace();
      expect(':', "npy header lacks ':' after key '" + key + "'");
      skipSpace();
      if (key == "descr") {
        if (peek() == '[') fail("npy descr is a structured dtype; only plain numeric arrays are supported");
        h.descr = string("npy header's 'descr' is not a string");
        seenDescr = true;
      } else if (key == "fortran_order") {
        h.fortran = boolean();
        seenFortran = true;
      } else if (key == "shape") {
        h.shape = tuple();
        seenShape = true;
      } else {
        fail("npy header has an unexpected key '" + key + "'");
      }
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') fail("npy header dict is malformed near offset " + std::to_string(pos_));
    }
    ++pos_;
    skipSpace();
    if (pos_ != t_.size()) fail("npy header has trailing text after the dict");
    if (!seenDescr) fail("npy header lacks 'descr'");
    if (!seenFortran) fail("npy header lacks 'fortran_order'");
    if (!seenShape) fail("npy header lacks 'shape'");
    return h;
  }

 private:
  std::string_view t_;
  const Location& loc_;
  size_t pos_ = 0;

  [[noreturn]] void fail(const std::string& msg) { throw UserError(loc_, msg); }
  char peek() const { return pos_ < t_.size() ? t_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < t_.size() && (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\n' || t_[pos_] == '\r')) ++pos_;
  }
  void expect(char c, const std::string& msg) {
    if (peek() != c) fail(msg);
    ++pos_;
  }

  std::string string(const std::string& msg) {
    char q = peek();
    if (q != '\'' && q != '"') fail(msg);
    size_t end = t_.find(q, pos_ + 1);
    if (end == std::string_view::npos) fail("npy header has an unterminated string");
    std::string s(t_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }

  bool boolean() {
    if (t_.substr(pos_, 4) == "True") return pos_ += 4, true;
    if (t_.substr(pos_, 5) == "False") return pos_ += 5, false;
    fail("npy header's 'fortran_order' is neither True nor False");
  }

  std::vector<int64_t> tuple() {
    expect('(', "npy header's 'shape' is not a tuple");
    std::vector<int64_t> shape;
    while (true) {
      skipSpace();
      if (peek() == ')') break;
      size_t start = pos_;
      int64_t v = 0;
      while (pos_ < t_.size() && t_[pos_] >= '0' && t_[pos_] <= '9') {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, t_[pos_] - '0', &v))
          fail("npy shape has a dimension too large for int64");
        ++pos_;
      }
      if (pos_ == start) fail("npy header's 'shape' holds something other than non-negative integers");
      if (peek() == 'L') ++pos_;  // Python 2 long literal, as old NumPy wrote
      shape.push_back(v);
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != ')') fail("npy header's 'shape' tuple is malformed");
    }
    ++pos_;
    return shape;
  }
};

uint32_t readLE(const std::string& bytes, size_t at, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(bytes[at + i]);
  return v;
}

}  // namespace

NpyArray readNpy(const std::string& path) {
  Location loc = Location::at(std::make_shared<const std::string>(path), 0, 0);
  auto fail = [&](const std::string& msg, const std::string& hint = {}) { throw UserError(loc, msg, hint); };

  if (path.empty()) throw UserError(Location::at(std::make_shared<const std::string>("--load"), 0, 0), "no npy file named after '='");
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    fail(std::filesystem::is_directory(status) ? "is a directory, not an npy file" : "is not a regular file (a device or a pipe?), not an npy file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(std::string("cannot open npy file: ") + std::strerror(errno));
  std::string bytes;
  try {
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception& e) {
    fail(std::string("cannot read npy file: ") + e.what());
  }
  if (in.bad()) fail("cannot read npy file");

  if (bytes.size() < kMagicLen && std::string_view(kMagic, kMagicLen).starts_with(bytes))
    fail("npy header is truncated (the file has only " + std::to_string(bytes.size()) + " bytes)");
  if (bytes.size() < kMagicLen || bytes.compare(0, kMagicLen, kMagic, kMagicLen) != 0)
    fail("not an npy file (bad magic bytes)", "write it with numpy.save");
  if (bytes.size() < kMagicLen + 2) fail("npy header is truncated (no format version)");
  int major = static_cast<uint8_t>(bytes[6]), minor = static_cast<uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail("unsupported npy format version " + std::to_string(major) + "." + std::to_string(minor) +
         " (expected 1.0, 2.0 or 3.0)");
  size_t lenBytes = major == 1 ? 2 : 4;
  size_t preamble = kMagicLen + 2 + lenBytes;
  if (bytes.size() < preamble) fail("npy header is truncated (no header length)");
  size_t headerLen = readLE(bytes, kMagicLen + 2, static_cast<int>(lenBytes));
  if (bytes.size() - preamble < headerLen)
    fail("npy header is truncated: it claims " + std::to_string(headerLen) + " bytes but the file has " +
         std::to_string(bytes.size() - preamble) + " after the preamble");

  auto h = HeaderParser(std::string_view(bytes).substr(preamble, headerLen), loc).run();
  auto canon = canonicalDescr(h.descr);
  if (!canon) {
    if (h.descr.size() == 3 && h.descr[0] == '>' && canonicalDescr("<" + h.descr.substr(1)))
      fail("npy file is big-endian ('" + h.descr + "'); only little-endian data is supported",
           "convert it with a.astype(a.dtype.newbyteorder('<'))");
    fail("unsupported npy descr '" + h.descr +
         "' (expected <f2, <f4, <f8, |b1, |i1, <i2, <i4, <i8, |u1, <u2, <u4 or <u8; bf16 is read from <u2 and fp8 from |u1)");
  }
  // Fortran order only changes the layout when two or more dims exceed 1.
  int spread = 0;
  for (auto d : h.shape) spread += d > 1;
  if (h.fortran && spread > 1)
    fail("npy file is Fortran-ordered; only C order is supported", "save it with numpy.ascontiguousarray(a)");

  uint64_t itemsize = static_cast<uint64_t>((*canon)[2] - '0');
  uint64_t need = itemsize;
  for (auto d : h.shape)
    if (__builtin_mul_overflow(need, static_cast<uint64_t>(d), &need))
      fail("npy shape " + shapeStr(h.shape) + " is too large");
  uint64_t have = bytes.size() - preamble - headerLen;
  if (have != need)
    fail("npy data holds " + std::to_string(have) + " bytes but shape " + shapeStr(h.shape) + " with descr " + h.descr +
         " needs " + std::to_string(need));

  NpyArray a;
  a.descr = h.descr;
  a.shape = std::move(h.shape);
  a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(preamble + headerLen), bytes.end());
  return a;
}

void writeNpy(const std::string& path, const NpyArray& a) {
  auto canon = canonicalDescr(a.descr);
  TAWA_ASSERT(canon.has_value(), "writeNpy takes a supported little-endian descr");
  uint64_t numel = 1;
  for (auto d : a.shape) {
    TAWA_ASSERT(d >= 0, "npy dims are non-negative");
    numel *= static_cast<uint64_t>(d);
  }
  TAWA_ASSERT(numel * static_cast<uint64_t>((*canon)[2] - '0') == a.data.size(), "npy data size matches its shape");

  std::string dict = "{'descr': '" + *canon + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < a.shape.size(); ++i) dict += (i ? ", " : "") + std::to_string(a.shape[i]);
  dict += a.shape.size() == 1 ? ",), }" : "), }";
  // Version 1.0 holds a 16-bit header length; only absurd ranks need 2.0.
  bool v2 = dict.size() + 1 + 10 > 65535;
  size_t preamble = v2 ? 12 : 10;
  size_t total = (preamble + dict.size() + 1 + 63) / 64 * 64;  // data aligned to 64 bytes, as NumPy does
  size_t headerLen = total - preamble;
  dict.append(headerLen - dict.size() - 1, ' ');
  dict += '\n';

  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>((headerLen >> (8 * i)) & 0xff);
  out += dict;

  Location loc = Location::at(std::make_shared<const std::string>(path), 0, 0);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw UserError(loc, std::string("cannot write npy file: ") + std::strerror(errno));
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  f.write(reinterpret_cast<const char*>(a.data.data()), static_cast<std::streamsize>(a.data.size()));
  f.close();
  if (!f) throw UserError(loc, "cannot write npy file (disk full?)");
}

std::string npyDescr(ir::Scalar s) {
  switch (s) {
    case ir::Scalar::F16: return "<f2";
    case ir::Scalar::F32: return "<f4";
    case ir::Scalar::F64: return "<f8";
    case ir::Scalar::I1: return "|b1";
    case ir::Scalar::I8: return "|i1";
    case ir::Scalar::I16: return "<i2";
    case ir::Scalar::I32: return "<i4";
    case ir::Scalar::I64: return "<i8";
    case ir::Scalar::BF16: return "<u2";
    case ir::Scalar::F8E4M3:
    case ir::Scalar::F8E5M2: return "|u1";
    case ir::Scalar::U8: return "|u1";
    case ir::Scalar::U16: return "<u2";
    case ir::Scalar::U32: return "<u4";
    case ir::Scalar::U64: return "<u8";
  }
  return "?";
}

bool npyDescrMatches(const std::string& descr, ir::Scalar s) {
  auto c = canonicalDescr(descr);
  return c && *c == npyDescr(s);
}

}  // namespace tawa::driver
