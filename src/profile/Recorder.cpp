#include "profile/Recorder.h"

#include <algorithm>

namespace tawa::profile {

using ir::Op;
using ir::OpKind;

double Calendar::book(double ready, double length) {
  double s = ready;
  size_t at = 0;
  for (; at < busy_.size(); ++at) {
    auto [b, e] = busy_[at];
    if (e <= s) continue;
    if (b >= s + length) break;
    s = e;
  }
  if (length > 0) busy_.insert(busy_.begin() + static_cast<long>(at), {s, s + length});
  return s;
}

ProgramRecorder::ProgramRecorder(const CostModel& m, int64_t block, std::array<int64_t, 3> pid, int sm, size_t capacity)
    : trace(capacity), m_(m) {
  trace.block = block;
  trace.pid = pid;
  trace.sm = sm;
}

void ProgramRecorder::beginGroups(const std::vector<std::string>& roles) {
  // A kernel with several sets of warp-group regions continues on the clocks the last set ended at.
  double start = 0;
  for (auto& g : g_) start = std::max(start, g.clock);
  for (auto& g : g_) flush(g);
  g_.clear();
  g_.resize(roles.size());
  groups.resize(std::max(groups.size(), roles.size()));
  trace.roles.resize(std::max(trace.roles.size(), roles.size()));
  for (size_t k = 0; k < roles.size(); ++k) {
    g_[k].clock = start;
    g_[k].consumer = roles[k] != "producer";
    groups[k].role = roles[k];
    trace.roles[k] = roles[k];
  }
}

void ProgramRecorder::endGroup(int wg) {
  auto& g = g_[static_cast<size_t>(wg)];
  flush(g);
  groups[static_cast<size_t>(wg)].end = g.clock;
}

void ProgramRecorder::flush(Group& g) {
  if (!g.open) return;
  g.open = false;
  trace.push(std::move(g.cur));
  g.cur = Event{};
}

void ProgramRecorder::charge(int wg, Scope s, const Op& op, int64_t iter, int64_t slot, double cycles) {
  auto& g = g_[static_cast<size_t>(wg)];
  groups[static_cast<size_t>(wg)].scope[static_cast<size_t>(s)] += cycles;
  if (cycles <= 0) return;
  double start = g.clock;
  g.clock += cycles;
  if (g.open && g.cur.scope == s && g.cur.iteration == iter && g.cur.slot == slot && g.cur.end == start) {
    g.cur.end = g.clock;
    return;
  }
  flush(g);
  g.open = true;
  g.cur.block = trace.block;
  g.cur.sm = trace.sm;
  g.cur.wg = wg;
  g.cur.scope = s;
  g.cur.start = start;
  g.cur.end = g.clock;
  g.cur.iteration = iter;
  g.cur.slot = slot;
  g.cur.file = op.loc().file ? *op.loc().file : std::string();
  g.cur.line = op.loc().line;
}

bool ProgramRecorder::inMainLoop(const Op& op) {
  for (const ir::Block* b = op.parent; b && b->parentOp; b = b->parentOp->parent) {
    const Op* p = b->parentOp;
    if (p->kind() != OpKind::For && p->kind() != OpKind::While) continue;
    auto it = loopHasMma_.find(p);
    if (it == loopHasMma_.end()) {
      bool has = false;
      for (auto& r : p->regions())
        ir::walk(static_cast<const ir::Block&>(*r), [&](const Op* o) { has = has || o->kind() == OpKind::Wgmma || o->kind() == OpKind::Dot; });
      it = loopHasMma_.emplace(p, has).first;
    }
    if (it->second) return true;
  }
  return false;
}

Scope ProgramRecorder::classify(const Group& g, const Op& op) {
  switch (op.kind()) {
    case OpKind::Wgmma: case OpKind::WgmmaCommit: return Scope::MmaIssue;
    case OpKind::WgmmaWait: return Scope::MmaWait;
    case OpKind::TmaStore: return Scope::TmaStore;
    case OpKind::TmaLoad: case OpKind::MbarArriveExpectTx: return Scope::TmaIssue;
    case OpKind::MbarArrive: return Scope::Release;
    default: break;
  }
  if (!g.consumer) return Scope::Compute;
  bool loop = inMainLoop(op);
  if (!loop && g.issuedMma) return Scope::Epilogue;
  if (loop && op.numResults() == 1 && op.result()->type().isTile()) return Scope::Softmax;
  return Scope::Compute;
}

void ProgramRecorder::op(int wg, const Op& op, int64_t iter, int64_t slot) {
  auto& g = g_[static_cast<size_t>(wg)];
  Scope s = classify(g, op);
  switch (op.kind()) {
    case OpKind::Wgmma: {
      const auto& r = op.result()->type();
      const auto& a = op.operand(0)->type();  // smem<D x M x K x elem>
      int64_t M = r.shape[0], N = r.shape[1], K = a.shape.back();
      charge(wg, s, op, iter, slot, m_.mmaIssue);
      double dur = m_.mmaCycles(M, N, K, a.scalar);
      double start = tensorCore_.book(g.clock, dur);
      g.openGroup = std::max(g.openGroup, start + dur);
      g.issuedMma = true;
      flops += 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
      if (mmas++ == 0) mmaShape = {M, N, K};
      return;
    }
    case OpKind::WgmmaCommit:
      if (g.openGroup >= 0) g.mmaGroups.push_back(g.openGroup);
      g.openGroup = -1;
      return;
    case OpKind::WgmmaWait: {
      auto keep = static_cast<size_t>(op.intAttr("pending"));
      double t = g.clock;
      while (g.mmaGroups.size() > keep) {
        t = std::max(t, g.mmaGroups.front());
        g.mmaGroups.pop_front();
      }
      charge(wg, s, op, iter, slot, t + m_.mmaWait - g.clock);
      return;
    }
    case OpKind::TmaStore: {
      const auto& t = op.operand(0)->type();
      double bytes = 1;
      for (auto d : t.shape) bytes *= static_cast<double>(d);
      bytes *= ir::byteWidth(t.scalar);
      bytesStored += bytes;
      double staged = g.clock + bytes / m_.smemBytesPerClk + m_.tmaIssue;
      double xfer = m_.transferCycles(bytes);
      double done = memPipe_.book(staged, xfer) + xfer + m_.tmaLatency;
      charge(wg, s, op, iter, slot, done - g.clock);
      return;
    }
    case OpKind::SmemLoad: {
      const auto& t = op.result()->type();
      double bytes = static_cast<double>(t.numel()) * ir::byteWidth(t.scalar);
      charge(wg, s, op, iter, slot, bytes / m_.smemBytesPerClk + m_.smemLatency);
      return;
    }
    case OpKind::Load: case OpKind::DescLoad: {
      const auto& t = op.result()->type();
      double bytes = static_cast<double>(std::max<int64_t>(1, t.numel())) * ir::byteWidth(t.scalar);
      bytesLoaded += bytes;
      double xfer = m_.transferCycles(bytes);
      double done = memPipe_.book(g.clock, xfer) + xfer + m_.tmaLatency;
      charge(wg, s, op, iter, slot, done - g.clock);
      return;
    }
    case OpKind::Store: case OpKind::DescStore: {
      const auto& t = op.operand(1)->type();
      double bytes = static_cast<double>(std::max<int64_t>(1, t.numel())) * ir::byteWidth(t.scalar);
      bytesStored += bytes;
      double xfer = m_.transferCycles(bytes);
      double done = memPipe_.book(g.clock, xfer) + xfer;
      charge(wg, s, op, iter, slot, done - g.clock);
      return;
    }
    case OpKind::Dot: {  // a synchronous MMA: issue, then wait for it
      const auto& a = op.operand(0)->type();
      const auto& r = op.result()->type();
      int64_t M = r.shape[0], N = r.shape[1], K = a.shape[1];
      flops += 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
      if (mmas++ == 0) mmaShape = {M, N, K};
      g.issuedMma = true;
      charge(wg, Scope::MmaIssue, op, iter, slot, m_.mmaIssue);
      double dur = m_.mmaCycles(M, N, K, a.scalar);
      double start = tensorCore_.book(g.clock, dur);
      charge(wg, Scope::MmaWait, op, iter, slot, start + dur + m_.mmaWait - g.clock);
      return;
    }
    default:
      charge(wg, s, op, iter, slot, m_.opCycles(op));
  }
}

void ProgramRecorder::wait(int wg, const Op& op, int64_t iter, const void* bar, int64_t idx, const std::string& kind) {
  auto& g = g_[static_cast<size_t>(wg)];
  double done = bars_[{bar, idx}].completedAt;
  Scope s = kind == "full" ? Scope::WaitFull : kind == "empty" ? Scope::WaitEmpty : Scope::Compute;
  if (s == Scope::Compute && g.consumer && g.issuedMma && !inMainLoop(op)) s = Scope::Epilogue;
  charge(wg, s, op, iter, idx, std::max(g.clock, done) + m_.waitWake - g.clock);
}

void ProgramRecorder::arrive(int wg, const Op& op, int64_t iter, const void* bar, int64_t idx, bool completed,
                             const std::string& kind) {
  auto& g = g_[static_cast<size_t>(wg)];
  charge(wg, classify(g, op), op, iter, idx, m_.arrive);
  if (op.kind() == OpKind::MbarArriveExpectTx) {
    if (firstStageIter_ < 0) firstStageIter_ = iter;
    if (iter == firstStageIter_) stageBytes += static_cast<double>(op.intAttr("bytes"));
  }
  landed(bar, idx, g.clock, completed);
}

double ProgramRecorder::tmaLoad(int wg, const Op& op, int64_t iter, int64_t slot) {
  auto& g = g_[static_cast<size_t>(wg)];
  const auto& t = op.operand(0)->type();  // tdesc<block x elem>
  double bytes = ir::byteWidth(t.scalar);
  for (auto d : t.shape) bytes *= static_cast<double>(d);
  bytesLoaded += bytes;
  charge(wg, Scope::TmaIssue, op, iter, slot, m_.tmaIssue);
  double xfer = m_.transferCycles(bytes);
  return memPipe_.book(g.clock, xfer) + xfer + m_.tmaLatency;
}

void ProgramRecorder::landed(const void* bar, int64_t idx, double at, bool completed) {
  auto& b = bars_[{bar, idx}];
  b.pending = std::max(b.pending, at);
  if (completed) {
    b.completedAt = b.pending;
    b.pending = 0;
  }
}

double ProgramRecorder::finish() {
  double end = 0;
  for (size_t k = 0; k < g_.size(); ++k) {
    flush(g_[k]);
    groups[k].end = g_[k].clock;
    end = std::max(end, g_[k].clock);
  }
  trace.duration = end;
  return end;
}

ProgramRecorder* Recorder::program(int64_t linear, std::array<int64_t, 3> pid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& p = programs_[linear];
  p = std::make_unique<ProgramRecorder>(model_, linear, pid, static_cast<int>(linear % model_.sms), capacity_);
  return p.get();
}

ProgramRecorder* Recorder::adopt(BlockTrace trace, double flops, double bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& p = programs_[trace.block];
  p = std::make_unique<ProgramRecorder>(model_, trace.block, trace.pid, trace.sm, trace.capacity);
  p->placed = true;
  p->flops = flops;
  p->bytesLoaded = bytes;
  p->groups.resize(trace.roles.size());
  for (size_t k = 0; k < trace.roles.size(); ++k) p->groups[k].role = trace.roles[k];
  for (const Event& e : trace.events) {
    if (e.wg < 0 || static_cast<size_t>(e.wg) >= p->groups.size()) continue;
    GroupTotals& g = p->groups[static_cast<size_t>(e.wg)];
    g.scope[static_cast<size_t>(e.scope)] += e.end - e.start;
    g.end = std::max(g.end, e.end);
  }
  p->trace = std::move(trace);
  return p.get();
}

void Recorder::finish() {
  std::vector<double> smClock(static_cast<size_t>(model_.sms), 0.0);
  kernelCycles_ = 0;
  for (auto& [linear, p] : programs_) {  // program order
    if (p->placed) {
      kernelCycles_ = std::max(kernelCycles_, p->trace.offset + p->trace.duration);
      continue;
    }
    double d = p->finish();
    // The GPU hands blocks out in index order, each to an SM that has room: here the SM that frees
    // first (the lowest-numbered among equals), one program per SM at a time.
    auto sm = std::min_element(smClock.begin(), smClock.end());
    p->trace.sm = static_cast<int>(sm - smClock.begin());
    for (Event& e : p->trace.events) e.sm = p->trace.sm;
    p->trace.offset = *sm;
    *sm += d;
    kernelCycles_ = std::max(kernelCycles_, *sm);
  }
}

std::vector<ProgramRecorder*> Recorder::programs() const {
  std::vector<ProgramRecorder*> out;
  for (auto& [linear, p] : programs_) out.push_back(p.get());
  return out;
}

std::vector<BlockTrace> Recorder::traces() const {
  std::vector<BlockTrace> out;
  for (auto& [linear, p] : programs_) out.push_back(p->trace);
  return out;
}

int64_t Recorder::lostEvents() const {
  int64_t n = 0;
  for (auto& [linear, p] : programs_) n += p->trace.lost;
  return n;
}

}  // namespace tawa::profile
