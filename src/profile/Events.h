// The profile's event schema, shared by every backend: one event is one scope of one warp group of
// one block, [start, end) in that backend's clock (cycles of the SM; modelled on the executor and
// the emulator). Each block records into its own bounded buffer; events that do not fit are counted
// and reported, never dropped in silence. The Chrome trace writer places every block on one time
// axis (microseconds) as one process, with one thread (track) per warp group named by its role.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace tawa::profile {

// The scopes tawa inserts by itself.
enum class Scope : uint8_t {
  WaitEmpty,  // producer waits for an empty slot
  TmaIssue,   // producer: expect-tx and TMA copies
  WaitFull,   // consumer waits for a full slot
  MmaIssue,   // consumer issues wgmma (and commits the group)
  MmaWait,    // consumer waits for its async MMA groups (nv.wgmma_wait)
  Softmax,    // tile arithmetic between the MMAs of the main loop (attention's softmax)
  Epilogue,   // after the main loop: conversion, drain of slot releases
  TmaStore,   // the result's store (registers -> shared -> global)
  Release,    // consumer returns a slot (mbarrier arrive on empty)
  Compute,    // anything else: loop control, address arithmetic, prologue
  Count
};
const char* scopeName(Scope s);

struct Event {
  int64_t block = 0;  // linear program id
  int sm = 0;
  int wg = 0;                // warp group index within the block
  Scope scope = Scope::Compute;
  double start = 0, end = 0;  // cycles, on the block's own axis (0 = the block's start)
  int64_t iteration = -1;     // loop iteration (-1: outside loops)
  int64_t slot = -1;          // aref slot (-1: none)
  std::string file;           // user's source location
  int line = 0;
};

// One block's events, in a buffer of fixed capacity.
struct BlockTrace {
  int64_t block = 0;
  std::array<int64_t, 3> pid{0, 0, 0};
  int sm = 0;
  double offset = 0;    // cycles: where the block starts on the kernel's time axis
  double duration = 0;  // cycles
  std::vector<std::string> roles;  // per warp group: "producer", "consumer", ...
  std::vector<Event> events;
  size_t capacity = 0;
  int64_t lost = 0;

  explicit BlockTrace(size_t cap = 4096) : capacity(cap) {}
  void push(Event e) {
    if (events.size() < capacity) events.push_back(std::move(e));
    else ++lost;
  }
};

struct TraceMeta {
  std::string kernel, device;
  double cyclesPerUs = 1980;
  std::string note = "modelled: times come from tawa's cost model on the CPU executor, not from a GPU";
  bool modelled = true;  // every event's args say so
};

// Writes a Chrome trace (JSON object format: traceEvents with "M" metadata and "X" complete
// events; ts and dur in microseconds) that Perfetto and chrome://tracing open. `blocks` in program
// order.
void writeChromeTrace(std::ostream& os, const std::vector<BlockTrace>& blocks, const TraceMeta& meta);

}  // namespace tawa::profile
