// An image-convolution pipeline (parallel_pipeline) over horizontal strips of a W x H image:
// take the next strip (serial, in order) -> 5x5 box blur (parallel) -> unsharp mask and clamp
// (parallel) -> write the strip out and fold it into a checksum (serial, in order).
// Parameters: tokens in flight, strip height, column tile of the filters, threads, and whether the
// two filters run as separate stages or fused into one.
#include <oneapi/tbb/parallel_pipeline.h>

#include <algorithm>
#include <vector>

#include "common/Skeleton.h"

struct Strip {
  long y0 = 0, y1 = 0;
  std::vector<float> blur, out;
};

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long w = a.integer("w", 2048), h = a.integer("h", 2048), tokens = a.integer("tokens", 2), rows = a.integer("rows", 1);
  const long tile = a.integer("tile", 2048), threads = a.integer("threads", 2);
  const std::string stages = a.text("stages", "separate");
  a.done();
  std::vector<float> img(w * h), out(w * h);
  skel::Rng r(8);
  for (auto& v : img) v = static_cast<float>(r.uniform());
  auto blur = [&](Strip* s) {
    s->blur.assign((s->y1 - s->y0) * w, 0.0f);
    for (long x0 = 0; x0 < w; x0 += tile)
      for (long y = s->y0; y < s->y1; ++y)
        for (long x = x0; x < std::min(w, x0 + tile); ++x) {
          float acc = 0;
          for (long dy = -2; dy <= 2; ++dy) {
            long yy = std::clamp(y + dy, 0L, h - 1);
            for (long dx = -2; dx <= 2; ++dx) acc += img[yy * w + std::clamp(x + dx, 0L, w - 1)];
          }
          s->blur[(y - s->y0) * w + x] = acc * (1.0f / 25.0f);
        }
    return s;
  };
  auto sharpen = [&](Strip* s) {
    s->out.resize(s->blur.size());
    for (long x0 = 0; x0 < w; x0 += tile)
      for (long y = s->y0; y < s->y1; ++y)
        for (long x = x0; x < std::min(w, x0 + tile); ++x) {
          long i = (y - s->y0) * w + x;
          s->out[i] = std::clamp(2.0f * img[y * w + x] - s->blur[i], 0.0f, 1.0f);
        }
    return s;
  };
  skel::timed(threads, [&] {
    long next = 0;
    double sum = 0;
    auto source = tbb::make_filter<void, Strip*>(tbb::filter_mode::serial_in_order, [&](tbb::flow_control& fc) -> Strip* {
      if (next >= h) {
        fc.stop();
        return nullptr;
      }
      auto* s = new Strip;
      s->y0 = next;
      s->y1 = std::min(h, next + rows);
      next = s->y1;
      return s;
    });
    auto sink = tbb::make_filter<Strip*, void>(tbb::filter_mode::serial_in_order, [&](Strip* s) {
      std::copy(s->out.begin(), s->out.end(), out.begin() + s->y0 * w);
      // Every 61st pixel of the image (not of the strip), so the checksum does not depend on `rows`.
      for (long i = (61 - s->y0 * w % 61) % 61; i < static_cast<long>(s->out.size()); i += 61) sum += s->out[i];
      delete s;
    });
    if (stages == "fused") {
      auto both = tbb::make_filter<Strip*, Strip*>(tbb::filter_mode::parallel, [&](Strip* s) { return sharpen(blur(s)); });
      tbb::parallel_pipeline(tokens, source & both & sink);
    } else {
      auto f1 = tbb::make_filter<Strip*, Strip*>(tbb::filter_mode::parallel, blur);
      auto f2 = tbb::make_filter<Strip*, Strip*>(tbb::filter_mode::parallel, sharpen);
      tbb::parallel_pipeline(tokens, source & f1 & f2 & sink);
    }
    return sum;
  });
}
