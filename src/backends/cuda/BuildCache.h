// Helpers shared by the two compilers of emitted CUDA C++ (nvcc/ptxas for the GPU, the host C++
// compiler for the emulator): running a tool, the content hash that keys the build cache, and the
// cache's root directory.
#pragma once

#include <filesystem>
#include <string>

namespace tawa::cuda {

// Runs a shell command with stderr folded into stdout; `rc` gets its exit status (-1: not run).
std::string capture(const std::string& cmd, int* rc = nullptr);
// 128-bit content hash (two FNV-1a lanes), hex: a cache key, not a security boundary.
std::string contentHash(const std::string& data);
// `override` if set, else $XDG_CACHE_HOME/tawa, else ~/.cache/tawa, else a temporary directory.
std::filesystem::path cacheRoot(const std::filesystem::path& override);
// The last n characters of s, marked with "..." when cut (for tool logs in error messages).
std::string tailOf(const std::string& s, size_t n);
// A whole file as bytes (`ok`, when given, says whether it could be opened).
std::string readFile(const std::filesystem::path& p, bool* ok = nullptr);
// Writes bytes to a file; UserError naming the file when it cannot.
void writeFile(const std::filesystem::path& p, const std::string& text);
// A single-quoted shell word.
std::string shellQuote(const std::string& s);

// A private build directory for one cache key under `root` (both created; UserError when they
// cannot be), removed when it goes out of scope unless published: a build happens there and becomes
// visible with one atomic rename, so concurrent builders never see a half-written entry.
class StagingDir {
 public:
  StagingDir(const std::filesystem::path& root, const std::string& key);
  ~StagingDir();
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Renames the directory to `dir`. If another builder published the same key first, theirs is as
  // good when it holds `marker`; otherwise UserError "cannot publish <what>".
  void publish(const std::filesystem::path& dir, const std::string& marker, const std::string& what);

 private:
  std::filesystem::path path_;
  bool published_ = false;
};

}  // namespace tawa::cuda
