// Colour quantization: Lloyd iterations that fit a palette of P colours to an image's pixels in RGB
// (each iteration assigns every pixel its nearest palette colour and moves each colour to the mean
// of its pixels, one parallel_reduce or parallel_deterministic_reduce). The related program of
// kmeans in the suite (its parameters). Parameters: grain, partitioner, threads, the reduction, and
// the pixel block (pixels whose distances to the palette are computed together, colour-major).
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <algorithm>
#include <vector>

#include "common/Skeleton.h"

constexpr int P = 24;
struct Fit {
  double r[P] = {}, g[P] = {}, b[P] = {};
  long used[P] = {};
  double error = 0;
};

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long pixels = a.integer("pixels", 360000), iters = a.integer("iters", 10), grain = a.integer("grain", 1);
  const long block = a.integer("block", 1), threads = a.integer("threads", 2);
  const std::string part = a.text("part", "auto"), reduce = a.text("reduce", "reduce");
  a.done();
  std::vector<float> R(pixels), G(pixels), B(pixels);
  skel::Rng rng(23);
  for (long i = 0; i < pixels; ++i) {
    const double tone = static_cast<double>((i / 600) % 7) / 7.0;
    R[i] = static_cast<float>(tone + 0.2 * rng.uniform());
    G[i] = static_cast<float>(1.0 - tone + 0.2 * rng.uniform());
    B[i] = static_cast<float>(0.5 * tone + 0.3 * rng.uniform());
  }
  float pr[P], pg[P], pb[P];
  for (int c = 0; c < P; ++c) pr[c] = R[c * 9973], pg[c] = G[c * 9973], pb[c] = B[c * 9973];
  auto assign = [&](long begin, long end, Fit& f) {
    std::vector<float> dist(static_cast<size_t>(block) * P);
    for (long i0 = begin; i0 < end; i0 += block) {
      const long m = std::min(block, end - i0);
      for (int c = 0; c < P; ++c)
        for (long t = 0; t < m; ++t) {
          const float dr = R[i0 + t] - pr[c], dg = G[i0 + t] - pg[c], db = B[i0 + t] - pb[c];
          dist[c * block + t] = dr * dr + dg * dg + db * db;
        }
      for (long t = 0; t < m; ++t) {
        int best = 0;
        for (int c = 1; c < P; ++c)
          if (dist[c * block + t] < dist[best * block + t]) best = c;
        f.r[best] += R[i0 + t], f.g[best] += G[i0 + t], f.b[best] += B[i0 + t];
        ++f.used[best];
        f.error += dist[best * block + t];
      }
    }
  };
  skel::timed(threads, [&] {
    double error = 0;
    for (long it = 0; it < iters; ++it) {
      const tbb::blocked_range<long> range(0, pixels, grain);
      auto body = [&](const tbb::blocked_range<long>& br, Fit f) {
        assign(br.begin(), br.end(), f);
        return f;
      };
      auto merge = [](Fit x, const Fit& y) {
        for (int c = 0; c < P; ++c) x.r[c] += y.r[c], x.g[c] += y.g[c], x.b[c] += y.b[c], x.used[c] += y.used[c];
        x.error += y.error;
        return x;
      };
      Fit fit;
      if (reduce == "deterministic") {
        if (part == "simple") fit = tbb::parallel_deterministic_reduce(range, Fit{}, body, merge, tbb::simple_partitioner());
        else fit = tbb::parallel_deterministic_reduce(range, Fit{}, body, merge, tbb::static_partitioner());
      } else {
        skel::withPartitioner(part, [&](auto&& p) { fit = tbb::parallel_reduce(range, Fit{}, body, merge, p); });
      }
      for (int c = 0; c < P; ++c) {
        if (fit.used[c] == 0) continue;
        const double inv = 1.0 / static_cast<double>(fit.used[c]);
        pr[c] = static_cast<float>(fit.r[c] * inv), pg[c] = static_cast<float>(fit.g[c] * inv), pb[c] = static_cast<float>(fit.b[c] * inv);
      }
      error = fit.error;
    }
    return error;
  });
}
