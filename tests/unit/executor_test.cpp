// Executor semantics on small kernels: masks and `other`, located out-of-bounds errors, integer
// division by zero, descriptor zero fill, reductions and control flow, against hand-computed values.
#include <gtest/gtest.h>

#include <random>

#include "backends/exec/Executor.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"

using namespace tawa;

namespace {

std::unique_ptr<ir::Module> parse(const std::string& text) {
  auto m = ir::parseModule(text, "test.tir");
  ir::verify(*m);
  return m;
}

const char* kMaskedCopy = R"(tile.func @copy(%x: ptr<f32>, %y: ptr<f32>, %n: i32) {
  %r = tile.arange {start = 0, end = 16} : tile<16xi32>
  %nn = tile.splat %n : tile<16xi32>
  %m = tile.cmp %r, %nn {pred = "lt"} : tile<16xi1>
  %xp = tile.splat %x : tile<16xptr<f32>>
  %xa = tile.addptr %xp, %r : tile<16xptr<f32>>
  %o = tile.constant {value = -7.5} : tile<16xf32>
  %v = tile.load %xa, %m, %o : tile<16xf32>
  %yp = tile.splat %y : tile<16xptr<f32>>
  %ya = tile.addptr %yp, %r : tile<16xptr<f32>>
  tile.store %ya, %v
  tile.return
}
)";

TEST(Executor, MaskedLanesReadOther) {
  auto m = parse(kMaskedCopy);
  std::mt19937 rng(std::random_device{}());
  std::vector<exec::Buffer> bufs{{"x", ir::Scalar::F32, {10}}, {"y", ir::Scalar::F32, {16}}};
  for (int i = 0; i < 10; ++i) bufs[0].setFloat(i, std::uniform_real_distribution<double>(0.5, 1)(rng));
  exec::launch(*m, *m->funcs[0], {exec::Arg::buf(0), exec::Arg::buf(1), exec::Arg::integer(10)}, bufs, {});
  for (int i = 0; i < 10; ++i) EXPECT_EQ(bufs[1].getFloat(i), bufs[0].getFloat(i));
  for (int i = 10; i < 16; ++i) EXPECT_EQ(bufs[1].getFloat(i), -7.5);
}

TEST(Executor, UnmaskedOutOfBoundsIsLocated) {
  auto m = parse(kMaskedCopy);
  // The store is unmasked: a 12-element y is too small for 16 lanes.
  std::vector<exec::Buffer> bufs{{"x", ir::Scalar::F32, {16}}, {"y", ir::Scalar::F32, {12}}};
  try {
    exec::launch(*m, *m->funcs[0], {exec::Arg::buf(0), exec::Arg::buf(1), exec::Arg::integer(16)}, bufs, {});
    FAIL() << "expected an out-of-bounds error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.loc.line, 11);
    EXPECT_NE(std::string(e.what()).find("out-of-bounds store: element 12 of buffer 'y', which holds 12 elements"),
              std::string::npos)
        << e.what();
  }
}

TEST(Executor, NegativeOffsetIsOutOfBounds) {
  auto m = parse(R"(tile.func @f(%x: ptr<f16>) {
  %c = tile.constant {value = -1} : i32
  %p = tile.addptr %x, %c : ptr<f16>
  %v = tile.load %p : f16
  tile.return
}
)");
  std::vector<exec::Buffer> bufs{{"x", ir::Scalar::F16, {4}}, {"z", ir::Scalar::F16, {4}}};
  try {
    exec::launch(*m, *m->funcs[0], {exec::Arg::buf(1)}, bufs, {});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("element -1 of buffer 'z'"), std::string::npos) << e.what();
  }
}

TEST(Executor, IntegerDivisionByZeroIsAnError) {
  auto m = parse(R"(tile.func @f(%a: i32, %b: i32) {
  %q = tile.div %a, %b : i32
  tile.return
}
)");
  std::vector<exec::Buffer> bufs;
  EXPECT_THROW(exec::launch(*m, *m->funcs[0], {exec::Arg::integer(3), exec::Arg::integer(0)}, bufs, {}), UserError);
}

TEST(Executor, DescriptorZeroFillsAndClipsAndReduces) {
  // Row sums of a 3x5 matrix read through a 4x8 descriptor block: out-of-bounds reads are 0, and the
  // store of the 4x8 block writes only the 3x5 part.
  auto m = parse(R"(tile.func @f(%x: ptr<f32>, %y: ptr<f32>, %s: ptr<f32>) {
  %c0 = tile.constant {value = 0} : i32
  %c1 = tile.constant {value = 1} : i32
  %c3 = tile.constant {value = 3} : i32
  %c5 = tile.constant {value = 5} : i32
  %d = tile.make_desc %x, %c3, %c5, %c5, %c1 : tdesc<4x8xf32>
  %e = tile.make_desc %y, %c3, %c5, %c5, %c1 : tdesc<4x8xf32>
  %t = tile.desc_load %d, %c0, %c0 : tile<4x8xf32>
  %two = tile.constant {value = 2.0} : tile<4x8xf32>
  %t2 = tile.mul %t, %two : tile<4x8xf32>
  tile.desc_store %e, %t2, %c0, %c0
  %rs = tile.reduce %t {axis = 1, kind = "sum"} : tile<4xf32>
  %r = tile.arange {start = 0, end = 4} : tile<4xi32>
  %sp = tile.splat %s : tile<4xptr<f32>>
  %sa = tile.addptr %sp, %r : tile<4xptr<f32>>
  tile.store %sa, %rs
  tile.return
}
)");
  std::mt19937 rng(std::random_device{}());
  std::vector<exec::Buffer> bufs{{"x", ir::Scalar::F32, {3, 5}}, {"y", ir::Scalar::F32, {3, 6}}, {"s", ir::Scalar::F32, {4}}};
  for (int i = 0; i < 15; ++i) bufs[0].setFloat(i, std::uniform_int_distribution<int>(1, 9)(rng));
  for (int i = 0; i < 18; ++i) bufs[1].setFloat(i, -1);
  exec::launch(*m, *m->funcs[0], {exec::Arg::buf(0), exec::Arg::buf(1), exec::Arg::buf(2)}, bufs, {});
  for (int r = 0; r < 3; ++r) {
    double sum = 0;
    for (int c = 0; c < 5; ++c) {
      sum += bufs[0].getFloat(r * 5 + c);
      EXPECT_EQ(bufs[1].getFloat(r * 5 + c), 2 * bufs[0].getFloat(r * 5 + c));
    }
    EXPECT_EQ(bufs[2].getFloat(r), sum);
  }
  EXPECT_EQ(bufs[1].getFloat(15), -1);  // past the 3x5 view: untouched
  EXPECT_EQ(bufs[2].getFloat(3), 0);    // the zero-filled row
}

TEST(Executor, WhileAndIfFollowTheirRegions) {
  // Collatz steps of n, counted with tile.while and tile.if.
  auto m = parse(R"(tile.func @collatz(%out: ptr<i32>, %n: i32) {
  %zero = tile.constant {value = 0} : i32
  %one = tile.constant {value = 1} : i32
  %two = tile.constant {value = 2} : i32
  %three = tile.constant {value = 3} : i32
  %x, %steps = tile.while %n, %zero : i32, i32 {
  ^bb0(%a: i32, %s: i32):
    %go = tile.cmp %a, %one {pred = "ne"} : i1
    tile.condition %go, %a, %s
  } {
  ^bb0(%a2: i32, %s2: i32):
    %r = tile.rem %a2, %two : i32
    %odd = tile.cmp %r, %one {pred = "eq"} : i1
    %next = tile.if %odd : i32 {
      %t = tile.mul %a2, %three : i32
      %t1 = tile.add %t, %one : i32
      tile.yield %t1
    } {
      %h = tile.div %a2, %two : i32
      tile.yield %h
    }
    %s3 = tile.add %s2, %one : i32
    tile.yield %next, %s3
  }
  tile.store %out, %steps
  tile.return
}
)");
  std::vector<exec::Buffer> bufs{{"out", ir::Scalar::I32, {1}}};
  exec::launch(*m, *m->funcs[0], {exec::Arg::buf(0), exec::Arg::integer(27)}, bufs, {});
  EXPECT_EQ(bufs[0].getInt(0), 111);  // 27 takes 111 steps to reach 1
}

TEST(Executor, PointerArgumentNeedsMatchingBuffer) {
  auto m = parse(kMaskedCopy);
  std::vector<exec::Buffer> bufs{{"x", ir::Scalar::F16, {16}}, {"y", ir::Scalar::F32, {16}}};
  EXPECT_THROW(exec::launch(*m, *m->funcs[0], {exec::Arg::buf(0), exec::Arg::buf(1), exec::Arg::integer(16)}, bufs, {}),
               UserError);
}

}  // namespace
