// The event loop: ranks advance their program cursors, compute/transfer/collective completions
// arrive as events from a (time, sequence) heap.
#include "sim/engine/engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sim/engine/event_queue.h"
#include "sim/engine/links.h"
#include "sim/engine/program.h"
#include "sim/engine/recorder.h"

namespace meshscope::engine {
namespace {

using schedule::ActionKind;

// Per-op state bits (Sim::state_, one byte per op of every rank). Those of a transfer all live on
// its RECV, the one byte both sides touch.
constexpr uint8_t kArrived = 1;     // RECV: its transfer has arrived
constexpr uint8_t kIssued = 2;      // RECV: the cursor has passed it and counts it pending
constexpr uint8_t kSendIssued = 4;  // RECV: the sender's cursor has passed the SEND
constexpr uint8_t kWaitedOn = 8;    // RECV: the receiver's cursor waits here for that
constexpr uint8_t kReached = 16;  // collective: the cursor has reached it (counted in its instance)
constexpr uint8_t kPosted = 32;   // RECV: posted ahead: its receiver holds SMs until it arrives

// One cache line: the event loop touches a rank's state and its running statistics at every
// event of that rank (its program ends at Program::rank_begin[r + 1]; its peak activation is the
// compiler's, Program::peak_activation_bytes).
struct alignas(64) RankState {
  uint32_t pc = 0;
  uint32_t sends_started = 0, sends_issued = 0;  // absolute indices into Program::sends
  uint32_t coll_head = 0, colls_issued = 0;      // absolute indices into Program::colls
  int32_t pending_recvs = 0;
  uint32_t compute_op = 0;
  bool compute_busy : 1 = false, blocked : 1 = false, send_busy : 1 = false, coll_busy : 1 = false;
  // The cursor waits at a RECV or collective for its partners to issue theirs.
  bool waiting : 1 = false;
  int64_t compute_start = 0;
  int64_t end_ns = 0;  // when its last activity ended
  int64_t compute_ns = 0, communication_ns = 0;
};
static_assert(sizeof(RankState) == 64);

class Sim {
 public:
  Sim(const EngineInput& in, const Program& p)
      : in_(in),
        p_(p),
        rec_(in, p, in.build_timeline || in.record_busy),
        ranks_(p.num_ranks),
        state_(p.num_ops(), 0),
        pending_colls_(static_cast<size_t>(p.num_ranks) * p.slots_per_rank * 2, 0),
        inst_reached_(p.instances.size(), 0),
        sync_reached_(p.tp_syncs.size(), 0),
        inst_arrived_(p.instances.size(), 0),
        inst_start_(p.instances.size(), 0),
        links_(in.links, p.num_ranks, queue_),
        p2p_(holds_for_transfers(in, p)),
        slowed_(!p.instance_sm_share.empty() || p2p_),
        overlap_(p.instance_overlap),
        coll_free_(overlap_.empty() ? 0 : p.num_ranks, 0),
        coll_work_end_(overlap_.empty() ? 0 : p.num_ranks, 0),
        coll_reach_(overlap_.empty() ? 0 : p.colls.size(), 0),
        inst_work_end_(overlap_.empty() ? 0 : p.instances.size(), 0),
        compute_debt_(overlap_.empty() ? 0 : p.num_ranks, 0),
        compute_late_(overlap_.empty() ? 0 : p.num_ranks, 0) {
    if (slowed_) {
      jobs_.resize(p.num_ranks);
      held_.assign(p.num_ranks, 0);
      coll_held_.assign(p.num_ranks, 0);
      p2p_held_.assign(p.num_ranks, 0);
    }
    if (slowed_ || !compute_debt_.empty()) sm_held_ns_.assign(p.num_ranks, 0);
    if (p2p_) index_transfer_holds();
    for (int r = 0; r < p.num_ranks; ++r) {
      RankState& st = ranks_[r];
      st.pc = p.rank_begin[r];
      st.sends_started = st.sends_issued = p.send_begin[r];
      st.coll_head = st.colls_issued = p.coll_begin[r];
    }
    queue_.reserve(static_cast<size_t>(p.num_ranks) * 4);
  }

  EngineResult run() {
    for (int r = 0; r < p_.num_ranks; ++r) advance(r, 0);
    wake_waiting();
    int64_t events = 0;
    while (!queue_.empty()) {
      const Event e = queue_.pop();
      prefetch_ahead();
      ++events;
      now_ = e.time_ns;
      switch (e.type()) {
        case EventType::kComputeDone:
          if (in_.shared_processors > 0 && !finish_shared(static_cast<int>(e.target()), e.seq()))
            break;
          if (slowed_ && jobs_[e.target()].seq != e.seq()) break;  // re-timed since
          if (!compute_late_.empty() && compute_late_[e.target()] > 0) [[unlikely]] {
            finish_later(static_cast<int>(e.target()));
            break;
          }
          compute_done(static_cast<int>(e.target()));
          break;
        case EventType::kTransferDone:
          transfer_done(e.target(), e.seq());
          break;
        case EventType::kCollectiveDone:
          collective_done(e.target());
          break;
        case EventType::kCollectiveRelease:
          [[unlikely]] collective_release(e.target());
          break;
      }
      wake_waiting();
    }
    check_finished();
    EngineResult res;
    res.events = events;
    res.actions = static_cast<int64_t>(p_.num_ops());
    res.ranks.resize(ranks_.size());
    for (size_t r = 0; r < ranks_.size(); ++r) {
      const RankState& st = ranks_[r];
      RankStats& stats = res.ranks[r];
      stats.compute_ns = st.compute_ns;
      stats.communication_ns = st.communication_ns;
      stats.end_ns = st.end_ns;
      stats.peak_activation_bytes = p_.peak_activation_bytes[r];
      if (!sm_held_ns_.empty()) stats.sm_held_ns = sm_held_ns_[r];
      res.step_time_ns = std::max(res.step_time_ns, st.end_ns);
    }
    if (rec_.enabled())
      for (int r = 0; r < p_.num_ranks; ++r) res.ranks[r].busy_ns = rec_.busy_ns(r);
    if (in_.build_timeline) res.timeline = rec_.finish(res.step_time_ns);
    return res;
  }

 private:
  // Runs rank r's cursor as far as it can go at time now_. The cursor passes a RECV once its SEND
  // has been issued and a collective once every member has reached it (the rendezvous semantics
  // of validator.h, so a schedule deadlocks here when it does there and in the executor);
  // the data itself still moves on the communication streams while compute goes on.
  void advance(int r, int64_t now) {
    RankState& st = ranks_[r];
    st.waiting = false;
    const uint32_t end = p_.rank_begin[r + 1];
    const Op* code = p_.code.data() + p_.code_shift[r];  // rank r's op g is code[g]
    // Held in registers (st.pc written back where the cursor stops): every write to state_
    // (bytes, which may alias anything) would otherwise make the compiler load them again.
    uint8_t* const state = state_.data();
    const Send* const sends = p_.sends.data();
    uint32_t pc = st.pc;
    while (pc < end) {
      const uint32_t g = pc;
      const Op& op = code[g];
      switch (op.kind) {
        case ActionKind::kSendForward:
        case ActionKind::kSendBackward: {
          const Send& send = sends[st.sends_issued++];
          ++pc;
          if ((state[send.recv] |= kSendIssued) & kWaitedOn) wake_.push_back(send.peer);
          if (!st.send_busy && st.sends_started + 1 == st.sends_issued) {
            // The send stream is idle and this is its only send: start it.
            start_send(r, sends[st.sends_started++], now);
          } else {
            start_next_send(r, now);
          }
          continue;
        }
        case ActionKind::kRecvForward:
        case ActionKind::kRecvBackward: {
          const uint8_t bits = state[g];
          if (!(bits & kSendIssued)) {
            state[g] = bits | kWaitedOn;
            st.waiting = true;
            st.pc = pc;
            return;
          }
          if (!(bits & kArrived)) {
            state[g] = bits | kIssued;
            ++st.pending_recvs;
          }
          ++pc;
          continue;
        }
        case ActionKind::kAllReduce:
        case ActionKind::kAllGather:
        case ActionKind::kReduceScatter:
        case ActionKind::kAllToAll:
          if (!reach(g, p_.coll_instance[st.colls_issued], p_.instances, p_.members, inst_reached_,
                     0)) {
            st.waiting = true;
            st.pc = pc;
            return;
          }
          ++st.colls_issued;
          ++pending_colls_[coll_index(r, op)];
          ++pc;
          arrive_next_collective(r, now, true);
          continue;
        default:
          break;
      }
      st.pc = pc;
      // Compute: with tp programs that differ, first the tp group's rendezvous (program.h); then
      // it waits for earlier receives and for this stage's earlier collectives that it consumes:
      // gathers and all-to-alls bring its inputs; STEP also needs reduced gradients.
      if (!p_.tp_syncs.empty() && p_.tp_sync_of[g] >= 0 &&
          !reach(g, p_.tp_sync_of[g], p_.tp_syncs, p_.tp_sync_members, sync_reached_,
                 in_.schedule->mesh.tp)) {
        st.waiting = true;
        return;
      }
      if (st.compute_busy) return;
      const size_t ci = 2 * slot_index(r, op);
      if (st.pending_recvs > 0 || pending_colls_[ci] > 0 ||
          (op.kind == ActionKind::kOptimizerStep && pending_colls_[ci + 1] > 0) ||
          (in_.blocking_sends && (st.send_busy || st.sends_started != st.sends_issued)) ||
          (in_.blocking_reductions && reductions_pending(r))) {
        st.blocked = true;
        return;
      }
      st.blocked = false;
      st.compute_busy = true;
      st.compute_op = g;
      st.compute_start = now;
      st.pc = pc + 1;
      int64_t work = op.value;
      if (!compute_debt_.empty() && compute_debt_[r] > 0) [[unlikely]] {
        work += compute_debt_[r];
        if (!slowed_) sm_held_ns_[r] += compute_debt_[r];  // slowed_: compute_done counts it
        compute_debt_[r] = 0;
      }
      if (in_.shared_processors > 0) {
        start_shared(r, work, now);
      } else if (slowed_) {
        jobs_[r] = Job{static_cast<double>(work), 1 - held_[r], now, 0};
        retime(r, now);
      } else {
        queue_.push(now + work, EventType::kComputeDone, static_cast<uint32_t>(r));
      }
      // The rank resumes at its next op when this compute ends: with thousands of ranks in
      // flight that op is a cache miss unless fetched now, while other ranks' events run.
      __builtin_prefetch(sends + st.sends_issued);
      return;
    }
    st.pc = pc;
    st.blocked = false;
  }

  // ---- prefetching ----------------------------------------------------------------------------
  // With thousands of ranks in flight, the state an event touches (its rank, its next SEND, the
  // state byte of the RECV that SEND marks) has left the cache since that rank's last event; the
  // ops themselves are shared by the ranks running the same program and stay in cache. Events at
  // one time pop in push order, so the loop knows the next ones: it fetches their memory in four
  // steps, each reading what the previous one fetched, so no step waits on memory. Prefetches are
  // hints: they change no state and no result. (Always inlined: GCC finds a function whose only
  // effect is a prefetch free of side effects and drops the call before inlining it.)
  static constexpr size_t kFetchEvent = 32, kFetchRank = 20, kFetchSend = 10, kFetchPeer = 4;

  [[gnu::always_inline]] void prefetch_ahead() const {
    const auto [keys, n] = queue_.front_keys();
    if (n > kFetchEvent) fetch_event(keys[kFetchEvent]);
    if (n > kFetchRank) fetch_rank(keys[kFetchRank]);
    if (n > kFetchSend) fetch_send(keys[kFetchSend]);
    if (n > kFetchPeer) fetch_peer(keys[kFetchPeer]);
  }

  static Event upcoming(uint64_t key) { return Event{0, key}; }

  [[gnu::always_inline]] void fetch_event(uint64_t key) const {
    const Event e = upcoming(key);
    if (e.type() == EventType::kComputeDone) {
      __builtin_prefetch(&ranks_[e.target()]);  // a RankState and a Transfer are a line each
    } else if (e.type() == EventType::kTransferDone) {
      __builtin_prefetch(&links_.transfer(e.target()));
    }
  }

  [[gnu::always_inline]] void fetch_rank(uint64_t key) const {
    const Event e = upcoming(key);
    if (e.type() == EventType::kTransferDone) {
      const Links::Transfer& t = links_.transfer(e.target());
      __builtin_prefetch(&state_[t.recv_op]);
      __builtin_prefetch(&ranks_[t.src]);
      __builtin_prefetch(&ranks_[t.dst]);
      __builtin_prefetch(&links_.port(t.port_out(links_.tiers())));
      __builtin_prefetch(&links_.port(t.port_in(links_.tiers())));
    }
  }

  // The SEND a rank resuming may issue next, and the RECV state byte at its cursor.
  [[gnu::always_inline]] void fetch_send(uint64_t key) const {
    const Event e = upcoming(key);
    if (e.type() == EventType::kComputeDone) {
      const RankState& st = ranks_[e.target()];
      __builtin_prefetch(p_.sends.data() + st.sends_issued);
      __builtin_prefetch(state_.data() + st.pc);
    } else if (e.type() == EventType::kTransferDone) {
      const Links::Transfer& t = links_.transfer(e.target());
      __builtin_prefetch(p_.sends.data() + ranks_[t.src].sends_started);
      __builtin_prefetch(state_.data() + ranks_[t.dst].pc);
    }
  }

  // A rank resuming at a SEND marks its peer's RECV and starts the transfer on both ports.
  [[gnu::always_inline]] void fetch_peer(uint64_t key) const {
    const Event e = upcoming(key);
    if (e.type() != EventType::kComputeDone) return;
    const auto r = static_cast<int>(e.target());
    const RankState& st = ranks_[r];
    if (st.pc >= p_.rank_begin[r + 1] || !schedule::is_send(p_.op(r, st.pc).kind)) return;
    const Send& send = p_.sends[st.sends_issued];
    __builtin_prefetch(&state_[send.recv]);
    __builtin_prefetch(&links_.port(links_.out_port(r, send.tier)));
    __builtin_prefetch(&links_.port(links_.out_port(send.peer, send.tier) + 1));
  }

  // Counts the cursor's arrival at op g, a member of rendezvous instances[inst]; true once all
  // `expected` members (0: every listed member) have reached it. The last to arrive wakes the
  // others.
  bool reach(uint32_t g, int32_t inst, const std::vector<Instance>& instances,
             const std::vector<int32_t>& members, std::vector<int32_t>& reached, int32_t expected) {
    const Instance& I = instances[inst];
    const int32_t size = expected > 0 ? expected : I.members_end - I.members_begin;
    if (!(state_[g] & kReached)) {
      state_[g] |= kReached;
      if (++reached[inst] == size && size > 1) {
        for (int32_t k = I.members_begin; k < I.members_end; ++k) {
          const auto m = static_cast<uint32_t>(members[k]);
          if (m != g) wake_.push_back(rank_of_member(m));
        }
      }
    }
    return reached[inst] == size;
  }

  void wake_waiting() {
    while (!wake_.empty()) {
      const int r = wake_.back();
      wake_.pop_back();
      if (ranks_[r].waiting) advance(r, now_);
    }
  }

  // The (rank, stage held) of op, a compute or a collective of rank r.
  size_t slot_index(int r, const Op& op) const {
    return static_cast<size_t>(r) * p_.slots_per_rank + p_.slot_of_stage[op.stage];
  }
  // Whether any stage of rank r has a gradient reduction issued and not yet done.
  bool reductions_pending(int r) const {
    const size_t base = 2 * static_cast<size_t>(r) * p_.slots_per_rank;
    for (int s = 0; s < p_.slots_per_rank; ++s)
      if (pending_colls_[base + 2 * static_cast<size_t>(s) + 1] > 0) return true;
    return false;
  }

  // Two counters per (rank, stage): collectives that produce inputs, and gradient reductions.
  size_t coll_index(int r, const Op& op) const {
    const bool reduces = op.kind == ActionKind::kAllReduce || op.kind == ActionKind::kReduceScatter;
    return 2 * slot_index(r, op) + (reduces ? 1 : 0);
  }

  void compute_done(int r) {
    RankState& st = ranks_[r];
    st.compute_busy = false;
    st.compute_ns += now_ - st.compute_start;
    st.end_ns = std::max(st.end_ns, now_);
    if (rec_.enabled()) rec_.record(st.compute_op, st.compute_start, now_);
    if (slowed_) sm_held_ns_[r] += now_ - st.compute_start - p_.op(r, st.compute_op).value;
    if (p2p_ && in_.recvs_posted_ahead) [[unlikely]]
      post_recvs(r, st.compute_op);
    advance(r, now_);
  }

  // ---- compute beside collectives that hold some of its processors --------------------------
  // Rank r's compute job runs at 1 - held_[r] from now: the work it has left at its old rate, and
  // its completion at the new one (the earlier completion event is dropped by its seq).
  void retime(int r, int64_t now) {
    Job& j = jobs_[r];
    j.remaining = std::max(0.0, j.remaining - static_cast<double>(now - j.last_ns) * j.rate);
    j.last_ns = now;
    j.rate = 1 - held_[r];
    j.seq = queue_.push(now + static_cast<int64_t>(std::ceil(j.remaining / j.rate)),
                        EventType::kComputeDone, static_cast<uint32_t>(r));
  }

  // The members of instance I hold `share` of their processors from now (0: release them).
  void hold_processors(const Instance& I, double share, int64_t now) {
    for (int32_t k = I.members_begin; k < I.members_end; ++k) {
      const int r = rank_of_member(static_cast<uint32_t>(p_.members[k]));
      if (coll_held_[r] == share) continue;
      coll_held_[r] = share;
      rehold(r, now);
    }
  }

  // Rank r's share held: its collective's and its transfers' together (at most kMaxHeld).
  void rehold(int r, int64_t now) {
    const double held = std::min(kMaxHeld, coll_held_[r] + p2p_held_[r]);
    if (held_[r] == held) return;
    held_[r] = held;
    if (ranks_[r].compute_busy) retime(r, now);
  }

  // ---- transfers holding processors (EngineInput::p2p_sm_share_by_tier) ---------------------
  static bool holds_for_transfers(const EngineInput& in, const Program& p) {
    if (in.p2p_sm_share_by_tier.empty() || p.sends.empty()) return false;
    for (const Send& s : p.sends)
      if (s.tier < in.p2p_sm_share_by_tier.size() && in.p2p_sm_share_by_tier[s.tier] > 0)
        return true;
    return false;
  }

  double share_of_tier(unsigned tier) const {
    return tier < in_.p2p_sm_share_by_tier.size() ? in_.p2p_sm_share_by_tier[tier] : 0.0;
  }

  // Each RECV's link tier, so that either side finds its share (a byte per op, as state_).
  void index_transfer_holds() {
    recv_tier_.assign(p_.num_ops(), 0);
    for (const Send& s : p_.sends) recv_tier_[s.recv] = static_cast<uint8_t>(s.tier);
    if (in_.recvs_posted_ahead) seen_.assign(p_.num_ranks, 0);
  }

  // Compute op g of rank r has ended: with receives posted ahead it posts the RECVs of its own
  // direction up to the rank's next compute of that direction (those it would post in
  // Megatron-core's loop) and, if the rank has run no compute of the other direction yet, that
  // direction's RECVs up to its next compute of any kind. Each holds r's processors until its data
  // arrives. The scan stops at the next compute of the direction it looks for, so a rank's program
  // is read about twice over the step.
  [[gnu::noinline, gnu::cold]] void post_recvs(int r, uint32_t g) {
    const ActionKind done = p_.op(r, g).kind;
    const bool fwd = done == ActionKind::kForward;
    if (!fwd && done != ActionKind::kBackward && done != ActionKind::kInputGrad) return;
    constexpr uint8_t kSeenFwd = 1, kSeenBwd = 2;
    seen_[r] |= fwd ? kSeenFwd : kSeenBwd;
    const bool other_unseen = !(seen_[r] & (fwd ? kSeenBwd : kSeenFwd));
    const ActionKind own = fwd ? ActionKind::kRecvForward : ActionKind::kRecvBackward;
    const ActionKind other = fwd ? ActionKind::kRecvBackward : ActionKind::kRecvForward;
    bool own_open = true, other_open = other_unseen, changed = false;
    for (uint32_t x = g + 1; x < p_.rank_begin[r + 1] && (own_open || other_open); ++x) {
      const ActionKind k = p_.op(r, x).kind;
      if (schedule::is_compute(k)) {
        other_open = false;  // the other direction's RECVs after a compute are that compute's
        if (fwd ? k == ActionKind::kForward
                : (k == ActionKind::kBackward || k == ActionKind::kInputGrad))
          own_open = false;
        continue;
      }
      if (!((own_open && k == own) || (other_open && k == other))) continue;
      const double share = share_of_tier(recv_tier_[x]);
      if (share <= 0 || (state_[x] & (kArrived | kPosted))) continue;
      state_[x] |= kPosted;
      p2p_held_[r] += share;
      changed = true;
    }
    if (changed) rehold(r, now_);
  }

  [[gnu::noinline, gnu::cold]] void transfer_holds(int r, double delta, int64_t now) {
    if (delta == 0) return;
    p2p_held_[r] = std::max(0.0, p2p_held_[r] + delta);
    rehold(r, now);
  }

  // ---- compute on shared processors (cpu backend) -------------------------------------------
  // A compute action whose rate changes while it runs: on processors shared by ranks, or beside a
  // collective holding some of them (retime above).
  struct Job {
    double remaining = 0;  // ns of work at full speed
    double rate = 1;
    int64_t last_ns = 0;
    uint64_t seq = 0;
  };

  void start_shared(int r, int64_t work_ns, int64_t now) {
    if (jobs_.empty()) jobs_.resize(p_.num_ranks);
    jobs_[r] = Job{static_cast<double>(work_ns), 1, now, 0};
    computing_.push_back(r);
    reshare(now);
  }

  // True when the event is the job's latest completion (and the job is done).
  bool finish_shared(int r, uint64_t seq) {
    if (jobs_[r].seq != seq) return false;
    computing_.erase(std::find(computing_.begin(), computing_.end(), r));
    reshare(now_);
    return true;
  }

  void reshare(int64_t now) {
    const double rate =
        std::min(1.0, static_cast<double>(in_.shared_processors) /
                          static_cast<double>(std::max<size_t>(1, computing_.size())));
    for (int r : computing_) {
      Job& j = jobs_[r];
      j.remaining = std::max(0.0, j.remaining - static_cast<double>(now - j.last_ns) * j.rate);
      j.last_ns = now;
      j.rate = rate;
      j.seq = queue_.push(now + static_cast<int64_t>(std::ceil(j.remaining / rate)),
                          EventType::kComputeDone, static_cast<uint32_t>(r));
    }
  }

  // ---- point-to-point transfers -------------------------------------------------------------
  void start_next_send(int r, int64_t now) {
    RankState& st = ranks_[r];
    if (st.send_busy || st.sends_started == st.sends_issued) return;
    start_send(r, p_.sends[st.sends_started++], now);
  }

  // The hold is one cold call, so that start_send stays small enough to be inlined into advance
  // (it was not when the share was looked up here: 2.6% more instructions in the 16,384-GPU
  // engine benchmark, against 1.2% now; docs/BENCHMARKS.md).
  void start_send(int r, const Send& send, int64_t now) {
    ranks_[r].send_busy = true;
    if (p2p_) [[unlikely]]
      hold_for_send(r, send.tier, now);
    links_.start(send.recv, r, send.peer, send.tier, p_.op(r, send.op).value, now);
  }

  [[gnu::noinline, gnu::cold]] void hold_for_send(int r, unsigned tier, int64_t now) {
    transfer_holds(r, share_of_tier(tier), now);
  }

  void transfer_done(uint32_t id, uint64_t seq) {
    const std::optional<Links::Arrival> done = links_.arrive(id, seq, now_);
    if (!done) return;
    const int64_t dur = now_ - done->start_ns;
    RankState& src = ranks_[done->src];
    RankState& dst = ranks_[done->dst];
    src.communication_ns += dur;
    dst.communication_ns += dur;
    src.end_ns = std::max(src.end_ns, now_);
    dst.end_ns = std::max(dst.end_ns, now_);
    if (rec_.enabled()) {
      // Its SEND: a rank's sends run one at a time, so the one it started last.
      rec_.record(p_.sends[src.sends_started - 1].op, done->start_ns, now_);
      rec_.record(done->recv_op, done->start_ns, now_);
    }
    uint8_t& rs = state_[done->recv_op];
    rs |= kArrived;
    if (p2p_) [[unlikely]] {
      const double share = share_of_tier(recv_tier_[done->recv_op]);
      transfer_holds(done->src, -share, now_);
      if (rs & kPosted) transfer_holds(done->dst, -share, now_);
    }
    if (rs & kIssued) {
      --dst.pending_recvs;
      if (dst.pending_recvs == 0 && dst.blocked) advance(done->dst, now_);
    }
    src.send_busy = false;
    start_next_send(done->src, now_);
    // Blocking sends: a compute waiting for this rank's sends may start once the last is done.
    if (in_.blocking_sends && src.blocked && !src.send_busy) advance(done->src, now_);
  }

  // ---- collectives --------------------------------------------------------------------------
  // `at_issue`: called as the cursor issues a collective (else as the stream frees).
  void arrive_next_collective(int r, int64_t now, bool at_issue) {
    RankState& st = ranks_[r];
    if (st.coll_busy) {
      // An early start waiting for its stream: when its cursor reached it.
      if (at_issue && !overlap_.empty()) [[unlikely]]
        coll_reach_[st.colls_issued - 1] = now;
      return;
    }
    if (st.coll_head == st.colls_issued) return;
    st.coll_busy = true;
    const int32_t inst = p_.coll_instance[st.coll_head];
    const Instance& I = p_.instances[inst];
    const bool last = ++inst_arrived_[inst] == I.members_end - I.members_begin;
    // Out of line, so that this stays small enough to be inlined where the cursor issues it.
    if (!overlap_.empty() && arrive_overlapped(r, inst, now, at_issue, last)) [[unlikely]]
      return;
    if (last) {
      inst_start_[inst] = now;  // the last member to arrive: events come in time order
      occupy_ports(I, +1, now);
      if (slowed_ && p_.instance_sm_share[inst] > 0)
        hold_processors(I, p_.instance_sm_share[inst], now);
      queue_.push(now + I.duration_ns, EventType::kCollectiveDone, static_cast<uint32_t>(inst));
    }
  }

  // Member r's stream arrives at instance inst (`last`: the last member's) under
  // CollectiveOverlap: true when it handled the arrival (an early start); else it has queued a
  // gather's release, if the arrival starts one, and the caller starts it as any other.
  [[gnu::noinline]] bool arrive_overlapped(int r, int32_t inst, int64_t now, bool at_issue,
                                           bool last) {
    const CollectiveOverlap& o = p_.instance_overlap[inst];
    if (o.lead_ns > 0) {
      // On this member it could have begun `lead` before its cursor reached it, once its stream
      // had done the work of its earlier collectives: reductions reached together (a hybrid
      // shard's reduce-scatter and all-reduce) share their backward bucket by bucket.
      // Arriving as its cursor issued it, it reached it now; else it waited for its stream.
      const int64_t reach = at_issue ? now : coll_reach_[ranks_[r].coll_head];
      inst_start_[inst] =
          std::max(inst_start_[inst], std::max(coll_work_end_[r], reach - o.lead_ns));
      if (last) start_early(inst, now);
      return true;
    }
    if (last && o.release_ns > 0)
      queue_.push(now + o.release_ns, EventType::kCollectiveRelease, static_cast<uint32_t>(inst));
    return false;
  }

  // The last member of an early-starting instance has arrived at `now`; inst_start_ holds the
  // latest of its members' earliest starts (CollectiveOverlap), at most now. It ends its duration
  // after that start, or its tail after now if later. The part before now ran beside its members'
  // compute, which the SMs it held slowed by the charged share of that part: what has run of that
  // compute is past, so each member's next compute action takes that much longer (a reduction
  // after every microbatch's backward slows the next forward; the step's last, the optimizer
  // step, which waits for it). Ports and processors are held from now.
  [[gnu::noinline]] void start_early(int32_t inst, int64_t now) {
    const Instance& I = p_.instances[inst];
    const CollectiveOverlap& e = p_.instance_overlap[inst];
    const int64_t base =
        std::max(inst_start_[inst] + I.duration_ns, now + std::min(e.tail_ns, I.duration_ns));
    const int64_t before_now = std::max<int64_t>(0, I.duration_ns - (base - now));
    const int64_t charged = std::llround(e.charge_share * static_cast<double>(before_now));
    inst_work_end_[inst] = inst_start_[inst] + I.duration_ns;
    if (charged > 0) {
      for (int32_t k = I.members_begin; k < I.members_end; ++k)
        charge(rank_of_member(static_cast<uint32_t>(p_.members[k])), charged, now);
    }
    occupy_ports(I, +1, now);
    if (slowed_ && p_.instance_sm_share[inst] > 0)
      hold_processors(I, p_.instance_sm_share[inst], now);
    queue_.push(base, EventType::kCollectiveDone, static_cast<uint32_t>(inst));
  }

  // Member r's next compute action takes `charged` longer (start_early). One that began at this
  // very instant is that action: whether its rank's cursor reached it before or after the last
  // member arrived, at the same time, is the order of simultaneous events, which must not decide
  // the result (every rank simulated and identical replicas simulated once agree).
  void charge(int r, int64_t charged, int64_t now) {
    const RankState& st = ranks_[r];
    if (!st.compute_busy || st.compute_start != now) {
      compute_debt_[r] += charged;
      return;
    }
    if (!slowed_) sm_held_ns_[r] += charged;  // slowed_: compute_done counts it
    if (in_.shared_processors > 0 || slowed_) {
      Job& j = jobs_[r];  // begun now: none of it has run
      j.remaining += static_cast<double>(charged);
      j.seq = queue_.push(now + static_cast<int64_t>(std::ceil(j.remaining / j.rate)),
                          EventType::kComputeDone, static_cast<uint32_t>(r));
      return;
    }
    compute_late_[r] += charged;  // its completion, already queued, moves (finish_later)
  }

  // Rank r's compute ended, less the time charge() added after its completion was queued.
  void finish_later(int r) {
    queue_.push(now_ + compute_late_[r], EventType::kComputeDone, static_cast<uint32_t>(r));
    compute_late_[r] = 0;
  }

  // A running collective holds each member's egress and ingress port of its tier.
  void occupy_ports(const Instance& I, int delta, int64_t now) {
    for (int32_t k = I.members_begin; k < I.members_end; ++k) {
      const int tier = p_.member_tiers[k];
      if (tier >= 0)
        links_.hold(rank_of_member(static_cast<uint32_t>(p_.members[k])), tier, delta, now);
    }
  }

  [[gnu::noinline]] bool released_early(uint32_t inst) const {
    return p_.instance_overlap[inst].release_ns > 0;
  }

  // The compute waiting for instance inst (CollectiveOverlap::release_ns) may start.
  [[gnu::noinline]] void collective_release(uint32_t inst) {
    const Instance& I = p_.instances[inst];
    for (int32_t k = I.members_begin; k < I.members_end; ++k) {
      const uint32_t g = static_cast<uint32_t>(p_.members[k]);
      const int r = rank_of_member(g);
      --pending_colls_[coll_index(r, p_.op(r, g))];
      if (ranks_[r].blocked) advance(r, now_);
    }
  }

  void collective_done(uint32_t inst) {
    const Instance& I = p_.instances[inst];
    const int64_t start = inst_start_[inst];
    // Its consumers went on at its release already.
    const bool released = !overlap_.empty() && released_early(inst);
    occupy_ports(I, -1, now_);
    // Released on every member before any starts its next collective (which may hold them again).
    if (slowed_ && p_.instance_sm_share[inst] > 0) hold_processors(I, 0, now_);
    for (int32_t k = I.members_begin; k < I.members_end; ++k) {
      const uint32_t g = static_cast<uint32_t>(p_.members[k]);
      const int r = rank_of_member(g);
      RankState& st = ranks_[r];
      int64_t begin = start;
      if (!overlap_.empty()) [[unlikely]]
        begin = early_member_done(inst, r, start);
      st.communication_ns += now_ - begin;
      st.end_ns = std::max(st.end_ns, now_);
      if (rec_.enabled()) rec_.record(g, begin, now_);
      if (!released) --pending_colls_[coll_index(r, p_.op(r, g))];
      st.coll_busy = false;
      ++st.coll_head;
      arrive_next_collective(r, now_, false);
      if (st.blocked) advance(r, now_);
    }
  }

  // Instance inst, which began at `start`, has ended on member r: where its span begins (an early
  // start's no sooner than the member's previous collective ended), and what r's stream has done.
  [[gnu::noinline]] int64_t early_member_done(uint32_t inst, int r, int64_t start) {
    const int64_t begin = std::max(start, coll_free_[r]);
    coll_free_[r] = now_;
    coll_work_end_[r] = p_.instance_overlap[inst].lead_ns > 0 ? inst_work_end_[inst] : now_;
    return begin;
  }

  // Members are in rank order inside an instance only by construction; look the rank up by the
  // collective's position in its rank's list instead of searching.
  int rank_of_member(uint32_t g) const { return p_.rank_of_op(g); }

  // The rank whose SEND is paired with RECV g (a search: only for the deadlock message).
  int sender_of(uint32_t g) const {
    for (int r = 0; r < p_.num_ranks; ++r)
      for (uint32_t k = p_.send_begin[r]; k < p_.send_begin[r + 1]; ++k)
        if (p_.sends[k].recv == g) return r;
    return -1;
  }

  std::string why_stuck(int r, uint32_t g) const {
    const RankState& st = ranks_[r];
    const Op& op = p_.op(r, g);
    if (st.waiting && schedule::is_recv(op.kind))
      return " (waiting for rank " + std::to_string(sender_of(g)) + " to send it)";
    if (st.waiting && schedule::is_collective(op.kind)) {
      // The cursor waits at its next collective, the one after those it has issued.
      const Instance& I = p_.instances[p_.coll_instance[st.colls_issued]];
      for (int32_t k = I.members_begin; k < I.members_end; ++k) {
        const auto m = static_cast<uint32_t>(p_.members[k]);
        if (!(state_[m] & kReached))
          return " (waiting for rank " + std::to_string(rank_of_member(m)) + " of its " +
                 std::string(mesh::name(in_.schedule->ranks[r][g - p_.rank_begin[r]].group)) +
                 " group to reach it)";
      }
    }
    if (st.waiting && schedule::is_compute(op.kind))
      return " (waiting for its tp group to reach the same compute)";
    if (st.pending_recvs > 0) return " (waiting for a RECV's data)";
    if (st.coll_head < st.colls_issued) return " (waiting for its group's collective)";
    return "";
  }

  void check_finished() const {
    std::string stuck;
    int count = 0;
    for (int r = 0; r < p_.num_ranks; ++r) {
      const RankState& st = ranks_[r];
      const uint32_t end = p_.rank_begin[r + 1];
      const bool done = st.pc == end && !st.compute_busy && st.coll_head == st.colls_issued &&
                        st.sends_started == st.sends_issued && !st.send_busy;
      if (done) continue;
      if (++count > 4) continue;
      const uint32_t g = st.pc < end ? st.pc
                                     : (st.coll_head < st.colls_issued
                                            ? static_cast<uint32_t>(p_.colls[st.coll_head])
                                            : st.pc - 1);
      const schedule::Action& a = in_.schedule->ranks[r][g - p_.rank_begin[r]];
      const std::string why = why_stuck(r, g);
      stuck += (stuck.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) +
               " at action " + std::to_string(g - p_.rank_begin[r]) + " '" +
               schedule::to_string(a) + "'" + why;
    }
    if (count > 0)
      throw SimulationError("deadlock: " + std::to_string(count) +
                            " rank(s) cannot finish: " + stuck + (count > 4 ? "; ..." : ""));
  }

  const EngineInput& in_;
  const Program& p_;
  Recorder rec_;
  EventQueue queue_;
  int64_t now_ = 0;
  std::vector<RankState, HugePageAllocator<RankState>> ranks_;
  // Per op of every rank (global index): the state bits above.
  std::vector<uint8_t, HugePageAllocator<uint8_t>> state_;
  std::vector<int32_t> pending_colls_;
  std::vector<int32_t> inst_reached_;  // members whose cursor has reached the collective
  std::vector<int32_t> sync_reached_;  // the same for tp compute rendezvous
  std::vector<int32_t> inst_arrived_;  // members whose collective stream has reached it
  std::vector<int64_t> inst_start_;
  std::vector<Job> jobs_;
  std::vector<int> computing_;       // ranks computing on shared processors
  std::vector<double> held_;         // per rank: the share of its processors held, in all
  std::vector<int64_t> sm_held_ns_;  // per rank: the compute time that added
  std::vector<int> wake_;            // waiting ranks whose partners have just issued
  Links links_;
  const bool p2p_;     // some transfer holds processors (EngineInput::p2p_sm_share_by_tier)
  const bool slowed_;  // some collective or transfer holds processors
  // Held processors in parts (rehold); after the members every event touches.
  std::vector<double> coll_held_;   // per rank: of held_, its running collective's share
  std::vector<double> p2p_held_;    // per rank: of held_, its transfers' and posted receives'
  std::vector<uint8_t> recv_tier_;  // per op (RECVs): its transfer's link tier
  std::vector<uint8_t> seen_;       // per rank: the compute directions it has run (post_recvs)
  static constexpr double kMaxHeld = 0.95;
  // Collectives that overlap compute (EngineInput::collective_overlap), last: rarely touched.
  const std::vector<CollectiveOverlap>& overlap_;  // Program::instance_overlap
  // With overlap_ only. Per rank: when its last collective ended, and when its stream had done
  // that collective's work (an early start's may end before the collective does, at its tail).
  std::vector<int64_t> coll_free_, coll_work_end_;
  std::vector<int64_t> coll_reach_;  // per collective (Program::colls): when its cursor passed it
  std::vector<int64_t> inst_work_end_;  // per instance
  // Per rank: compute time its next compute action owes to the SMs an early-started collective
  // held beside the compute it already ran (start_early).
  std::vector<int64_t> compute_debt_;
  // Per rank: time charge() added to the compute that began as it was charged (plain compute,
  // whose completion event cannot be re-timed).
  std::vector<int64_t> compute_late_;
};

}  // namespace

EngineResult simulate(const EngineInput& input) {
  if (input.schedule == nullptr) throw std::invalid_argument("simulate: no schedule");
  if (input.links.empty()) throw std::invalid_argument("simulate: no link tiers");
  if (input.build_timeline && input.schedule->mesh.size() >= 65535)
    throw std::invalid_argument(
        "simulate: a Timeline holds at most 65534 devices; simulate "
        "without one or use symmetric replicas");
  for (double share : input.p2p_sm_share_by_tier)
    if (!(share >= 0 && share < 0.5))
      throw std::invalid_argument("simulate: p2p_sm_share_by_tier has " + std::to_string(share) +
                                  ", outside [0, 0.5)");
  if (input.p2p_sm_share_by_tier.size() > input.links.size())
    throw std::invalid_argument("simulate: p2p_sm_share_by_tier has more tiers than links");
  if (input.shared_processors > 0 && !input.p2p_sm_share_by_tier.empty())
    throw std::invalid_argument(
        "simulate: p2p_sm_share_by_tier and shared_processors do not combine");
  if (input.shared_processors > 0 && input.collective_sm_share)
    throw std::invalid_argument(
        "simulate: collective_sm_share and shared_processors do not combine (a collective's "
        "share of one rank's processors, against ranks sharing the host's)");
  Program program = compile(input);
  if (static_cast<uint64_t>(program.num_ranks) > EventQueue::kMaxTarget ||
      program.instances.size() > EventQueue::kMaxTarget)
    throw std::invalid_argument("simulate: more than 16M ranks or collectives");
  Sim sim(input, program);
  return sim.run();
}

}  // namespace meshscope::engine
