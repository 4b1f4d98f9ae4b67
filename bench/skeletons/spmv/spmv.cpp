// Sparse matrix-vector products y = A x (CSR, rows of power-law lengths), repeated, parallel_for over
// rows. Parameters: grain, partitioner, threads, and the schedule: ranges of rows, or ranges of
// pre-cut chunks holding about equal numbers of non-zeros.
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <vector>

#include "common/Skeleton.h"

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long n = a.integer("n", 300000), reps = a.integer("reps", 10), grain = a.integer("grain", 1), threads = a.integer("threads", 2);
  const std::string part = a.text("part", "auto"), schedule = a.text("schedule", "rows");
  a.done();
  std::vector<long> rowStart(n + 1, 0);
  std::vector<int> col;
  std::vector<float> val;
  skel::Rng r(11);
  for (long i = 0; i < n; ++i) {
    double u = r.uniform();
    long len = 1 + static_cast<long>(4.0 / (0.01 + u * u));  // heavy tail: most rows short, a few long
    len = std::min(len, 2000L);
    for (long k = 0; k < len; ++k) {
      col.push_back(static_cast<int>(r.next() % static_cast<unsigned long long>(n)));
      val.push_back(static_cast<float>(r.uniform() - 0.5));
    }
    rowStart[i + 1] = static_cast<long>(col.size());
  }
  // Chunks of about `grain` * (mean row length) non-zeros each, for the balanced schedule.
  std::vector<long> chunkStart = {0};
  const long nnz = rowStart[n], per = std::max(1L, grain * nnz / n);
  for (long i = 0; i < n; ++i)
    if (rowStart[i + 1] - rowStart[chunkStart.back()] >= per) chunkStart.push_back(i + 1);
  if (chunkStart.back() != n) chunkStart.push_back(n);
  std::vector<float> x(n, 1.0f), y(n);
  auto rowsOf = [&](long b, long e) {
    for (long i = b; i < e; ++i) {
      float s = 0;
      for (long k = rowStart[i]; k < rowStart[i + 1]; ++k) s += val[k] * x[col[k]];
      y[i] = s;
    }
  };
  skel::timed(threads, [&] {
    for (long it = 0; it < reps; ++it) {
      skel::withPartitioner(part, [&](auto&& p) {
        if (schedule == "rows") {
          tbb::parallel_for(tbb::blocked_range<long>(0, n, grain), [&](const tbb::blocked_range<long>& b) { rowsOf(b.begin(), b.end()); }, p);
        } else {
          tbb::parallel_for(tbb::blocked_range<long>(0, static_cast<long>(chunkStart.size()) - 1, 1), [&](const tbb::blocked_range<long>& b) {
            for (long c = b.begin(); c < b.end(); ++c) rowsOf(chunkStart[c], chunkStart[c + 1]);
          }, p);
        }
      });
      for (long i = 0; i < n; i += 4096) x[i] = 1.0f + 0.001f * y[i];
    }
    double s = 0;
    for (long i = 0; i < n; i += 17) s += y[i];
    return s;
  });
}
