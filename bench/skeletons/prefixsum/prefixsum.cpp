// Inclusive prefix sum of N 64-bit integers: tbb::parallel_scan, or a two-pass blocked scan
// (parallel_for of block sums, a serial scan of the block sums, parallel_for of the fix-up).
// Parameters: grain (scan) or block (two-pass), partitioner, threads, algorithm, inner unroll.
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_scan.h>

#include <vector>

#include "common/Skeleton.h"

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long n = a.integer("n", 24 << 20), grain = a.integer("grain", 1), unroll = a.integer("unroll", 1), threads = a.integer("threads", 2);
  const long rounds = a.integer("rounds", 3);
  const std::string part = a.text("part", "auto"), algo = a.text("algo", "scan");
  a.done();
  std::vector<long> in(n), out(n);
  skel::Rng r(6);
  for (auto& v : in) v = static_cast<long>(r.next() & 1023);
  auto serial = [&](long b, long e, long carry, bool write) {
    long i = b;
    for (; i + unroll <= e; i += unroll)
      for (long u = 0; u < unroll; ++u) {
        carry += in[i + u];
        if (write) out[i + u] = carry;
      }
    for (; i < e; ++i) {
      carry += in[i];
      if (write) out[i] = carry;
    }
    return carry;
  };
  skel::timed(threads, [&] {
    for (long round = 0; round < rounds; ++round) {
    if (algo == "scan") {
      auto body = [&](const tbb::blocked_range<long>& b, long carry, bool final) { return serial(b.begin(), b.end(), carry, final); };
      auto join = [](long x, long y) { return x + y; };
      if (part == "simple") tbb::parallel_scan(tbb::blocked_range<long>(0, n, grain), 0L, body, join, tbb::simple_partitioner());
      else tbb::parallel_scan(tbb::blocked_range<long>(0, n, grain), 0L, body, join, tbb::auto_partitioner());
    } else {
      const long blocks = (n + grain - 1) / grain;
      std::vector<long> sums(blocks + 1, 0);
      skel::withPartitioner(part, [&](auto&& p) {
        tbb::parallel_for(tbb::blocked_range<long>(0, blocks), [&](const tbb::blocked_range<long>& b) {
          for (long k = b.begin(); k < b.end(); ++k) sums[k + 1] = serial(k * grain, std::min(n, (k + 1) * grain), 0, false);
        }, p);
        for (long k = 0; k < blocks; ++k) sums[k + 1] += sums[k];
        tbb::parallel_for(tbb::blocked_range<long>(0, blocks), [&](const tbb::blocked_range<long>& b) {
          for (long k = b.begin(); k < b.end(); ++k) serial(k * grain, std::min(n, (k + 1) * grain), sums[k], true);
        }, p);
      });
    }
    }
    return static_cast<double>(out[n - 1] + out[n / 3]);
  });
}
