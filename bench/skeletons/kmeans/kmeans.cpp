// k-means (Lloyd) on N points in 4-D with K centres for a fixed number of iterations; each
// iteration's assignment and accumulation is one parallel_reduce (or parallel_deterministic_reduce).
// Parameters: grain, partitioner, threads, reduction kind, and how distances are computed (all
// centres per point, or centres in blocks for points in blocks).
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <array>
#include <vector>

#include "common/Skeleton.h"

constexpr int D = 4, K = 16;
struct Acc {
  std::array<double, K * D> sum{};
  std::array<long, K> count{};
  double cost = 0;
  Acc& operator+=(const Acc& o) {
    for (int i = 0; i < K * D; ++i) sum[i] += o.sum[i];
    for (int i = 0; i < K; ++i) count[i] += o.count[i];
    cost += o.cost;
    return *this;
  }
};

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long n = a.integer("n", 400000), iters = a.integer("iters", 12), grain = a.integer("grain", 1), block = a.integer("block", 1);
  const long threads = a.integer("threads", 2);
  const std::string part = a.text("part", "auto"), reduce = a.text("reduce", "reduce");
  a.done();
  std::vector<float> pts(n * D);
  skel::Rng r(7);
  for (long i = 0; i < n; ++i) {
    int c = static_cast<int>(r.next() % K);
    for (int d = 0; d < D; ++d) pts[i * D + d] = static_cast<float>(c * 0.7 * ((d + c) % 3) + r.uniform());
  }
  std::array<float, K * D> cent;
  for (int k = 0; k < K * D; ++k) cent[k] = pts[(k / D) * 97 * D + k % D];
  auto accumulate = [&](long b, long e, Acc& acc) {
    for (long i0 = b; i0 < e; i0 += block) {
      long i1 = std::min(e, i0 + block);
      for (long i = i0; i < i1; ++i) {
        float best = 1e30f;
        int bk = 0;
        for (int k = 0; k < K; ++k) {
          float s = 0;
          for (int d = 0; d < D; ++d) {
            float t = pts[i * D + d] - cent[k * D + d];
            s += t * t;
          }
          if (s < best) best = s, bk = k;
        }
        for (int d = 0; d < D; ++d) acc.sum[bk * D + d] += pts[i * D + d];
        ++acc.count[bk];
        acc.cost += best;
      }
    }
  };
  skel::timed(threads, [&] {
    double cost = 0;
    for (long it = 0; it < iters; ++it) {
      auto body = [&](const tbb::blocked_range<long>& br, Acc acc) {
        accumulate(br.begin(), br.end(), acc);
        return acc;
      };
      auto join = [](Acc x, const Acc& y) { return x += y; };
      Acc total;
      tbb::blocked_range<long> range(0, n, grain);
      if (reduce == "deterministic") {
        if (part == "static") total = tbb::parallel_deterministic_reduce(range, Acc{}, body, join, tbb::static_partitioner());
        else total = tbb::parallel_deterministic_reduce(range, Acc{}, body, join, tbb::simple_partitioner());
      } else {
        skel::withPartitioner(part, [&](auto&& p) { total = tbb::parallel_reduce(range, Acc{}, body, join, p); });
      }
      for (int k = 0; k < K; ++k)
        if (total.count[k])
          for (int d = 0; d < D; ++d) cent[k * D + d] = static_cast<float>(total.sum[k * D + d] / static_cast<double>(total.count[k]));
      cost = total.cost;
    }
    return cost;
  });
}
