// Sorting N 32-bit keys with task parallelism (tbb::parallel_invoke): a parallel merge sort whose
// merge is itself split (by binary search) above a cut-off, or a parallel quicksort. Below `cutoff`
// elements a task sorts serially with std::sort. Parameters: algorithm, serial cut-off, merge
// cut-off, threads.
#include <oneapi/tbb/parallel_invoke.h>

#include <algorithm>
#include <vector>

#include "common/Skeleton.h"

using It = unsigned*;

static long cutoff, mergeCutoff;

static void pmerge(It a, It ae, It b, It be, It out) {
  long n = (ae - a) + (be - b);
  if (n <= mergeCutoff) {
    std::merge(a, ae, b, be, out);
    return;
  }
  if (ae - a < be - b) std::swap(a, b), std::swap(ae, be);
  It am = a + (ae - a) / 2;
  It bm = std::lower_bound(b, be, *am);
  It om = out + (am - a) + (bm - b);
  tbb::parallel_invoke([&] { pmerge(a, am, b, bm, out); }, [&] { pmerge(am, ae, bm, be, om); });
}

// Sorts [a, e) into [a, e), using tmp of the same length as scratch.
static void msort(It a, It e, It tmp) {
  long n = e - a;
  if (n <= cutoff) {
    std::sort(a, e);
    return;
  }
  It m = a + n / 2;
  tbb::parallel_invoke([&] { msort(a, m, tmp); }, [&] { msort(m, e, tmp + n / 2); });
  pmerge(a, m, m, e, tmp);
  std::copy(tmp, tmp + n, a);
}

static void qsort_(It a, It e) {
  long n = e - a;
  if (n <= cutoff) {
    std::sort(a, e);
    return;
  }
  unsigned x = a[0], y = a[n / 2], z = a[n - 1];
  unsigned pivot = std::max(std::min(x, y), std::min(std::max(x, y), z));
  It m1 = std::partition(a, e, [&](unsigned v) { return v < pivot; });
  It m2 = std::partition(m1, e, [&](unsigned v) { return v == pivot; });
  tbb::parallel_invoke([&] { qsort_(a, m1); }, [&] { qsort_(m2, e); });
}

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long n = a.integer("n", 6 << 20), threads = a.integer("threads", 2);
  cutoff = a.integer("cutoff", 500);
  mergeCutoff = a.integer("merge_cutoff", 1 << 16);
  const std::string algo = a.text("algo", "merge");
  a.done();
  std::vector<unsigned> v(n), tmp(n);
  skel::Rng r(10);
  for (auto& x : v) x = static_cast<unsigned>(r.next());
  skel::timed(threads, [&] {
    if (algo == "merge") msort(v.data(), v.data() + n, tmp.data());
    else qsort_(v.data(), v.data() + n);
    double s = 0;
    for (long i = 0; i < n; i += n / 64) s += v[i];
    return std::is_sorted(v.begin(), v.end()) ? s : -1.0;
  });
}
