// The flags shared by `run` and `demo`: workload and backend.
#include "cli/workload_options.h"

#include <cerrno>
#include <cstdlib>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <limits>
#include <string>

#include "cli/commands.h"
#include "cli/output_path.h"

namespace meshscope::cli {

model::WorkloadSpec WorkloadArgs::to_spec() const {
  const auto kind = model::parse_workload_kind(model);
  if (!kind) throw usage_error("unknown --model '" + model + "' (chain, classifier, mlp, moe)");
  if (given) {
    if (*kind != model::WorkloadKind::kMoe)
      for (const char* flag : {"--experts", "--top-k", "--capacity-factor", "--ep"})
        if (given(flag))
          throw usage_error(std::string(flag) + " applies to the moe model (--model moe), not to " +
                            model);
    if (*kind == model::WorkloadKind::kChain || *kind == model::WorkloadKind::kClassifier)
      for (const char* flag : {"--layers", "--hidden"})
        if (given(flag))
          throw usage_error(std::string(flag) + " applies to the mlp and moe models; " + model +
                            " has a fixed shape");
  }
  model::WorkloadSpec s;
  s.kind = *kind;
  s.layers = layers;
  s.hidden = hidden;
  s.batch = batch;
  s.lr = lr;
  s.seed = seed;
  s.data_gradient = data_gradient;
  s.experts = experts;
  s.top_k = top_k;
  s.capacity_factor = capacity_factor;
  s.ep = ep;
  return s;
}

void add_workload_options(CLI::App& cmd, WorkloadArgs& a) {
  a.given = [&cmd](const char* flag) { return cmd.count(flag) > 0; };
  cmd.add_option("--model", a.model,
                 "chain (Linear 1->2->3->1), classifier (784->256->10), mlp (blocks h->4h->h) or "
                 "moe (mixture-of-experts blocks: router, top-k of --experts FFNs h->4h->h)")
      ->capture_default_str();
  // Ranges checked before CLI11 converts: past an int it said only "Could not convert".
  constexpr int kMaxInt = std::numeric_limits<int>::max();
  cmd.add_option("--layers", a.layers, "mlp, moe: number of blocks")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxInt));
  cmd.add_option("--hidden", a.hidden, "mlp, moe: hidden size h")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxInt));
  cmd.add_option("--experts", a.experts, "moe: experts per block")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  cmd.add_option("--top-k", a.top_k, "moe: experts each token is routed to")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  cmd.add_option("--capacity-factor", a.capacity_factor,
                 "moe: each expert takes ceil(factor x tokens x top-k / experts) tokens of a "
                 "routing group (a microbatch of one replica); choices beyond are dropped "
                 "(GShard, Switch Transformer); above 0, at most --experts")
      ->capture_default_str()
      // Refused on its own as --lr is (exit 2): NaN, 0 or less, beyond 1024 (--experts' own
      // bound); the bound --experts sets is the workload's check.
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            const double factor = std::strtod(v.c_str(), nullptr);
            return factor > 0 && factor <= 1024 ? ""
                                                : "a capacity factor is above 0 and at most "
                                                  "--experts, got " +
                                                      v;
          },
          ""));
  cmd.add_option("--ep", a.ep,
                 "moe: expert-parallel ranks the experts are sharded over, dividing --dp: ep "
                 "consecutive dp replicas exchange tokens by all-to-all, and each expert is "
                 "replicated over dp / ep of them, its gradients all-reduced among those (1: every "
                 "replica holds every expert)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd.add_option("--batch", a.batch, "global batch per step (samples)")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxInt));
  cmd.add_option("--lr", a.lr, "SGD learning rate, in (0, 100)")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            const double lr = std::strtod(v.c_str(), nullptr);
            return lr > 0 && lr < 100 ? "" : "a learning rate is in (0, 100), got " + v;
          },
          ""));
  cmd.add_option("--seed", a.seed, "seed of the weights and the synthetic data")
      ->capture_default_str()
      // CLI11 would wrap -1 around to 2^64 - 1.
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v.find('-') != std::string::npos) return "a seed is 0 or more, got " + v;
            // and would saturate a seed past 2^64 - 1 to it without a word.
            errno = 0;
            char* end = nullptr;
            std::strtoull(v.c_str(), &end, 0);
            return errno == ERANGE ? "a seed is at most 18446744073709551615, got " + v : "";
          },
          ""));
  cmd.add_flag("--data-gradient", a.data_gradient,
               "also compute the gradient of the input data, so the first stage costs what the "
               "others do (for bubble measurements against the closed forms)");
}

std::string format_losses(const std::vector<double>& losses) {
  if (losses.empty()) return "-";
  char buf[64];
  if (losses.size() == 1) {
    std::snprintf(buf, sizeof buf, "%.6g", losses.front());
  } else {
    std::snprintf(buf, sizeof buf, "%.6g -> %.6g", losses.front(), losses.back());
  }
  return buf;
}

void add_backend_option(CLI::App& cmd, std::string& backend) {
  cmd.add_option("--backend,-b", backend,
                 "where the ranks run: " + runtime::backend_names() + "\n" +
                     runtime::backend_descriptions())
      ->capture_default_str();
}

runtime::BackendKind parse_backend_option(const std::string& backend) {
  const auto kind = runtime::parse_backend_kind(backend);
  if (!kind)
    throw usage_error("unknown backend '" + backend + "' (" + runtime::backend_names() + ")");
  return *kind;
}

}  // namespace meshscope::cli
