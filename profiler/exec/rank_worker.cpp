// One rank's thread: set up its stages on its device, then run its program step after step.
#include "profiler/exec/rank_worker.h"

#include "profiler/exec/equivalence.h"

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "profiler/exec/stage_runtime.h"
#include "profiler/runtime/clock.h"

namespace meshscope::exec {
namespace {

using schedule::ActionKind;

// The device tensors of one rank: its stages and the data it feeds or checks against.
struct RankTensors {
  std::vector<std::unique_ptr<StageRuntime>> stages;
  runtime::DeviceBuffer inputs, targets, labels, loss;
};

void set_up(SharedRun& shared, const RankPlan& plan, runtime::DeviceOps& dev, RankTensors& st) {
  const model::Workload& w = *shared.workload;
  const int m = shared.schedule->num_microbatches;
  const size_t samples = size_t(m) * shared.rows;
  for (const StageLayout& layout : plan.stages) {
    st.stages.push_back(std::make_unique<StageRuntime>(layout, dev));
    st.stages.back()->load_weights(shared.initial);
    (*shared.progress)[plan.rank].ticks.fetch_add(1, std::memory_order_relaxed);
  }
  for (size_t k = 1; k < st.stages.size(); ++k) {
    if (plan.stages[k].stage == plan.stages[k - 1].stage + 1) {
      st.stages[k]->link_previous(*st.stages[k - 1]);
    }
  }
  if (plan.local_of.front() >= 0) {
    st.inputs = runtime::DeviceBuffer(dev, sizeof(float) * samples * w.input_dim);
    st.stages[plan.local_of.front()]->bind_data(st.inputs.as<float>());
  }
  if (plan.local_of.back() >= 0) {
    if (w.loss == model::LossKind::kMse) {
      st.targets = runtime::DeviceBuffer(dev, sizeof(float) * samples * w.output_dim);
    } else {
      st.labels = runtime::DeviceBuffer(dev, sizeof(int32_t) * samples);
    }
    st.stages[plan.local_of.back()]->bind_targets(st.targets.as<float>(), st.labels.as<int32_t>());
  }
  st.loss = runtime::DeviceBuffer(dev, sizeof(double));
}

// This replica's slice of the step's batch, outside the measured step.
void load_batch(const SharedRun& shared, const RankPlan& plan, runtime::DeviceOps& dev,
                RankTensors& st, int step) {
  const model::Workload& w = *shared.workload;
  const model::Batch& b = shared.batches[step];
  const size_t samples = size_t(shared.schedule->num_microbatches) * shared.rows;
  const size_t first = size_t(plan.coord.dp) * samples;
  if (st.inputs.get() != nullptr) {
    dev.upload(st.inputs.get(), b.inputs.data() + first * w.input_dim,
               sizeof(float) * samples * w.input_dim);
  }
  if (st.targets.get() != nullptr) {
    dev.upload(st.targets.get(), b.targets.data() + first * w.output_dim,
               sizeof(float) * samples * w.output_dim);
  }
  if (st.labels.get() != nullptr) {
    dev.upload(st.labels.get(), b.labels.data() + first, sizeof(int32_t) * samples);
  }
  for (auto& s : st.stages) s->zero_grads();
  dev.zero(st.loss.get(), sizeof(double));
}

// Which microbatches' inputs (activations for F, gradients for B and I) have arrived on this
// rank in the current step, for the stages that get them from another rank. A schedule run with
// --no-validate may compute before (or without) the RECV that brings the data: the math would
// then read a stale buffer and the run would "succeed". Such an action fails instead.
class ArrivalCheck {
 public:
  ArrivalCheck(const RankPlan& plan, int microbatches, int stages) {
    for (const StageLayout& l : plan.stages) {
      const int st = l.stage;
      needs_input_.push_back(st > 0 && plan.local_of[st - 1] < 0);
      needs_grad_.push_back(st + 1 < stages && plan.local_of[st + 1] < 0);
    }
    input_.assign(plan.stages.size(), std::vector<char>(static_cast<size_t>(microbatches), 0));
    grad_ = input_;
  }
  void new_step() {
    for (auto& v : input_) std::fill(v.begin(), v.end(), 0);
    for (auto& v : grad_) std::fill(v.begin(), v.end(), 0);
  }
  // Throws naming what never arrived when `pa` would compute on it.
  void before(const PlannedAction& pa) {
    const auto k = static_cast<size_t>(pa.local_stage);
    const auto mb = static_cast<size_t>(pa.microbatch);
    switch (pa.kind) {
      case ActionKind::kRecvForward:
        input_[k][mb] = 1;
        break;
      case ActionKind::kRecvBackward:
        grad_[k][mb] = 1;
        break;
      case ActionKind::kForward:
        if (needs_input_[k] && !input_[k][mb]) missing("input activations", "RECV_F", pa);
        break;
      case ActionKind::kBackward:
      case ActionKind::kInputGrad:
        if (needs_grad_[k] && !grad_[k][mb]) missing("output gradient", "RECV_B", pa);
        break;
      default:
        break;
    }
  }

 private:
  [[noreturn]] static void missing(const char* what, const char* recv, const PlannedAction& pa) {
    throw std::runtime_error("its " + std::string(what) + " never arrived: no " + recv +
                             " of microbatch " + std::to_string(pa.microbatch) +
                             " ran before it in this step, so a send to this rank is never "
                             "matched (the validator rejects this schedule)");
  }

  std::vector<bool> needs_input_, needs_grad_;   // per local stage
  std::vector<std::vector<char>> input_, grad_;  // per local stage, per microbatch
};

// CPU time this thread has run (user + system), not the wall clock: the replay of a run whose
// ranks outnumber the cores prices each action by it, since waiting for a core does not count.
int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

runtime::TransferInfo execute(const PlannedAction& pa, StageRuntime& stage, runtime::Transport& net,
                              RankContext& ctx) {
  const int mb = pa.microbatch;
  switch (pa.kind) {
    case ActionKind::kForward:
      stage.forward(mb, ctx);
      break;
    case ActionKind::kBackward:
      stage.input_grad(mb, ctx);
      stage.weight_grad(mb, ctx);
      break;
    case ActionKind::kInputGrad:
      stage.input_grad(mb, ctx);
      break;
    case ActionKind::kWeightGrad:
      stage.weight_grad(mb, ctx);
      break;
    case ActionKind::kSendForward:
      return net.send(pa.peer, pa.tag, stage.output(mb), pa.bytes);
    case ActionKind::kRecvForward:
      return net.recv(pa.peer, pa.tag, stage.input(mb), pa.bytes);
    case ActionKind::kSendBackward:
      return net.send(pa.peer, pa.tag, stage.grad_input(mb), pa.bytes);
    case ActionKind::kRecvBackward:
      return net.recv(pa.peer, pa.tag, stage.grad_output(mb), pa.bytes);
    case ActionKind::kAllReduce: {
      // The experts' gradients over edp first: the action's span, which begins when the dense
      // reduction's data is ready, then times that reduction alone (its collective is dp's).
      const StageLayout& l = stage.layout();
      if (l.expert_reduce_inner >= 0) {
        run_inner(ctx, l.expert_reduce_inner, [&](mesh::GroupKind group) {
          return net.all_reduce(group, stage.grads() + l.dp_reduced_count,
                                l.param_count - l.dp_reduced_count);
        });
      }
      const int64_t called = runtime::host_now_ns();
      runtime::TransferInfo t = net.all_reduce(pa.group, stage.grads(), l.dp_reduced_count);
      t.called_ns = called;
      return t;
    }
    case ActionKind::kAllToAll:
      return net.all_to_all(pa.group, stage.exchange_send(), stage.exchange_recv(),
                            pa.block_floats);
    case ActionKind::kOptimizerStep:
      stage.optimizer_step();
      break;
    default:
      break;  // rejected by make_plans
  }
  return {};
}

void run_steps(SharedRun& shared, int rank) {
  runtime::Backend& backend = *shared.backend;
  backend.attach_thread(rank);
  runtime::DeviceOps& dev = backend.device(rank);
  runtime::Transport& net = backend.transport(rank);
  const RankPlan& plan = shared.plans[rank];
  for (const auto& [peer, tags] : plan.peer_recv_orders) net.expect_recv_order(peer, tags);
  const std::vector<capture::ActionInfo>& infos = (*shared.programs)[rank];
  RankProgress& progress = (*shared.progress)[rank];
  RankResult& result = shared.results[rank];
  capture::ActionTracer& tracer = *shared.tracer;
  RankTensors st;
  // Set-up, each step's batch and the final weights wait on no other rank: progress, as compute.
  const auto alone = [&](auto&& work) {
    progress.computing.store(true, std::memory_order_relaxed);
    work();
    progress.computing.store(false, std::memory_order_relaxed);
  };
  alone([&] { set_up(shared, plan, dev, st); });
  RankContext ctx{
      &dev, &net, &tracer, &(*shared.inner)[rank], &progress.inner, rank, 0, st.loss.as<double>()};
  ArrivalCheck arrivals(plan, shared.schedule->num_microbatches, shared.schedule->num_stages);
  result.losses.assign(shared.steps, 0.0);
  // Thread CPU time prices the math only on the cpu backend (on a GPU it would be the launch).
  const bool cpu_time = backend.kind() == runtime::BackendKind::kCpu;
  if (cpu_time) result.action_cpu_ns.assign(plan.actions.size(), 0);
  // The first step warms caches and faults in the slots' pages: left out when others follow.
  const int first_timed = shared.steps > 1 ? 1 : 0;
  for (int step = 0; step < shared.steps; ++step) {
    alone([&] { load_batch(shared, plan, dev, st, step); });
    progress.state.store(RankState::kBarrier, std::memory_order_relaxed);
    progress.ticks.fetch_add(1, std::memory_order_relaxed);
    shared.barrier->arrive_and_wait();
    if (step == 0) result.steps_begin_ns = runtime::host_now_ns();
    progress.step.store(step, std::memory_order_relaxed);
    progress.state.store(RankState::kRunning, std::memory_order_relaxed);
    ctx.step = step;
    int64_t held = 0;  // activation bytes held, for the timeline's memory counter
    tracer.step_begin(rank, step);
    arrivals.new_step();
    for (size_t i = 0; i < plan.actions.size(); ++i) {
      const PlannedAction& pa = plan.actions[i];
      const capture::ActionInfo& info = infos[i];
      progress.action.store(static_cast<int32_t>(i), std::memory_order_relaxed);
      arrivals.before(pa);
      tracer.action_begin(rank, step, info);
      capture::ActionEnd end;
      const bool timed = cpu_time && step >= first_timed;
      const int64_t cpu_begin = timed ? thread_cpu_ns() : 0;
      const bool compute = schedule::is_compute(pa.kind);
      if (compute) progress.computing.store(true, std::memory_order_relaxed);
      const runtime::TransferInfo transfer = execute(pa, *st.stages[pa.local_stage], net, ctx);
      if (compute) progress.computing.store(false, std::memory_order_relaxed);
      if (timed) result.action_cpu_ns[i] += thread_cpu_ns() - cpu_begin;
      end.ready_ns = transfer.ready_ns;
      end.done_ns = transfer.done_ns;
      end.called_ns = transfer.called_ns;
      if (pa.activation_delta != 0) {
        held += pa.activation_delta;
        end.activation_bytes = held;
      }
      tracer.action_end(rank, step, info, end);
      progress.ticks.fetch_add(1, std::memory_order_relaxed);
    }
    backend.synchronize(rank);
    result.steps_end_ns = runtime::host_now_ns();
    tracer.step_end(rank, step);
    progress.action.store(-1, std::memory_order_relaxed);
    dev.download(&result.losses[step], st.loss.get(), sizeof(double));
    result.actions += static_cast<int64_t>(plan.actions.size());
    if (cpu_time && step >= first_timed) ++result.cpu_steps;
  }
  // Every rank done with its last step: a message still queued for this one was never received.
  progress.state.store(RankState::kBarrier, std::memory_order_relaxed);
  shared.barrier->arrive_and_wait();
  progress.state.store(RankState::kRunning, std::memory_order_relaxed);
  if (const std::string left = net.undelivered(); !left.empty()) throw std::runtime_error(left);
  // dp replica 0 holds every dense weight; the first ep group's replicas (ep ranks 0 .. ep - 1)
  // hold one expert shard each. The other replicas' copies are checked against theirs
  // (RunResult::replica_error) when the run is checked.
  if (shared.check_replicas || plan.coord.dp < std::max(shared.workload->spec.ep, 1)) {
    alone([&] {
      for (auto& s : st.stages) result.stage_weights.push_back(s->download_weights(shared.initial));
    });
  }
  backend.synchronize(rank);
}

std::string join_ranks(const std::vector<int>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? "," : "") + std::to_string(ranks[i]);
  return s;
}

}  // namespace

void rank_main(SharedRun& shared, int rank) {
  RankProgress& progress = (*shared.progress)[rank];
  try {
    run_steps(shared, rank);
    progress.state.store(RankState::kDone, std::memory_order_relaxed);
    progress.ticks.fetch_add(1, std::memory_order_relaxed);
  } catch (const runtime::Aborted&) {
    // Stopped by another's failure or the watchdog: its state stays where it was waiting, which
    // a process describes to the others after its ranks have stopped (executor.cpp).
    progress.computing.store(false, std::memory_order_relaxed);
  } catch (const std::exception& e) {
    const bool out_of_memory = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
    progress.computing.store(false, std::memory_order_relaxed);
    progress.state.store(RankState::kFailed, std::memory_order_relaxed);
    const int32_t index = progress.action.load(std::memory_order_relaxed);
    std::string where = "rank " + std::to_string(rank);
    if (index >= 0) {
      where += " at action " + std::to_string(index) + " '" +
               schedule::to_string(shared.schedule->ranks[rank][index]) + "'";
    }
    const std::string msg = where + ": " + (out_of_memory ? "out of memory" : e.what());
    {
      std::lock_guard lock(shared.error_mu);
      if (shared.first_error.empty()) shared.first_error = msg;
    }
    shared.abort("aborted: " + msg);
  }
}

std::string describe_ranks(const SharedRun& shared) {
  // Each group's ranks are listed from the mesh when asked: a list kept per rank was O(dp^2).
  const mesh::Mesh& mesh = shared.backend->mesh();
  std::string out;
  for (size_t r = 0; r < shared.plans.size(); ++r) {
    if (!shared.backend->hosts(static_cast<int>(r))) continue;  // another process tells of it
    const RankProgress& p = (*shared.progress)[r];
    const RankPlan& plan = shared.plans[r];
    if (!out.empty()) out += "; ";
    out += "rank " + std::to_string(r);
    const RankState state = p.state.load(std::memory_order_relaxed);
    const int32_t index = p.action.load(std::memory_order_relaxed);
    if (state == RankState::kDone) {
      out += " finished";
    } else if (state == RankState::kStarting) {
      out += " is still setting up";
    } else if (state == RankState::kBarrier) {
      const int next = p.step.load(std::memory_order_relaxed) + 1;
      out += next < shared.steps
                 ? " waits for the other ranks before step " + std::to_string(next)
                 : std::string(" waits for the other ranks to finish the last step");
    } else if (index < 0) {
      out += state == RankState::kFailed ? " failed" : " is between steps";
    } else {
      const schedule::Action& a = shared.schedule->ranks[r][index];
      const PlannedAction& pa = plan.actions[index];
      out += " waits at action " + std::to_string(index) + " '" + schedule::to_string(a) + "'";
      const int32_t inner = p.inner.load(std::memory_order_relaxed);
      if (schedule::is_recv(a.kind)) {
        out += " (from rank " + std::to_string(pa.peer) + ")";
      } else if (inner >= 0) {  // a collective of its own: tp, ep, or edp inside ALLREDUCE(dp)
        out += " (" + plan.inner[inner].label + ", ranks " +
               join_ranks(mesh.group_ranks(plan.inner[inner].group, static_cast<int>(r))) + ")";
      } else if (schedule::is_collective(a.kind)) {
        out += " (" + std::string(mesh::name(a.group)) + " group: ranks " +
               join_ranks(mesh.group_ranks(a.group, static_cast<int>(r))) + ")";
      }
    }
  }
  return out;
}

namespace {

// Replica d's final copy of the weights it holds, unsharded over tp into `into`: its experts,
// and its dense weights too where `dense`. Returns the global indices it wrote.
std::vector<size_t> unshard_replica(const SharedRun& shared, int d, bool dense,
                                    std::vector<model::LinearWeights>& into) {
  const schedule::Schedule& s = *shared.schedule;
  const mesh::Mesh& m = shared.backend->mesh();
  std::vector<size_t> written;
  for (int stage = 0; stage < s.num_stages; ++stage) {
    for (int t = 0; t < m.shape().tp; ++t) {
      const int r = m.rank_of({d, s.stage_owner[stage], t});
      const RankPlan& plan = shared.plans[r];
      const StageLayout& layout = plan.stages[plan.local_of[stage]];
      const auto& parts = shared.results[r].stage_weights[plan.local_of[stage]];
      for (size_t i = 0; i < layout.linears.size(); ++i) {
        const LinearLayout& l = layout.linears[i];
        if (!dense && l.expert < 0) continue;
        model::unshard(parts[i], l.split, t, m.shape().tp, into[l.global_index]);
        if (t == 0) written.push_back(l.global_index);
      }
    }
  }
  return written;
}

// How far any dp replica's final weights are from `gathered` (replica 0's, and each expert's
// owner's): every replica assembles its own copy of what it holds, which must be the same.
double replica_error(const SharedRun& shared, const std::vector<model::LinearWeights>& gathered) {
  double err = 0;
  std::vector<model::LinearWeights> copy;
  for (int d = 1; d < shared.backend->mesh().shape().dp; ++d) {
    copy = shared.initial;
    for (const size_t i : unshard_replica(shared, d, /*dense=*/true, copy)) {
      err = std::max(err, relative_error(copy[i].w, gathered[i].w));
      err = std::max(err, relative_error(copy[i].b, gathered[i].b));
    }
  }
  return err;
}

}  // namespace

void gather_results(const SharedRun& shared, RunResult& result) {
  const schedule::Schedule& s = *shared.schedule;
  const mesh::Mesh& m = shared.backend->mesh();
  const int last = s.num_stages - 1;
  result.losses.assign(shared.steps, 0.0);
  for (int d = 0; d < m.shape().dp; ++d) {
    const int r = m.rank_of({d, s.stage_owner[last], 0});
    for (int step = 0; step < shared.steps; ++step)
      result.losses[step] += shared.results[r].losses[step];
  }
  result.weights = shared.initial;
  // Replica 0's dense weights, and the experts of each of the first ep replicas.
  const int ep = std::max(shared.workload->spec.ep, 1);
  for (int d = 0; d < ep; ++d) unshard_replica(shared, d, /*dense=*/d == 0, result.weights);
  if (shared.check_replicas) result.replica_error = replica_error(shared, result.weights);
  int64_t begin_ns = INT64_MAX, end_ns = INT64_MIN;
  for (const RankResult& r : shared.results) {
    result.actions += r.actions;
    begin_ns = std::min(begin_ns, r.steps_begin_ns);
    end_ns = std::max(end_ns, r.steps_end_ns);
  }
  // Every rank timed (one process, cpu backend): ranks of other processes come back without.
  const bool all_timed = std::all_of(shared.results.begin(), shared.results.end(),
                                     [](const RankResult& r) { return r.cpu_steps > 0; });
  if (!shared.results.empty() && all_timed) {
    for (const RankResult& r : shared.results) {
      std::vector<int64_t> mean = r.action_cpu_ns;
      for (int64_t& ns : mean) ns /= std::max(r.cpu_steps, 1);
      result.action_cpu_ns.push_back(std::move(mean));
    }
  }
  result.wall_s = end_ns > begin_ns ? static_cast<double>(end_ns - begin_ns) * 1e-9 : 0.0;
}

}  // namespace meshscope::exec
