// 2-D Jacobi stencil (5 points) on an N x N grid for a number of sweeps, parallel_for over
// blocked_range2d. Parameters: block rows and columns (the grain of each dimension), partitioner,
// threads, loop order inside a block, and whether sweeps swap buffers or copy back.
#include <oneapi/tbb/blocked_range2d.h>
#include <oneapi/tbb/parallel_for.h>

#include <utility>
#include <vector>

#include "common/Skeleton.h"

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long n = a.integer("n", 1024), sweeps = a.integer("sweeps", 100);
  const long rows = a.integer("rows", 16), cols = a.integer("cols", 1024), threads = a.integer("threads", 2);
  const std::string part = a.text("part", "auto"), order = a.text("order", "ij"), update = a.text("update", "swap");
  a.done();
  std::vector<float> u(n * n), v(n * n);
  skel::Rng r(2);
  for (auto& x : u) x = static_cast<float>(r.uniform());
  v = u;
  skel::timed(threads, [&] {
    float* src = u.data();
    float* dst = v.data();
    for (long s = 0; s < sweeps; ++s) {
      skel::withPartitioner(part, [&](auto&& p) {
        tbb::parallel_for(
            tbb::blocked_range2d<long>(1, n - 1, rows, 1, n - 1, cols),
            [&](const tbb::blocked_range2d<long>& b) {
              auto at = [&](long i, long j) {
                dst[i * n + j] = 0.2f * (src[i * n + j] + src[(i - 1) * n + j] + src[(i + 1) * n + j] + src[i * n + j - 1] + src[i * n + j + 1]);
              };
              if (order == "ij") {
                for (long i = b.rows().begin(); i < b.rows().end(); ++i)
                  for (long j = b.cols().begin(); j < b.cols().end(); ++j) at(i, j);
              } else {
                for (long j = b.cols().begin(); j < b.cols().end(); ++j)
                  for (long i = b.rows().begin(); i < b.rows().end(); ++i) at(i, j);
              }
            },
            p);
      });
      if (update == "swap") {
        std::swap(src, dst);
      } else {
        tbb::parallel_for(tbb::blocked_range<long>(0, n * n, rows * cols), [&](const tbb::blocked_range<long>& b) {
          for (long i = b.begin(); i < b.end(); ++i) src[i] = dst[i];
        });
      }
    }
    double sum = 0;
    for (long i = 0; i < n * n; i += 97) sum += src[i];
    return sum;
  });
}
