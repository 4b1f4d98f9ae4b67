// Decodes the global buffer of a kernel emitted with --profile (cuda::ProfileLayout) into the
// profile's event schema, one BlockTrace per launched block: each warp group's ring put back in
// order (the oldest kept event first), its events moved onto the block's axis (cycles since the
// earliest clk0 of the block's warp groups), the block placed on the kernel's axis by %globaltimer
// (cycles = ns x clock GHz, from the earliest block start), and lost events counted exactly
// (recorded - capacity, per warp group). The same decoder serves the GPU and the emulator, whose
// clock is modelled.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "backends/cuda/Emitter.h"
#include "profile/Events.h"

namespace tawa::cuda {

// `launched`: the grid the kernel ran (persistent kernels: the persistent blocks). Throws UserError
// when the buffer is smaller than the layout says.
std::vector<profile::BlockTrace> decodeProfile(const ProfileLayout& layout, const uint8_t* data, size_t bytes,
                                               std::array<int64_t, 3> launched, double clockGHz);

// `tawa run --profile`: decodes the buffer, writes the Chrome trace to `path` and prints one line
// (events, lost events, the trace) to `out`. `timing` says what clock the times come from.
void writeProfileTrace(const EmitResult& er, const std::vector<uint8_t>& buffer, std::array<int64_t, 3> launched, double clockGHz,
                       bool modelled, const std::string& timing, const std::string& path, std::ostream& out);

}  // namespace tawa::cuda
