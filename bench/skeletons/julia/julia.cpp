// Julia set of c = -0.123 + 0.745i (the "rabbit"), W x H pixels, up to 768 iterations per pixel, smooth escape count:
// an irregular load (the pixels inside the filled set run every iteration, the others few) over
// parallel_for(blocked_range2d). The related program of mandelbrot in the suite (a near twin, on
// purpose: it has mandelbrot's parameters). Parameters: rows and columns per task, partitioner,
// threads, and whether the range is split by rows first or columns first.
#include <oneapi/tbb/blocked_range2d.h>
#include <oneapi/tbb/parallel_for.h>

#include <cmath>
#include <vector>

#include "common/Skeleton.h"

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long w = a.integer("w", 768), h = a.integer("h", 768), limit = a.integer("iters", 768);
  const long rows = a.integer("rows", 1), cols = a.integer("cols", 1), threads = a.integer("threads", 2);
  const std::string part = a.text("part", "auto"), split = a.text("split", "rows");
  a.done();
  std::vector<float> escape(w * h);
  const double cre = -0.123, cim = 0.745;
  auto shade = [&](long py, long px) {
    double re = -1.6 + 3.2 * static_cast<double>(px) / static_cast<double>(w);
    double im = -1.6 + 3.2 * static_cast<double>(py) / static_cast<double>(h);
    long n = 0;
    double m2 = re * re + im * im;
    for (; n < limit && m2 < 16.0; ++n) {
      const double nre = re * re - im * im + cre;
      im = 2.0 * re * im + cim;
      re = nre;
      m2 = re * re + im * im;
    }
    escape[py * w + px] = n == limit ? 0.0f : static_cast<float>(static_cast<double>(n) + 1.0 - std::log2(std::log2(m2) * 0.5));
  };
  skel::timed(threads, [&] {
    skel::withPartitioner(part, [&](auto&& p) {
      if (split == "rows") {
        tbb::parallel_for(tbb::blocked_range2d<long>(0, h, rows, 0, w, cols), [&](const tbb::blocked_range2d<long>& b) {
          for (long py = b.rows().begin(); py < b.rows().end(); ++py)
            for (long px = b.cols().begin(); px < b.cols().end(); ++px) shade(py, px);
        }, p);
      } else {
        tbb::parallel_for(tbb::blocked_range2d<long>(0, w, cols, 0, h, rows), [&](const tbb::blocked_range2d<long>& b) {
          for (long px = b.rows().begin(); px < b.rows().end(); ++px)
            for (long py = b.cols().begin(); py < b.cols().end(); ++py) shade(py, px);
        }, p);
      }
    });
    double s = 0;
    for (long i = 0; i < w * h; i += 3) s += escape[i];
    return s;
  });
}
