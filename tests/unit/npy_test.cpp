#include "driver/Npy.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "ir/Diagnostic.h"

using tawa::UserError;
using tawa::driver::NpyArray;
using tawa::driver::npyDescr;
using tawa::driver::npyDescrMatches;
using tawa::driver::readNpy;
using tawa::driver::writeNpy;
using tawa::ir::Scalar;
namespace fs = std::filesystem;

namespace {

unsigned testSeed() {
  if (const char* s = std::getenv("TAWA_TEST_SEED")) return static_cast<unsigned>(std::strtoul(s, nullptr, 10));
  return std::random_device{}();
}

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = testSeed();
    rng_.seed(seed_);
    std::mt19937_64 nameRng(std::random_device{}());
    dir_ = fs::temp_directory_path() / ("tawa-npy-test-" + std::to_string(nameRng()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::vector<uint8_t> randomBytes(size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = static_cast<uint8_t>(rng_());
    return v;
  }

  // A file made by hand, as NumPy (or something broken) would write it.
  std::string craft(const std::string& name, const std::string& header, size_t dataBytes, int major = 1) {
    std::string out("\x93NUMPY", 6);
    out += static_cast<char>(major);
    out += '\0';
    size_t lenBytes = major == 1 ? 2 : 4;
    for (size_t i = 0; i < lenBytes; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
    out += header;
    for (uint8_t b : randomBytes(dataBytes)) out += static_cast<char>(b);
    return writeRaw(name, out);
  }

  std::string writeRaw(const std::string& name, const std::string& bytes) {
    std::string p = path(name);
    std::ofstream f(p, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p;
  }

  UserError readError(const std::string& p) {
    try {
      readNpy(p);
    } catch (const UserError& e) {
      return e;
    }
    ADD_FAILURE() << "no error reading " << p;
    return UserError({}, "");
  }

  void expectReadError(const std::string& p, const std::string& substr) {
    UserError e = readError(p);
    EXPECT_NE(std::string(e.what()).find(substr), std::string::npos) << e.format();
    EXPECT_EQ(e.loc.line, 0);
    EXPECT_EQ(e.loc.str(), p);  // the path alone: a file error has no line or column
  }

  unsigned seed_ = 0;
  std::mt19937 rng_;
  fs::path dir_;
};

// Pads a header dict the way NumPy does, so the data starts at a multiple of 64.
std::string padded(std::string dict, size_t preamble = 10) {
  size_t total = (preamble + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - preamble - dict.size() - 1, ' ');
  return dict + "\n";
}

}  // namespace

TEST_F(NpyTest, RoundTripRandom) {
  SCOPED_TRACE("seed " + std::to_string(seed_) + " (replay with TAWA_TEST_SEED)");
  const Scalar all[] = {Scalar::I1,     Scalar::I8,  Scalar::I16,  Scalar::I32, Scalar::I64, Scalar::F8E4M3,
                        Scalar::F8E5M2, Scalar::F16, Scalar::BF16, Scalar::F32, Scalar::F64};
  for (int iter = 0; iter < 60; ++iter) {
    Scalar s = all[rng_() % std::size(all)];
    NpyArray a;
    a.descr = npyDescr(s);
    int rank = static_cast<int>(rng_() % 5);  // 0 is a NumPy scalar array
    size_t numel = 1;
    for (int d = 0; d < rank; ++d) {
      a.shape.push_back(std::uniform_int_distribution<int64_t>(iter == 7 ? 0 : 1, 9)(rng_));
      numel *= static_cast<size_t>(a.shape.back());
    }
    a.data = randomBytes(numel * static_cast<size_t>(tawa::ir::byteWidth(s)));
    if (s == Scalar::I1)
      for (auto& b : a.data) b &= 1;  // NumPy bools are 0 or 1
    std::string p = path("rt" + std::to_string(iter) + ".npy");
    SCOPED_TRACE(p);
    writeNpy(p, a);
    auto size = fs::file_size(p);
    EXPECT_EQ((size - a.data.size()) % 64, 0u) << "data must start on a 64-byte boundary";
    NpyArray b = readNpy(p);
    EXPECT_EQ(b.descr, a.descr);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.data, a.data);
    EXPECT_TRUE(npyDescrMatches(b.descr, s));
  }
}

TEST_F(NpyTest, WritesNumpyHeader) {
  SCOPED_TRACE("seed " + std::to_string(seed_) + " (replay with TAWA_TEST_SEED)");
  NpyArray a{"<f2", {4, 8}, randomBytes(64)};
  std::string p = path("h.npy");
  writeNpy(p, a);
  std::ifstream f(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string header = padded("{'descr': '<f2', 'fortran_order': False, 'shape': (4, 8), }");
  ASSERT_EQ(bytes.size(), 10 + header.size() + 64);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(static_cast<size_t>(static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8)), header.size());
  EXPECT_EQ(bytes.substr(10, header.size()), header);
  EXPECT_EQ(std::string(bytes.begin() + 10 + static_cast<long>(header.size()), bytes.end()),
            std::string(a.data.begin(), a.data.end()));
  // One dim is written as the tuple "(5,)", none as "()".
  writeNpy(p, NpyArray{"<i4", {5}, randomBytes(20)});
  EXPECT_EQ(readNpy(p).shape, std::vector<int64_t>{5});
  std::ifstream g(p, std::ios::binary);
  std::string b2((std::istreambuf_iterator<char>(g)), std::istreambuf_iterator<char>());
  EXPECT_NE(b2.find("'shape': (5,), }"), std::string::npos);
  writeNpy(p, NpyArray{"<f8", {}, randomBytes(8)});
  EXPECT_TRUE(readNpy(p).shape.empty());
}

TEST_F(NpyTest, ReadsOtherVersionsAndSpellings) {
  SCOPED_TRACE("seed " + std::to_string(seed_) + " (replay with TAWA_TEST_SEED)");
  auto v2 = craft("v2.npy", padded("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", 12), 24, 2);
  NpyArray a = readNpy(v2);
  EXPECT_EQ(a.descr, "<f4");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(a.data.size(), 24u);
  auto v3 = craft("v3.npy", padded("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", 12), 16, 3);
  EXPECT_EQ(readNpy(v3).shape, std::vector<int64_t>{2});
  // Keys in any order, double quotes, no padding, trailing spaces, Python 2 longs, native byte order.
  auto odd = craft("odd.npy", "{ \"shape\":(5L , 1L) ,\"fortran_order\" :False,'descr':'=f2'}  \n", 10);
  NpyArray o = readNpy(odd);
  EXPECT_EQ(o.descr, "=f2");
  EXPECT_EQ(o.shape, (std::vector<int64_t>{5, 1}));
  EXPECT_TRUE(npyDescrMatches(o.descr, Scalar::F16));
  auto scalar = craft("scalar.npy", padded("{'descr': '|u1', 'fortran_order': False, 'shape': (), }"), 1);
  EXPECT_TRUE(readNpy(scalar).shape.empty());
  auto empty = craft("empty.npy", padded("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }"), 0);
  EXPECT_TRUE(readNpy(empty).data.empty());
  // Fortran order with one non-trivial dim is the same layout as C order.
  auto fortran1d = craft("f1.npy", padded("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 6), }"), 24);
  EXPECT_EQ(readNpy(fortran1d).shape, (std::vector<int64_t>{1, 6}));
}

TEST(NpyDescr, Table) {
  const std::pair<Scalar, const char*> table[] = {
      {Scalar::F16, "<f2"},  {Scalar::F32, "<f4"},    {Scalar::F64, "<f8"},    {Scalar::I1, "|b1"},
      {Scalar::I8, "|i1"},   {Scalar::I16, "<i2"},    {Scalar::I32, "<i4"},    {Scalar::I64, "<i8"},
      {Scalar::BF16, "<u2"}, {Scalar::F8E4M3, "|u1"}, {Scalar::F8E5M2, "|u1"},
  };
  for (const auto& [s, d] : table) {
    EXPECT_EQ(npyDescr(s), d);
    EXPECT_TRUE(npyDescrMatches(d, s)) << d;
    for (const auto& [other, od] : table)
      if (std::string(od) != d) {
        EXPECT_FALSE(npyDescrMatches(d, other)) << d << " vs " << od;
      }
  }
  EXPECT_TRUE(npyDescrMatches("<u1", Scalar::F8E4M3));
  EXPECT_TRUE(npyDescrMatches("|u1", Scalar::F8E5M2));
  EXPECT_TRUE(npyDescrMatches("=f4", Scalar::F32));
  EXPECT_TRUE(npyDescrMatches("=i8", Scalar::I64));
  EXPECT_FALSE(npyDescrMatches(">f4", Scalar::F32));
  EXPECT_FALSE(npyDescrMatches("<f4", Scalar::F64));
  EXPECT_FALSE(npyDescrMatches("<u2", Scalar::F16));
  EXPECT_FALSE(npyDescrMatches("<i4", Scalar::F32));
  EXPECT_FALSE(npyDescrMatches("", Scalar::F32));
  EXPECT_FALSE(npyDescrMatches("<c8", Scalar::F32));
}

TEST_F(NpyTest, ErrorTruncatedHeader) {
  SCOPED_TRACE("seed " + std::to_string(seed_) + " (replay with TAWA_TEST_SEED)");
  std::string header = padded("{'descr': '<f2', 'fortran_order': False, 'shape': (4, 8), }");
  std::string full("\x93NUMPY\x01\x00", 8);
  full += static_cast<char>(header.size() & 0xff);
  full += static_cast<char>(header.size() >> 8);
  full += header;
  expectReadError(writeRaw("cut1.npy", full.substr(0, 40)), "npy header is truncated");
  expectReadError(writeRaw("cut2.npy", full.substr(0, 9)), "npy header is truncated");
  expectReadError(writeRaw("cut3.npy", full.substr(0, 4)), "npy header is truncated");
  expectReadError(craft("nokey.npy", padded("{'descr': '<f2', 'shape': (4, 8), }"), 64),
                  "npy header lacks 'fortran_order'");
  expectReadError(craft("extra.npy", padded("{'descr': '<f2', 'fortran_order': False, 'shape': (4,), 'x': 1}"), 8),
                  "npy header has an unexpected key 'x'");
  expectReadError(craft("neg.npy", padded("{'descr': '<f2', 'fortran_order': False, 'shape': (-4,), }"), 8),
                  "'shape' holds something other than non-negative integers");
  expectReadError(craft("trail.npy", padded("{'descr': '<f2', 'fortran_order': False, 'shape': (4,), } x"), 8),
                  "trailing text");
  expectReadError(craft("notdict.npy", padded("['descr']"), 8), "not a Python dict");
}

TEST_F(NpyTest, ErrorBadMagicAndVersion) {
  SCOPED_TRACE("seed " + std::to_string(seed_) + " (replay with TAWA_TEST_SEED)");
  expectReadError(writeRaw("magic.npy", std::string("\x93NUMPX\x01\x00\x10\x00{}              \n", 27)),
                  "not an npy file (bad magic bytes)");
  expectReadError(writeRaw("text.npy", "1,2,3\n4,5,6\n"), "bad magic bytes");
  std::string h = padded("{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }");
  expectReadError(craft("v4.npy", h, 8, 4), "unsupported npy format version 4.0 (expected 1.0, 2.0 or 3.0)");
  expectReadError(path("does-not-exist.npy"), "cannot open npy file");
}

TEST_F(NpyTest, ErrorWrongDataSize) {
  SCOPED_TRACE("seed " + std::to_string(seed_) + " (replay with TAWA_TEST_SEED)");
  std::string h = padded("{'descr': '<f2', 'fortran_order': False, 'shape': (4, 8), }");
  UserError e = readError(craft("big.npy", h, 100));
  EXPECT_STREQ(e.what(), "npy data holds 100 bytes but shape [4, 8] with descr <f2 needs 64");
  expectReadError(craft("small.npy", h, 63), "npy data holds 63 bytes but shape [4, 8] with descr <f2 needs 64");
  expectReadError(craft("scalar.npy", padded("{'descr': '<i8', 'fortran_order': False, 'shape': (), }"), 4),
                  "holds 4 bytes but shape [] with descr <i8 needs 8");
}

TEST_F(NpyTest, ErrorFortranOrder) {
  SCOPED_TRACE("seed " + std::to_string(seed_) + " (replay with TAWA_TEST_SEED)");
  UserError e = readError(craft("f.npy", padded("{'descr': '<f4', 'fortran_order': True, 'shape': (3, 2), }"), 24));
  EXPECT_STREQ(e.what(), "npy file is Fortran-ordered; only C order is supported");
  EXPECT_NE(e.hint.find("ascontiguousarray"), std::string::npos);
  expectReadError(craft("fb.npy", padded("{'descr': '<f4', 'fortran_order': 1, 'shape': (3, 2), }"), 24),
                  "neither True nor False");
}

TEST_F(NpyTest, ErrorByteOrderAndDescr) {
  SCOPED_TRACE("seed " + std::to_string(seed_) + " (replay with TAWA_TEST_SEED)");
  expectReadError(craft("be.npy", padded("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }"), 8),
                  "npy file is big-endian ('>f4'); only little-endian data is supported");
  expectReadError(craft("c8.npy", padded("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }"), 16),
                  "unsupported npy descr '<c8'");
  expectReadError(craft("c8.npy", padded("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }"), 16),
                  "unsupported npy descr '<c8'");
  expectReadError(craft("bec8.npy", padded("{'descr': '>c8', 'fortran_order': False, 'shape': (2,), }"), 16),
                  "unsupported npy descr '>c8'");
  expectReadError(craft("rec.npy", padded("{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (2,), }"), 8),
                  "structured dtype");
  // A one-byte type has no byte order, so '>' is harmless there.
  auto p = craft("beu1.npy", padded("{'descr': '>u1', 'fortran_order': False, 'shape': (3,), }"), 3);
  EXPECT_TRUE(npyDescrMatches(readNpy(p).descr, Scalar::F8E4M3));
}
