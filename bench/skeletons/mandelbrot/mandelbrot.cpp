// Mandelbrot set, W x H pixels, up to 512 iterations per pixel: an irregular load over
// parallel_for(blocked_range2d). Parameters: rows and columns per task, partitioner, threads,
// and whether the range is split by rows first or columns first (the 2-D range's orientation).
#include <oneapi/tbb/blocked_range2d.h>
#include <oneapi/tbb/parallel_for.h>

#include <vector>

#include "common/Skeleton.h"

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long w = a.integer("w", 768), h = a.integer("h", 512), iters = a.integer("iters", 512);
  const long rows = a.integer("rows", 1), cols = a.integer("cols", 1), threads = a.integer("threads", 2);
  const std::string part = a.text("part", "auto"), split = a.text("split", "rows");
  a.done();
  std::vector<int> img(w * h);
  auto pixel = [&](long y, long x) {
    double cr = -2.2 + 3.0 * static_cast<double>(x) / static_cast<double>(w), ci = -1.2 + 2.4 * static_cast<double>(y) / static_cast<double>(h);
    double zr = 0, zi = 0;
    long k = 0;
    while (k < iters && zr * zr + zi * zi < 4.0) {
      double t = zr * zr - zi * zi + cr;
      zi = 2 * zr * zi + ci;
      zr = t;
      ++k;
    }
    img[y * w + x] = static_cast<int>(k);
  };
  skel::timed(threads, [&] {
    skel::withPartitioner(part, [&](auto&& p) {
      if (split == "rows") {
        tbb::parallel_for(tbb::blocked_range2d<long>(0, h, rows, 0, w, cols), [&](const tbb::blocked_range2d<long>& b) {
          for (long y = b.rows().begin(); y < b.rows().end(); ++y)
            for (long x = b.cols().begin(); x < b.cols().end(); ++x) pixel(y, x);
        }, p);
      } else {
        tbb::parallel_for(tbb::blocked_range2d<long>(0, w, cols, 0, h, rows), [&](const tbb::blocked_range2d<long>& b) {
          for (long y = b.cols().begin(); y < b.cols().end(); ++y)
            for (long x = b.rows().begin(); x < b.rows().end(); ++x) pixel(y, x);
        }, p);
      }
    });
    double s = 0;
    for (int v : img) s += v;
    return s;
  });
}
