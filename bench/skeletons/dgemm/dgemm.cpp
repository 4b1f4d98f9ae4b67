// Blocked C += A * B^T in double precision (N x N), parallel_for over blocked_range2d of C's tiles.
// The related program of matmul in the suite (its parameters, another precision and B transposed, so
// the innermost loop is a dot product over k). Parameters: cache tiles ti x tj x tk, grain (tiles per
// task side), partitioner, threads.
#include <oneapi/tbb/blocked_range2d.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <vector>

#include "common/Skeleton.h"

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long n = a.integer("n", 640), ti = a.integer("ti", 64), tj = a.integer("tj", 64), tk = a.integer("tk", 64);
  const long grain = a.integer("grain", 1), threads = a.integer("threads", 2);
  const std::string part = a.text("part", "auto");
  a.done();
  std::vector<double> A(n * n), Bt(n * n), C(n * n);
  skel::Rng r(11);
  for (auto& v : A) v = r.uniform() * 2 - 1;
  for (auto& v : Bt) v = r.uniform() * 2 - 1;
  for (auto& v : C) v = r.uniform();
  auto tiles = [](long len, long t) { return (len + t - 1) / t; };
  skel::timed(threads, [&] {
    skel::withPartitioner(part, [&](auto&& p) {
      tbb::parallel_for(tbb::blocked_range2d<long>(0, tiles(n, ti), grain, 0, tiles(n, tj), grain),
                        [&](const tbb::blocked_range2d<long>& blk) {
                          for (long ib = blk.rows().begin(); ib != blk.rows().end(); ++ib)
                            for (long jb = blk.cols().begin(); jb != blk.cols().end(); ++jb) {
                              const long i1 = std::min(n, (ib + 1) * ti), j1 = std::min(n, (jb + 1) * tj);
                              for (long kb = 0; kb < n; kb += tk) {
                                const long k1 = std::min(n, kb + tk);
                                for (long i = ib * ti; i < i1; ++i)
                                  for (long j = jb * tj; j < j1; ++j) {
                                    const double* ai = &A[i * n];
                                    const double* bj = &Bt[j * n];
                                    double dot = 0;
                                    for (long k = kb; k < k1; ++k) dot += ai[k] * bj[k];
                                    C[i * n + j] += dot;
                                  }
                              }
                            }
                        },
                        p);
    });
    double s = 0;
    for (long i = 0; i < n; ++i) s += C[i * n + (i * 5) % n];
    return s;
  });
}
