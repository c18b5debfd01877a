// estimate_run_memory and the refusal of runs that cannot fit.
#include "cli/run_memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>

#include "cli/commands.h"
#include "traces/byte_size.h"
#include "traces/host_memory.h"

namespace meshscope::cli {
namespace {

// Per copy of a block's tensors, and per microbatch besides: measured, see run_memory.h.
constexpr double kBookkeepingBytesPerBlock = 4.5e3;
constexpr double kBookkeepingBytesPerBlockMicrobatch = 0.55e3;
constexpr double kFloat = 4;

// Parameters, input and output width and saved floats per sample, from the shapes alone.
struct Shape {
  double parameters = 0, input = 0, output = 0, saved_per_sample = 0, blocks = 0;
};

Shape shape_of(const model::WorkloadSpec& spec) {
  Shape s;
  switch (spec.kind) {
    case model::WorkloadKind::kMlp: {
      const double h = spec.hidden, layers = spec.layers;
      s.parameters = layers * (8 * h * h + 5 * h);
      s.input = s.output = h;
      s.saved_per_sample = layers * 10 * h;
      s.blocks = layers;
      break;
    }
    case model::WorkloadKind::kMoe: {
      // Per block: router h x E, E experts of 8h^2 + 5h. Per token: probabilities, gradients of
      // the logits and gates (~2E + 2k floats), and per kept choice (about capacity_factor x k
      // of them) the expert's input, hidden pre- and post-activation, output, their gradients
      // and the output back on the token side (~16h), plus the block output and input gradient.
      const double h = spec.hidden, layers = spec.layers, E = spec.experts;
      const double choices = spec.capacity_factor * spec.top_k;
      s.parameters = layers * (h * E + E + E * (8 * h * h + 5 * h));
      s.input = s.output = h;
      s.saved_per_sample = layers * (2 * E + 2 * spec.top_k + choices * 16 * h + 2 * h);
      s.blocks = layers * (1 + 2 * E);
      break;
    }
    default: {
      // chain and classifier have fixed, small shapes: build them (cheap) and count.
      const model::Workload w = model::make_workload(spec);
      s.parameters = static_cast<double>(w.parameters());
      s.input = w.input_dim;
      s.output = w.output_dim;
      for (const model::Unit& u : w.units)
        for (const model::LinearSpec& l : u.linears) s.saved_per_sample += 2.0 * (l.in + l.out);
      s.blocks = static_cast<double>(w.units.size());
      break;
    }
  }
  return s;
}

}  // namespace

RunMemoryEstimate estimate_run_memory(const model::WorkloadSpec& spec, int dp, int tp,
                                      int microbatches, int steps, bool check) {
  const Shape s = shape_of(spec);
  RunMemoryEstimate e;
  e.model_bytes = s.blocks * double(dp) * tp *
                  (kBookkeepingBytesPerBlock + kBookkeepingBytesPerBlockMicrobatch * microbatches);
  e.weight_bytes = s.parameters * kFloat * (4 + 2.0 * dp + (check ? 2 + dp : 0));
  e.activation_bytes = double(spec.batch) * s.saved_per_sample * kFloat * (check ? 2 : 1);
  e.data_bytes = double(steps) * spec.batch * (s.input + s.output) * kFloat;
  return e;
}

void check_run_fits_in_memory(const model::WorkloadSpec& spec, int dp, int tp, int microbatches,
                              int steps, bool check) {
  // Out-of-range shapes get make_workload's own message, not an estimate.
  const bool sized =
      spec.kind == model::WorkloadKind::kMlp || spec.kind == model::WorkloadKind::kMoe;
  if (sized && (spec.layers < 1 || spec.hidden < 1 || spec.hidden > (1 << 16))) return;
  if (spec.kind == model::WorkloadKind::kMoe &&
      (spec.experts < 1 || spec.experts > 1024 || spec.top_k < 1 || !(spec.capacity_factor > 0) ||
       spec.capacity_factor > spec.experts))
    return;
  if (spec.batch < 1 || steps < 1) return;
  const std::optional<double> available = traces::available_memory_bytes();
  if (!available) return;
  const RunMemoryEstimate e = estimate_run_memory(spec, dp, tp, microbatches, steps, check);
  if (e.total() <= *available) return;
  const traces::MemoryLimit limit = traces::memory_limit();
  const std::string set_by =
      limit.set && limit.bytes <= *available ? " (" + limit.source + ")" : "";
  throw UserError("this run needs about " + traces::format_bytes(e.total()) +
                  " (weights and gradients " + traces::format_bytes(e.weight_bytes) +
                  ", activations " + traces::format_bytes(e.activation_bytes) + ", data " +
                  traces::format_bytes(e.data_bytes) + ", tensor bookkeeping " +
                  traces::format_bytes(e.model_bytes) + "), more than the " +
                  traces::format_bytes(*available) + " of memory available" + set_by +
                  ": use a smaller --layers, --hidden" +
                  (spec.kind == model::WorkloadKind::kMoe ? ", --experts" : "") +
                  ", --batch or --steps (each step's batch is made up front)" +
                  (check ? " (or --no-check)" : ""));
}

namespace {

// A whole number from a /proc/sys file; nullopt where it cannot be read.
std::optional<int64_t> proc_number(const char* path) {
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return std::nullopt;
  long long v = 0;
  const bool ok = std::fscanf(f, "%lld", &v) == 1 && v > 0;
  std::fclose(f);
  return ok ? std::optional<int64_t>(v) : std::nullopt;
}

}  // namespace

void check_rank_threads_can_start(int64_t ranks) {
  std::string limits;
  int64_t smallest = INT64_MAX;
  const auto consider = [&](const std::string& name, std::optional<int64_t> v) {
    if (!v) return;
    limits += (limits.empty() ? "" : ", ") + name + " " + std::to_string(*v);
    smallest = std::min(smallest, *v);
  };
  consider("kernel.pid_max", proc_number("/proc/sys/kernel/pid_max"));
  consider("kernel.threads-max", proc_number("/proc/sys/kernel/threads-max"));
  rlimit nproc{};
  // Linux does not hold root to RLIMIT_NPROC (fork(2), EAGAIN), and it counts the user's threads
  // already running besides: only a bound, taken for one when it applies.
  if (geteuid() != 0 && getrlimit(RLIMIT_NPROC, &nproc) == 0 && nproc.rlim_cur != RLIM_INFINITY) {
    consider("ulimit -u", static_cast<int64_t>(nproc.rlim_cur));
  }
  if (ranks <= smallest) return;
  throw UserError("run: " + std::to_string(ranks) +
                  " ranks need a thread each, more than this machine lets a process start (" +
                  limits +
                  "): run fewer ranks, or one rank per process under mpirun on several hosts");
}

}  // namespace meshscope::cli
