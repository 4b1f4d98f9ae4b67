// Black-Scholes pricing of N European options (call and put), parallel_for over options.
// Parameters: grain, partitioner, threads, data layout (arrays of fields or array of options), and
// the batch of options priced per inner loop (a temporary per batch, for vectorization).
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <cmath>
#include <vector>

#include "common/Skeleton.h"

struct Option {
  float s, k, t, v, call, put;
};

static inline float cnd(float d) { return 0.5f * std::erfc(-d * 0.70710678f); }

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long n = a.integer("n", 3 << 20), grain = a.integer("grain", 1), batch = a.integer("batch", 1), threads = a.integer("threads", 2);
  const std::string part = a.text("part", "auto"), layout = a.text("layout", "soa");
  a.done();
  std::vector<float> S(n), K(n), T(n), V(n), C(n), P(n);
  std::vector<Option> opts(n);
  skel::Rng r(5);
  for (long i = 0; i < n; ++i) {
    S[i] = static_cast<float>(10 + 90 * r.uniform());
    K[i] = static_cast<float>(10 + 90 * r.uniform());
    T[i] = static_cast<float>(0.2 + 2 * r.uniform());
    V[i] = static_cast<float>(0.05 + 0.5 * r.uniform());
    opts[i] = {S[i], K[i], T[i], V[i], 0, 0};
  }
  const float rate = 0.02f;
  auto price = [&](float s, float k, float t, float v, float& c, float& p) {
    float sq = std::sqrt(t);
    float d1 = (std::log(s / k) + (rate + 0.5f * v * v) * t) / (v * sq);
    float d2 = d1 - v * sq;
    float e = k * std::exp(-rate * t);
    c = s * cnd(d1) - e * cnd(d2);
    p = e * cnd(-d2) - s * cnd(-d1);
  };
  const bool soa = layout == "soa";
  skel::timed(threads, [&] {
    skel::withPartitioner(part, [&](auto&& p) {
      tbb::parallel_for(tbb::blocked_range<long>(0, n, grain), [&](const tbb::blocked_range<long>& b) {
        float tmpC[64], tmpP[64];
        for (long i0 = b.begin(); i0 < b.end(); i0 += batch) {
          long i1 = std::min(b.end(), i0 + batch);
          for (long i = i0; i < i1; ++i) {
            if (soa) price(S[i], K[i], T[i], V[i], tmpC[i - i0], tmpP[i - i0]);
            else price(opts[i].s, opts[i].k, opts[i].t, opts[i].v, tmpC[i - i0], tmpP[i - i0]);
          }
          for (long i = i0; i < i1; ++i) {
            if (soa) C[i] = tmpC[i - i0], P[i] = tmpP[i - i0];
            else opts[i].call = tmpC[i - i0], opts[i].put = tmpP[i - i0];
          }
        }
      }, p);
    });
    double s = 0;
    for (long i = 0; i < n; i += 13) s += soa ? C[i] + P[i] : opts[i].call + opts[i].put;
    return s;
  });
}
