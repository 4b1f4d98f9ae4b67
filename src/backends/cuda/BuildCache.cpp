#include "backends/cuda/BuildCache.h"

#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

#include <unistd.h>

#include "ir/Diagnostic.h"

namespace tawa::cuda {

std::string capture(const std::string& cmd, int* rc) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) {
    if (rc) *rc = -1;
    return out;
  }
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int st = pclose(p);
  if (rc) *rc = st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  return out;
}

std::string contentHash(const std::string& data) {
  uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x9e3779b97f4a7c15ull;
  for (unsigned char c : data) {
    h1 = (h1 ^ c) * 0x100000001b3ull;
    h2 = (h2 ^ c) * 0x100000001b3ull;
    h2 ^= h2 >> 31;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h1), static_cast<unsigned long long>(h2));
  return buf;
}

std::filesystem::path cacheRoot(const std::filesystem::path& override) {
  if (!override.empty()) return override;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "tawa";
  if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "tawa";
  return std::filesystem::temp_directory_path() / "tawa-cache";
}

std::string tailOf(const std::string& s, size_t n) { return s.size() <= n ? s : "..." + s.substr(s.size() - n); }

std::string readFile(const std::filesystem::path& p, bool* ok) {
  std::ifstream f(p, std::ios::binary);
  if (ok) *ok = static_cast<bool>(f);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void writeFile(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  if (!f) throw UserError(Location::at(std::make_shared<const std::string>(p.string()), 0, 0), "cannot write file");
}

namespace {
Location at(const std::filesystem::path& p) { return Location::at(std::make_shared<const std::string>(p.string()), 0, 0); }
}  // namespace

StagingDir::StagingDir(const std::filesystem::path& root, const std::string& key) {
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec) throw UserError(at(root), "cannot create the cache directory: " + ec.message());
  std::random_device rd;
  path_ = root / ("tmp-" + key.substr(0, 8) + "-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
  std::filesystem::create_directories(path_, ec);
  if (ec) throw UserError(at(path_), "cannot create a build directory: " + ec.message());
}

StagingDir::~StagingDir() {
  std::error_code ec;
  if (!published_) std::filesystem::remove_all(path_, ec);
}

void StagingDir::publish(const std::filesystem::path& dir, const std::string& marker, const std::string& what) {
  std::error_code ec;
  std::filesystem::rename(path_, dir, ec);
  if (!ec) {
    published_ = true;
    return;
  }
  if (!std::filesystem::exists(dir / marker)) throw UserError(at(dir), "cannot publish " + what + ": " + ec.message());
}

std::string shellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace tawa::cuda
