// Word frequencies of a generated text (Zipf-like over a fixed vocabulary), as a parallel_pipeline:
// cut the next chunk at a word boundary (serial, in order) -> count its words locally (parallel) ->
// merge the local counts (serial into one map, or parallel into a concurrent_hash_map).
// Parameters: tokens in flight, chunk size in bytes, threads, the merge, and the local table kind.
#include <oneapi/tbb/concurrent_hash_map.h>
#include <oneapi/tbb/parallel_pipeline.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/Skeleton.h"

using Counts = std::vector<std::pair<std::string_view, long>>;

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long bytes = a.integer("bytes", 12 << 20), tokens = a.integer("tokens", 2), chunk = a.integer("chunk", 4096);
  const long threads = a.integer("threads", 2);
  const std::string merge = a.text("merge", "serial"), local = a.text("local", "hash");
  a.done();
  std::vector<std::string> vocab;
  skel::Rng r(9);
  for (int i = 0; i < 20000; ++i) {
    std::string w;
    long len = 2 + static_cast<long>(r.next() % 9);
    for (long k = 0; k < len; ++k) w += static_cast<char>('a' + r.next() % 26);
    vocab.push_back(w);
  }
  std::string text;
  text.reserve(bytes + 16);
  while (static_cast<long>(text.size()) < bytes) {
    double u = r.uniform();
    size_t idx = static_cast<size_t>(static_cast<double>(vocab.size()) * u * u * u);
    text += vocab[std::min(idx, vocab.size() - 1)];
    text += ' ';
  }
  skel::timed(threads, [&] {
    size_t pos = 0;
    std::unordered_map<std::string_view, long> total;
    tbb::concurrent_hash_map<std::string_view, long> shared;
    auto cut = tbb::make_filter<void, std::string_view>(tbb::filter_mode::serial_in_order, [&](tbb::flow_control& fc) {
      if (pos >= text.size()) {
        fc.stop();
        return std::string_view();
      }
      size_t end = std::min(text.size(), pos + static_cast<size_t>(chunk));
      while (end < text.size() && text[end] != ' ') ++end;
      std::string_view v(text.data() + pos, end - pos);
      pos = end;
      return v;
    });
    auto count = tbb::make_filter<std::string_view, Counts*>(tbb::filter_mode::parallel, [&](std::string_view v) {
      auto* out = new Counts;
      auto words = [&](auto&& add) {
        size_t i = 0;
        while (i < v.size()) {
          while (i < v.size() && v[i] == ' ') ++i;
          size_t j = i;
          while (j < v.size() && v[j] != ' ') ++j;
          if (j > i) add(v.substr(i, j - i));
          i = j;
        }
      };
      if (local == "hash") {
        std::unordered_map<std::string_view, long> m;
        words([&](std::string_view w) { ++m[w]; });
        out->assign(m.begin(), m.end());
      } else {
        std::vector<std::string_view> all;
        words([&](std::string_view w) { all.push_back(w); });
        std::sort(all.begin(), all.end());
        for (size_t i = 0; i < all.size();) {
          size_t j = i;
          while (j < all.size() && all[j] == all[i]) ++j;
          out->push_back({all[i], static_cast<long>(j - i)});
          i = j;
        }
      }
      return out;
    });
    if (merge == "serial") {
      auto sink = tbb::make_filter<Counts*, void>(tbb::filter_mode::serial_out_of_order, [&](Counts* c) {
        for (auto& [w, n] : *c) total[w] += n;
        delete c;
      });
      tbb::parallel_pipeline(tokens, cut & count & sink);
    } else {
      auto sink = tbb::make_filter<Counts*, void>(tbb::filter_mode::parallel, [&](Counts* c) {
        for (auto& [w, n] : *c) {
          tbb::concurrent_hash_map<std::string_view, long>::accessor acc;
          shared.insert(acc, w);
          acc->second += n;
        }
        delete c;
      });
      tbb::parallel_pipeline(tokens, cut & count & sink);
      for (auto& [w, n] : shared) total[w] = n;
    }
    double s = 0;
    for (auto& [w, n] : total) s += static_cast<double>(n) * static_cast<double>(w.size());
    return s;
  });
}
