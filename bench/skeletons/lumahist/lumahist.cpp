// Luma histogram of an RGB image: each pixel's luma (77 R + 150 G + 29 B) / 256 goes into one of 256
// bins, a few rounds over the same image. The related program of histogram in the suite (its
// parameters and its three methods: atomic increments on one shared table, per-task tables merged by
// parallel_reduce, or one table per thread in tbb::combinable). Parameters: grain, partitioner,
// threads, method, the number of private sub-tables a task rotates through (it breaks the
// store-to-load chain of runs of equal bins), and the padding of the shared bins.
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/combinable.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <atomic>
#include <vector>

#include "common/Skeleton.h"

struct Bins {
  long count[256] = {};
};

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long pixels = a.integer("pixels", 6 << 20), rounds = a.integer("rounds", 16), grain = a.integer("grain", 1);
  const long threads = a.integer("threads", 2), ways = a.integer("ways", 1), pad = a.integer("pad", 1);
  const std::string part = a.text("part", "auto"), method = a.text("method", "reduce");
  a.done();
  // A smooth gradient with noise: neighbouring pixels often share a bin, as in a photograph.
  std::vector<unsigned char> rgb(3 * pixels);
  skel::Rng r(17);
  for (long p = 0; p < pixels; ++p)
    for (int c = 0; c < 3; ++c)
      rgb[3 * p + c] = static_cast<unsigned char>(((p >> 9) * (c + 1) + (r.next() & 15)) & 255);
  auto luma = [&](long p) { return (77 * rgb[3 * p] + 150 * rgb[3 * p + 1] + 29 * rgb[3 * p + 2]) >> 8; };
  auto tally = [&](long begin, long end, Bins& into) {
    std::vector<Bins> sub(ways);
    long p = begin;
    for (long w = 0; p < end; ++p, w = w + 1 == ways ? 0 : w + 1) ++sub[w].count[luma(p)];
    for (const Bins& b : sub)
      for (int k = 0; k < 256; ++k) into.count[k] += b.count[k];
  };
  skel::timed(threads, [&] {
    Bins result;
    for (long round = 0; round < rounds; ++round) {
      result = Bins{};
      const tbb::blocked_range<long> all(0, pixels, grain);
      skel::withPartitioner(part, [&](auto&& p) {
        if (method == "reduce") {
          result = tbb::parallel_reduce(all, Bins{}, [&](const tbb::blocked_range<long>& br, Bins acc) {
            tally(br.begin(), br.end(), acc);
            return acc;
          }, [](Bins x, const Bins& y) {
            for (int k = 0; k < 256; ++k) x.count[k] += y.count[k];
            return x;
          }, p);
        } else if (method == "combinable") {
          tbb::combinable<Bins> mine;
          tbb::parallel_for(all, [&](const tbb::blocked_range<long>& br) { tally(br.begin(), br.end(), mine.local()); }, p);
          mine.combine_each([&](const Bins& b) {
            for (int k = 0; k < 256; ++k) result.count[k] += b.count[k];
          });
        } else {
          std::vector<std::atomic<long>> shared(256 * pad);
          tbb::parallel_for(all, [&](const tbb::blocked_range<long>& br) {
            for (long q = br.begin(); q != br.end(); ++q) shared[luma(q) * pad].fetch_add(1, std::memory_order_relaxed);
          }, p);
          for (int k = 0; k < 256; ++k) result.count[k] = shared[k * pad].load();
        }
      });
    }
    double s = 0;
    for (int k = 0; k < 256; ++k) s += static_cast<double>(result.count[k]) * ((k * 7) % 11);
    return s;
  });
}
