// Histogram of N bytes-like keys into 256 bins. Methods: atomic increments on one shared histogram
// (parallel_for), per-task histograms merged by parallel_reduce, or tbb::combinable per thread.
// Parameters: grain, partitioner, threads, method, and the number of private sub-histograms per
// task (breaks the store-to-load dependency on repeated keys), and the padding of shared bins.
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/combinable.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <array>
#include <atomic>
#include <vector>

#include "common/Skeleton.h"

using Hist = std::array<long, 256>;

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long n = a.integer("n", 24 << 20), grain = a.integer("grain", 1), threads = a.integer("threads", 2);
  const long ways = a.integer("ways", 1), pad = a.integer("pad", 1), rounds = a.integer("rounds", 8);
  const std::string part = a.text("part", "auto"), method = a.text("method", "reduce");
  a.done();
  std::vector<unsigned char> keys(n);
  skel::Rng r(3);
  for (auto& k : keys) k = static_cast<unsigned char>((r.next() >> 20) % 97 + ((r.next() & 7) == 0 ? 100 : 0));
  auto local = [&](long b, long e, Hist& out) {
    std::vector<Hist> sub(ways);
    for (auto& h : sub) h.fill(0);
    long i = b;
    for (; i + ways <= e; i += ways)
      for (long w = 0; w < ways; ++w) ++sub[w][keys[i + w]];
    for (; i < e; ++i) ++sub[0][keys[i]];
    for (auto& h : sub)
      for (int k = 0; k < 256; ++k) out[k] += h[k];
  };
  skel::timed(threads, [&] {
    Hist total{};
    for (long round = 0; round < rounds; ++round) {
      total = Hist{};
      skel::withPartitioner(part, [&](auto&& p) {
      if (method == "atomic") {
        // pad spreads the shared bins over more cache lines (less false sharing between threads).
        std::vector<std::atomic<long>> h(256 * pad);
        tbb::parallel_for(tbb::blocked_range<long>(0, n, grain), [&](const tbb::blocked_range<long>& br) {
          for (long i = br.begin(); i < br.end(); ++i) h[keys[i] * pad].fetch_add(1, std::memory_order_relaxed);
        }, p);
        for (int k = 0; k < 256; ++k) total[k] = h[k * pad].load();
      } else if (method == "reduce") {
        total = tbb::parallel_reduce(tbb::blocked_range<long>(0, n, grain), Hist{}, [&](const tbb::blocked_range<long>& br, Hist acc) {
          local(br.begin(), br.end(), acc);
          return acc;
        }, [](Hist x, const Hist& y) {
          for (int k = 0; k < 256; ++k) x[k] += y[k];
          return x;
        }, p);
      } else {
        tbb::combinable<Hist> per([] { return Hist{}; });
        tbb::parallel_for(tbb::blocked_range<long>(0, n, grain), [&](const tbb::blocked_range<long>& br) {
          local(br.begin(), br.end(), per.local());
        }, p);
        per.combine_each([&](const Hist& h) {
          for (int k = 0; k < 256; ++k) total[k] += h[k];
        });
      }
    });
    }
    double s = 0;
    for (int k = 0; k < 256; ++k) s += static_cast<double>(total[k]) * (k % 13);
    return s;
  });
}
