// One all-pairs n-body force step (softened gravity, N bodies), parallel_for over bodies. Parameters:
// grain (bodies per task), partitioner, threads, the j-tile of the inner loop (cache blocking),
// layout of the bodies (array of structures or structure of arrays), and the inner unroll factor.
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <cmath>
#include <vector>

#include "common/Skeleton.h"

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long n = a.integer("n", 4096), grain = a.integer("grain", 1), tile = a.integer("tile", 4096), unroll = a.integer("unroll", 1);
  const long threads = a.integer("threads", 2);
  const std::string part = a.text("part", "auto"), layout = a.text("layout", "soa");
  a.done();
  std::vector<float> x(n), y(n), z(n), m(n), aos(4 * n), fx(n), fy(n), fz(n);
  skel::Rng r(4);
  for (long i = 0; i < n; ++i) {
    x[i] = static_cast<float>(r.uniform());
    y[i] = static_cast<float>(r.uniform());
    z[i] = static_cast<float>(r.uniform());
    m[i] = static_cast<float>(0.5 + r.uniform());
    aos[4 * i] = x[i], aos[4 * i + 1] = y[i], aos[4 * i + 2] = z[i], aos[4 * i + 3] = m[i];
  }
  const bool soa = layout == "soa";
  auto body = [&](long i) {
    float ax = 0, ay = 0, az = 0;
    const float xi = x[i], yi = y[i], zi = z[i];
    for (long j0 = 0; j0 < n; j0 += tile) {
      const long j1 = std::min(n, j0 + tile);
      long j = j0;
      auto one = [&](long jj) {
        float dx, dy, dz, mj;
        if (soa) dx = x[jj] - xi, dy = y[jj] - yi, dz = z[jj] - zi, mj = m[jj];
        else dx = aos[4 * jj] - xi, dy = aos[4 * jj + 1] - yi, dz = aos[4 * jj + 2] - zi, mj = aos[4 * jj + 3];
        float d2 = dx * dx + dy * dy + dz * dz + 1e-3f;
        float inv = 1.0f / std::sqrt(d2);
        float s = mj * inv * inv * inv;
        ax += s * dx, ay += s * dy, az += s * dz;
      };
      for (; j + unroll <= j1; j += unroll)
        for (long u = 0; u < unroll; ++u) one(j + u);
      for (; j < j1; ++j) one(j);
    }
    fx[i] = ax, fy[i] = ay, fz[i] = az;
  };
  skel::timed(threads, [&] {
    skel::withPartitioner(part, [&](auto&& p) {
      tbb::parallel_for(tbb::blocked_range<long>(0, n, grain), [&](const tbb::blocked_range<long>& b) {
        for (long i = b.begin(); i < b.end(); ++i) body(i);
      }, p);
    });
    double s = 0;
    for (long i = 0; i < n; ++i) s += fx[i] + 2 * fy[i] + 3 * fz[i];
    return s;
  });
}
