#include "backends/cuda/ProfileBuffer.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <ostream>

#include "ir/Diagnostic.h"

namespace tawa::cuda {

namespace {

template <typename T>
T read(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

std::vector<profile::BlockTrace> decodeProfile(const ProfileLayout& layout, const uint8_t* data, size_t bytes,
                                               std::array<int64_t, 3> launched, double clockGHz) {
  const int64_t blocks = launched[0] * launched[1] * launched[2];
  const int nwg = layout.warpGroups;
  const int64_t cap = layout.capacity;
  if (cap <= 0 || nwg <= 0 || static_cast<int64_t>(bytes) < blocks * layout.bytesPerBlock())
    throw UserError(Location::at(std::make_shared<const std::string>("<profile>"), 0, 0),
                    "the profile buffer holds " + std::to_string(bytes) + " bytes; " + std::to_string(blocks) + " block(s) of " +
                        std::to_string(layout.bytesPerBlock()) + " were expected");
  struct Head {
    uint32_t n = 0, sm = 0;
    uint64_t clk0 = 0, gt0 = 0, gt1 = 0;
  };
  auto head = [&](int64_t b, int w) {
    const uint8_t* p = data + (b * nwg + w) * layout.recordBytes();
    Head h;
    h.n = read<uint32_t>(p);
    h.sm = read<uint32_t>(p + 4);
    h.clk0 = read<uint64_t>(p + 8);
    h.gt0 = read<uint64_t>(p + 16);
    h.gt1 = read<uint64_t>(p + 24);
    return h;
  };
  uint64_t kernelStart = UINT64_MAX;
  for (int64_t b = 0; b < blocks; ++b)
    for (int w = 0; w < nwg; ++w) kernelStart = std::min(kernelStart, head(b, w).gt0);
  std::vector<profile::BlockTrace> out;
  for (int64_t b = 0; b < blocks; ++b) {
    profile::BlockTrace t(static_cast<size_t>(cap * nwg));
    t.block = b;
    t.pid = {b % launched[0], (b / launched[0]) % launched[1], b / (launched[0] * launched[1])};
    t.roles = layout.roles;
    uint64_t clk0 = UINT64_MAX, gt0 = UINT64_MAX, gt1 = 0;
    for (int w = 0; w < nwg; ++w) {
      Head h = head(b, w);
      clk0 = std::min(clk0, h.clk0);
      gt0 = std::min(gt0, h.gt0);
      gt1 = std::max(gt1, h.gt1);
      t.sm = static_cast<int>(h.sm);
    }
    t.offset = static_cast<double>(gt0 - kernelStart) * clockGHz;
    double end = static_cast<double>(gt1 - gt0) * clockGHz;
    for (int w = 0; w < nwg; ++w) {
      Head h = head(b, w);
      const uint8_t* ring = data + (b * nwg + w) * layout.recordBytes() + 32;
      int64_t n = h.n, kept = std::min<int64_t>(n, cap), first = n > cap ? n % cap : 0;
      t.lost += n - kept;
      const double base = static_cast<double>(h.clk0 - clk0);
      for (int64_t i = 0; i < kept; ++i) {
        const uint8_t* e = ring + 16 * ((first + i) % cap);
        uint32_t packed = read<uint32_t>(e + 12);
        profile::Event ev;
        ev.block = b;
        ev.sm = t.sm;
        ev.wg = w;
        uint32_t scope = (packed >> 16) & 0xffu;
        ev.scope = scope < static_cast<uint32_t>(profile::Scope::Count) ? static_cast<profile::Scope>(scope) : profile::Scope::Compute;
        ev.start = base + read<uint32_t>(e);
        ev.end = base + read<uint32_t>(e + 4);
        ev.iteration = read<int32_t>(e + 8);
        uint32_t slot = packed >> 24;
        ev.slot = slot == 0xffu ? -1 : static_cast<int64_t>(slot);
        ev.file = layout.file;
        ev.line = static_cast<int>(packed & 0xffffu);
        end = std::max(end, ev.end);
        t.events.push_back(std::move(ev));
      }
    }
    t.duration = end;
    out.push_back(std::move(t));
  }
  return out;
}

void writeProfileTrace(const EmitResult& er, const std::vector<uint8_t>& buffer, std::array<int64_t, 3> launched, double clockGHz,
                       bool modelled, const std::string& timing, const std::string& path, std::ostream& out) {
  auto traces = decodeProfile(er.profile, buffer.data(), buffer.size(), launched, clockGHz);
  std::ofstream os(path);
  if (!os) throw UserError(Location::at(std::make_shared<const std::string>(path), 0, 0), "cannot write the trace file");
  profile::TraceMeta meta;
  meta.kernel = er.kernelName;
  meta.device = modelled ? "CPU emulator (modelled H200-class clock)" : "GPU 0";
  meta.cyclesPerUs = clockGHz * 1e3;
  meta.note = timing;
  meta.modelled = modelled;
  profile::writeChromeTrace(os, traces, meta);
  int64_t events = 0, lost = 0;
  for (const auto& t : traces) {
    events += static_cast<int64_t>(t.events.size());
    lost += t.lost;
  }
  out << "profile" << (modelled ? " (modelled clock)" : "") << ": " << events << " event(s) from " << traces.size() << " block(s), " << lost
      << " lost" << (lost ? " (raise --profile-capacity)" : "") << "; trace: " << path << "\n";
}

}  // namespace tawa::cuda
