// The layouts that the device primitives and the CPU emulator share (primitives.cuh, namespace
// tawa::layout: one definition for both), pinned to the PTX ISA 8.7's figures: the wgmma .m64nNk16
// f32 accumulator fragment and the shared-memory matrix descriptor's bit fields. The emulator's
// descriptor decoding is checked as their inverse.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "backends/cuda/primitives.cuh"

using namespace tawa;

namespace {

struct Cell {
  int thread, reg, row, col;
};

// Entries read off the PTX ISA's figure of the D fragment (each warp owns 16 rows; in every 8-column
// block lane l holds row l / 4 and the two columns 2 * (l % 4), + 1, then the same 8 rows further down).
TEST(Layout, AccumulatorFragmentMatchesThePtxFigure) {
  const Cell cells[] = {
      {0, 0, 0, 0},   {0, 1, 0, 1},    {0, 2, 8, 0},    {0, 3, 8, 1},    {0, 4, 0, 8},  {0, 5, 0, 9},
      {0, 6, 8, 8},   {0, 7, 8, 9},    {1, 0, 0, 2},    {1, 1, 0, 3},    {3, 0, 0, 6},  {3, 1, 0, 7},
      {4, 0, 1, 0},   {5, 2, 9, 2},    {31, 0, 7, 6},   {31, 2, 15, 6},  {31, 7, 15, 15}, {32, 0, 16, 0},
      {33, 4, 16, 10}, {64, 0, 32, 0}, {96, 3, 56, 1},  {127, 0, 55, 6}, {127, 3, 63, 7}, {127, 127, 63, 255},
      {0, 127, 8, 249}, {72, 60, 34, 120},
  };
  for (const Cell& c : cells) {
    EXPECT_EQ(layout::acc_row(c.thread, c.reg), c.row) << "thread " << c.thread << ", register " << c.reg;
    EXPECT_EQ(layout::acc_col(c.thread, c.reg), c.col) << "thread " << c.thread << ", register " << c.reg;
  }
}

// For every N of wgmma, the 128 threads' N / 2 registers cover the 64xN tile, each element once.
TEST(Layout, AccumulatorFragmentCoversTheTileOnce) {
  for (int n = 8; n <= 256; n += 8) {
    std::set<std::pair<int, int>> seen;
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < n / 2; ++i) {
        int r = layout::acc_row(t, i), c = layout::acc_col(t, i);
        ASSERT_TRUE(r >= 0 && r < 64 && c >= 0 && c < n) << "n " << n << ", thread " << t << ", register " << i;
        ASSERT_TRUE(seen.insert({r, c}).second) << "n " << n << ": (" << r << ", " << c << ") held twice";
      }
    EXPECT_EQ(seen.size(), static_cast<size_t>(64 * n));
  }
}

// The descriptor's fields (PTX ISA "Matrix Descriptor Format"), bit by bit.
TEST(Layout, SharedMemoryDescriptorBitFields) {
  // start 0x1230, LBO 16, SBO 1024, 128B swizzle
  EXPECT_EQ(layout::smem_desc(0x1230, 16, 1024, 1), (uint64_t{1} << 62) | (uint64_t{64} << 32) | (uint64_t{1} << 16) | 0x123u);
  // 64B and 32B swizzle, no swizzle
  EXPECT_EQ(layout::smem_desc(0, 0, 0, 2) >> 62, 2u);
  EXPECT_EQ(layout::smem_desc(0, 0, 0, 3) >> 62, 3u);
  EXPECT_EQ(layout::smem_desc(0x400, 0, 0, 0), 0x40u);
  // 14-bit fields: addresses and offsets are taken modulo 2^18, in units of 16 bytes
  EXPECT_EQ(layout::smem_desc(0x41230, 0, 0, 0), 0x123u);
  EXPECT_EQ(layout::smem_desc(0, 0x3FFF0, 0, 0), uint64_t{0x3FFF} << 16);
  EXPECT_EQ(layout::smem_desc(0, 0, 0x3FFF0, 0), uint64_t{0x3FFF} << 32);
  // bits 14-15, 30-31, 46-61 stay zero (reserved, and base offset 0)
  uint64_t all = layout::smem_desc(0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu);
  EXPECT_EQ(all & ((uint64_t{3} << 14) | (uint64_t{3} << 30) | (((uint64_t{1} << 16) - 1) << 46)), 0u);
}

// The emulator decodes what the device primitive encodes.
TEST(Layout, EmulatorDecodesTheDescriptor) {
  for (uint32_t start : {0u, 16u, 1040u, 0x1230u, 0x3FFF0u})
    for (uint32_t lbo : {16u, 1024u, 8192u})
      for (uint32_t sbo : {512u, 1024u, 2048u})
        for (uint32_t mode : {0u, 1u, 2u, 3u}) {
          emu::Desc d = emu::decode(layout::smem_desc(start, lbo, sbo, mode), "A", "layout_test", 0);
          EXPECT_EQ(d.start, start);
          EXPECT_EQ(d.lbo, lbo);
          EXPECT_EQ(d.sbo, sbo);
          EXPECT_EQ(d.mode, mode);
          EXPECT_EQ(d.swz, mode == 1 ? 128u : mode == 2 ? 64u : mode == 3 ? 32u : 0u);
        }
}

// The epilogue staging's swizzle is TMA's (the emulator's model of it), from an aligned base.
TEST(Layout, SwizzleOffsetIsTmaSwizzle) {
  for (uint32_t base : {0u, 1024u, 7u * 1024u})
    for (uint32_t o = 0; o < 4096; o += 4) {
      EXPECT_EQ(layout::swizzle_offset<128>(o), emu::swizzle(base + o, 128) - base);
      EXPECT_EQ(layout::swizzle_offset<64>(o), emu::swizzle(base + o, 64) - base);
      EXPECT_EQ(layout::swizzle_offset<32>(o), emu::swizzle(base + o, 32) - base);
      EXPECT_EQ(layout::swizzle_offset<0>(o), o);
    }
}

}  // namespace
