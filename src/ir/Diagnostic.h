// Source locations and diagnostics. A user error (bad kernel, spec, grid or input file) is thrown as
// a UserError carrying file:line:col and a reason; the CLI prints it and exits with status 1.
// Broken internal invariants use TAWA_ASSERT, which names the invariant; the CLI exits with 2.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

namespace tawa {

struct Location {
  std::shared_ptr<const std::string> file;  // shared: thousands of ops point at one file name
  int line = 0;
  int col = 0;

  static Location at(std::shared_ptr<const std::string> f, int line, int col) { return Location{std::move(f), line, col}; }
  bool known() const { return file != nullptr; }
  std::string str() const;  // "file:line:col", or "<unknown>"
  bool operator==(const Location& o) const {
    return line == o.line && col == o.col && (file == o.file || (file && o.file && *file == *o.file));
  }
};

class UserError : public std::runtime_error {
 public:
  UserError(Location where, const std::string& msg, std::string fix = {})
      : std::runtime_error(msg), loc(std::move(where)), hint(std::move(fix)) {}
  Location loc;
  std::string hint;
  // "file:line:col: error: message" (+ "\n  hint: ..." when a fix is known).
  std::string format() const;
};

// One level of a recursive parser's descent, bounded: entering level max + 1 calls `tooDeep`, which
// throws (a UserError at the input); leaving a level gives it back. The parsers recurse once per
// nesting level, so without a bound a hostile input overflows the stack.
class NestingLevel {
 public:
  template <class TooDeep>
  NestingLevel(int& depth, int max, TooDeep&& tooDeep) : depth_(depth) {
    if (depth_ >= max) tooDeep();
    ++depth_;
  }
  ~NestingLevel() { --depth_; }
  NestingLevel(const NestingLevel&) = delete;
  NestingLevel& operator=(const NestingLevel&) = delete;

 private:
  int& depth_;
};

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void assertFailed(const char* cond, const char* what, const char* file, int line);

}  // namespace tawa

#define TAWA_ASSERT(cond, what) \
  do {                          \
    if (!(cond)) ::tawa::assertFailed(#cond, what, __FILE__, __LINE__); \
  } while (0)
