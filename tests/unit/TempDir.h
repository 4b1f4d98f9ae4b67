// The unit tests' scratch folder: one per test process, under the system temp directory, created on
// first use and removed with everything in it when the process exits. Tests write their temporary
// kernels, records and build folders here instead of leaving files in /tmp.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>

namespace tawa::test {

inline const std::filesystem::path& tempDir() {
  struct Dir {
    std::filesystem::path path;
    Dir() {
      path = std::filesystem::temp_directory_path() /
             ("tawa-unit-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}() % 1000000));
      std::filesystem::create_directories(path);
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static Dir dir;
  return dir.path;
}

}  // namespace tawa::test
