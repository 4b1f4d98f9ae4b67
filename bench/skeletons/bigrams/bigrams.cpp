// Bigram counts of a generated text (words drawn Zipf-like from a fixed vocabulary), as a
// parallel_pipeline: cut the next chunk at a word boundary (serial, in order) -> count the chunk's
// pairs of neighbouring words locally (parallel) -> merge the local counts (serial into one table, or
// parallel into a concurrent_hash_map). Each chunk starts with the last word of the chunk before, so
// the pair that straddles a cut is counted once and the counts do not depend on the chunk size. The related
// program of wordfreq in the suite (its parameters). Parameters: tokens in flight, chunk size in
// bytes, threads, the merge, and the local table kind (hash table, or sort and run-length).
#include <oneapi/tbb/concurrent_hash_map.h>
#include <oneapi/tbb/parallel_pipeline.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/Skeleton.h"

// A bigram is the text's own span "first second", so a string_view names it without copying.
using Tally = std::vector<std::pair<std::string_view, long>>;

int main(int argc, char** argv) {
  skel::Args a(argc, argv);
  const long size = a.integer("bytes", 3 << 20), tokens = a.integer("tokens", 2), chunk = a.integer("chunk", 4096);
  const long threads = a.integer("threads", 2);
  const std::string merge = a.text("merge", "serial"), local = a.text("local", "hash");
  a.done();
  skel::Rng r(29);
  std::vector<std::string> words(800);
  for (auto& w : words)
    for (long k = 0, len = 3 + static_cast<long>(r.next() % 6); k < len; ++k) w.push_back(static_cast<char>('a' + r.next() % 26));
  std::string text;
  text.reserve(size + 16);
  while (static_cast<long>(text.size()) < size) {
    const double u = r.uniform();
    text += words[std::min(words.size() - 1, static_cast<size_t>(static_cast<double>(words.size()) * u * u))];
    text.push_back(' ');
  }
  skel::timed(threads, [&] {
    size_t at = 0, carried = 0;  // the next chunk's own bytes start at `at`, its text at `carried`
    std::unordered_map<std::string_view, long> table;
    tbb::concurrent_hash_map<std::string_view, long> sharedTable;
    auto cut = tbb::make_filter<void, std::string_view>(tbb::filter_mode::serial_in_order, [&](tbb::flow_control& fc) {
      if (at >= text.size()) {
        fc.stop();
        return std::string_view();
      }
      size_t stop = std::min(text.size(), at + static_cast<size_t>(chunk));
      while (stop < text.size() && text[stop] != ' ') ++stop;
      const std::string_view piece(text.data() + carried, stop - carried);
      at = stop;
      carried = text.rfind(' ', stop - 1) + 1;  // the start of the piece's last word
      return piece;
    });
    auto pairs = tbb::make_filter<std::string_view, Tally*>(tbb::filter_mode::parallel, [&](std::string_view piece) {
      // Word starts in the piece; bigram k spans from start k to the end of word k + 1.
      std::vector<std::pair<size_t, size_t>> spans;
      for (size_t i = 0; i < piece.size();) {
        if (piece[i] == ' ') {
          ++i;
          continue;
        }
        const size_t j = std::min(piece.size(), piece.find(' ', i));
        spans.push_back({i, j});
        i = j;
      }
      auto* tally = new Tally;
      if (local == "hash") {
        std::unordered_map<std::string_view, long> counts;
        for (size_t k = 0; k + 1 < spans.size(); ++k) ++counts[piece.substr(spans[k].first, spans[k + 1].second - spans[k].first)];
        tally->assign(counts.begin(), counts.end());
      } else {
        std::vector<std::string_view> all;
        for (size_t k = 0; k + 1 < spans.size(); ++k) all.push_back(piece.substr(spans[k].first, spans[k + 1].second - spans[k].first));
        std::sort(all.begin(), all.end());
        for (auto run = all.begin(); run != all.end();) {
          auto next = std::upper_bound(run, all.end(), *run);
          tally->push_back({*run, static_cast<long>(next - run)});
          run = next;
        }
      }
      return tally;
    });
    if (merge == "serial") {
      tbb::parallel_pipeline(tokens, cut & pairs & tbb::make_filter<Tally*, void>(tbb::filter_mode::serial_out_of_order, [&](Tally* t) {
        for (auto& [bigram, n] : *t) table[bigram] += n;
        delete t;
      }));
    } else {
      tbb::parallel_pipeline(tokens, cut & pairs & tbb::make_filter<Tally*, void>(tbb::filter_mode::parallel, [&](Tally* t) {
        for (auto& [bigram, n] : *t) {
          tbb::concurrent_hash_map<std::string_view, long>::accessor slot;
          sharedTable.insert(slot, bigram);
          slot->second += n;
        }
        delete t;
      }));
      for (auto& [bigram, n] : sharedTable) table[bigram] = n;
    }
    double s = static_cast<double>(table.size());
    for (auto& [bigram, n] : table) s += static_cast<double>(n % 97);
    return s;
  });
}
