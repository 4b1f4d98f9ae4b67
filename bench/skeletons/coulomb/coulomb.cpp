// Electrostatic potential and field at N probe points from N point charges (all pairs, a screened
// 1/r), parallel_for over probes. The related program of nbody in the suite (its parameters). Every
// probe reads every charge, so the j-tile decides what stays in cache. Parameters: grain (probes
// per task), partitioner, threads, the j-tile of the inner loop, the layout of the charges (array of
// structures or structure of arrays), and the inner unroll factor.
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <cmath>
#include <vector>

#include "common/Skeleton.h"

struct Charge {
  float x, y, z, q;
};

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long n = a.integer("n", 3584), grain = a.integer("grain", 1), tile = a.integer("tile", 3584), unroll = a.integer("unroll", 1);
  const long threads = a.integer("threads", 2);
  const std::string part = a.text("part", "auto"), layout = a.text("layout", "soa");
  a.done();
  std::vector<Charge> packed(n);
  std::vector<float> cx(n), cy(n), cz(n), cq(n), px(n), py(n), pz(n), phi(n), ex(n);
  skel::Rng r(21);
  for (long j = 0; j < n; ++j) {
    packed[j] = {static_cast<float>(r.uniform() * 4), static_cast<float>(r.uniform() * 4), static_cast<float>(r.uniform()),
                 static_cast<float>(r.uniform() - 0.5)};
    cx[j] = packed[j].x, cy[j] = packed[j].y, cz[j] = packed[j].z, cq[j] = packed[j].q;
    px[j] = static_cast<float>(r.uniform() * 4), py[j] = static_cast<float>(r.uniform() * 4), pz[j] = 1.5f;
  }
  const bool soa = layout == "soa";
  const float screen = 0.25f;
  auto probe = [&](long i) {
    float potential = 0, fieldX = 0;
    for (long t0 = 0; t0 < n; t0 += tile) {
      const long t1 = std::min(n, t0 + tile);
      auto add = [&](long j) {
        const float dx = (soa ? cx[j] : packed[j].x) - px[i], dy = (soa ? cy[j] : packed[j].y) - py[i];
        const float dz = (soa ? cz[j] : packed[j].z) - pz[i], q = soa ? cq[j] : packed[j].q;
        const float r2 = dx * dx + dy * dy + dz * dz + 1e-4f;
        const float rinv = 1.0f / std::sqrt(r2);
        const float e = q * rinv * std::exp(-screen * r2 * rinv);
        potential += e;
        fieldX += e * dx * rinv * rinv;
      };
      long j = t0;
      for (; j + unroll <= t1; j += unroll)
        for (long u = 0; u < unroll; ++u) add(j + u);
      while (j < t1) add(j++);
    }
    phi[i] = potential, ex[i] = fieldX;
  };
  skel::timed(threads, [&] {
    skel::withPartitioner(part, [&](auto&& p) {
      tbb::parallel_for(tbb::blocked_range<long>(0, n, grain), [&](const tbb::blocked_range<long>& b) {
        for (long i = b.begin(); i != b.end(); ++i) probe(i);
      }, p);
    });
    double s = 0;
    for (long i = 0; i < n; ++i) s += phi[i] - 0.5 * ex[i];
    return s;
  });
}
