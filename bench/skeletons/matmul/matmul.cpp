// Blocked matrix multiply C = A * B (float, N x N) with parallel_for over blocked_range2d of tiles.
// Parameters: cache tiles ti x tj x tk, grain (tiles per task side), partitioner, threads.
#include <oneapi/tbb/blocked_range2d.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <vector>

#include "common/Skeleton.h"

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long n = a.integer("n", 768), ti = a.integer("ti", 64), tj = a.integer("tj", 64), tk = a.integer("tk", 64);
  const long grain = a.integer("grain", 1), threads = a.integer("threads", 2);
  const std::string part = a.text("part", "auto");
  a.done();
  std::vector<float> A(n * n), B(n * n), C(n * n, 0.0f);
  skel::Rng r(1);
  for (auto& x : A) x = static_cast<float>(r.uniform() - 0.5);
  for (auto& x : B) x = static_cast<float>(r.uniform() - 0.5);
  const long bi = (n + ti - 1) / ti, bj = (n + tj - 1) / tj;
  skel::timed(threads, [&] {
    skel::withPartitioner(part, [&](auto&& p) {
      tbb::parallel_for(
          tbb::blocked_range2d<long>(0, bi, grain, 0, bj, grain),
          [&](const tbb::blocked_range2d<long>& b) {
            for (long I = b.rows().begin(); I < b.rows().end(); ++I)
              for (long J = b.cols().begin(); J < b.cols().end(); ++J)
                for (long k0 = 0; k0 < n; k0 += tk)
                  for (long i = I * ti; i < std::min(n, (I + 1) * ti); ++i)
                    for (long k = k0; k < std::min(n, k0 + tk); ++k) {
                      const float aik = A[i * n + k];
                      float* c = &C[i * n];
                      const float* bk = &B[k * n];
                      for (long j = J * tj; j < std::min(n, (J + 1) * tj); ++j) c[j] += aik * bk[j];
                    }
          },
          p);
    });
    double s = 0;
    for (long i = 0; i < n; i += 7) s += C[i * n + (i * 3) % n];
    return s;
  });
}
