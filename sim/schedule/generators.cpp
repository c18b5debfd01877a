// generate(): checks a GeneratorConfig, takes the family's compute order per pp rank and lowers
// it onto every rank of the mesh with transfers, gradient all-reduces and optimizer steps.
#include "sim/schedule/generators.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/schedule/lowering.h"

namespace meshscope::schedule {
namespace {

void require(bool ok, const std::string& family, const std::string& reason) {
  if (!ok) throw std::invalid_argument("schedule '" + family + "': " + reason);
}

void check_bytes(const std::vector<int64_t>& bytes, const std::string& family,
                 const std::string& what, int num_stages, bool boundary_ok) {
  const int n = static_cast<int>(bytes.size());
  const bool size_ok = n == 0 || n == 1 || n == num_stages || (boundary_ok && n == num_stages - 1);
  require(size_ok, family,
          what + " has " + std::to_string(n) + " values; give one, one per stage (" +
              std::to_string(num_stages) + ")" +
              (boundary_ok ? " or one per stage boundary (" + std::to_string(num_stages - 1) + ")"
                           : std::string()));
  for (int i = 0; i < n; ++i) {
    require(bytes[i] >= 0, family,
            what + "[" + std::to_string(i) + "] is negative (" + std::to_string(bytes[i]) + ")");
  }
}

}  // namespace

void check_config(const GeneratorConfig& c) {
  require(c.family < Family::kCount, "?", "unknown family");
  const std::string f(name(c.family));
  const mesh::MeshShape& shape = c.mesh;
  require(shape.dp >= 1 && shape.pp >= 1 && shape.tp >= 1, f,
          "mesh dimensions must be >= 1, got " + to_string(shape));
  require(c.microbatches >= 1, f,
          "microbatches must be >= 1, got " + std::to_string(c.microbatches));
  require(c.virtual_stages >= 1, f,
          "virtual stages must be >= 1, got " + std::to_string(c.virtual_stages));
  const std::string why = family_rule_violation(c.family, shape, c.virtual_stages, c.microbatches);
  if (!why.empty()) throw std::invalid_argument(why);
  const int64_t stages = int64_t{shape.pp} * c.virtual_stages;
  require(stages <= (int64_t{1} << 20), f, "too many stages (" + std::to_string(stages) + ")");
  check_bytes(c.activation_bytes, f, "activation bytes", static_cast<int>(stages), true);
  check_bytes(c.gradient_bytes, f, "gradient bytes", static_cast<int>(stages), false);
  const int64_t actions = max_generated_actions(c);
  require(actions <= kMaxGeneratedActions, f,
          "would have up to " + std::to_string(actions) + " actions, more than " +
              std::to_string(kMaxGeneratedActions));
}

int64_t max_generated_actions(const GeneratorConfig& c) {
  const int64_t per_rank = int64_t{c.virtual_stages} * c.microbatches * 7 + 2 * c.virtual_stages;
  return per_rank * (int64_t{c.mesh.dp} * c.mesh.pp * c.mesh.tp);
}

Schedule generate(const GeneratorConfig& config) {
  check_config(config);
  const mesh::Mesh m(config.mesh);
  Schedule s;
  s.name = std::string(name(config.family));
  s.mesh = config.mesh;
  s.num_stages = config.mesh.pp * config.virtual_stages;
  s.num_microbatches = config.microbatches;
  s.stage_owner = stage_placement(info(config.family).placement, config.mesh.pp, s.num_stages);
  const std::vector<std::vector<Action>> orders = pipeline_compute_orders(
      config.family, config.mesh.pp, config.virtual_stages, config.microbatches);
  const Lowering lowering(s, config.activation_bytes, config.gradient_bytes,
                          config.reduce_beyond_mesh);
  s.ranks.resize(m.size());
  const int lowered =
      config.lowered_ranks > 0 ? std::min(config.lowered_ranks, m.size()) : m.size();
  for (int r = 0; r < lowered; ++r) s.ranks[r] = lowering.lower(r, orders[m.coord_of(r).pp]);
  return s;
}

std::optional<Family> family_running(const Schedule& s) {
  const int pp = s.mesh.pp;
  if (pp < 1 || s.mesh.dp < 1 || s.mesh.tp < 1 || s.ranks.size() < static_cast<size_t>(pp))
    return std::nullopt;
  const mesh::Mesh m(s.mesh);
  const auto same = [](const Action& a, const Action& b) {
    return a.kind == b.kind && a.stage == b.stage && a.microbatch == b.microbatch;
  };
  for (size_t fi = 0; fi < kFamilies.size(); ++fi) {
    const auto f = static_cast<Family>(fi);
    if (f == Family::kNaive || info(f).pp_one_only) continue;
    std::vector<std::vector<Action>> orders;
    try {
      orders = pipeline_compute_orders(f, pp, s.virtual_stages(), s.num_microbatches);
    } catch (const std::invalid_argument&) {
      continue;  // a shape the family does not take
    }
    bool all = orders.size() == static_cast<size_t>(pp);
    for (int r = 0; all && r < pp; ++r) {
      const std::vector<Action>& ran = s.ranks[static_cast<size_t>(m.rank_of({0, r, 0}))];
      size_t k = 0;
      for (const Action& a : ran) {
        if (!is_compute(a.kind)) continue;
        if (k >= orders[r].size() || !same(a, orders[r][k])) {
          all = false;
          break;
        }
        ++k;
      }
      all = all && k == orders[r].size();
    }
    if (all) return f;
  }
  return std::nullopt;
}

bool is_generated(const Schedule& s) {
  const std::optional<Family> family = parse_family(s.name);
  if (!family || s.mesh.pp < 1 || s.num_stages % s.mesh.pp != 0) return false;
  const auto alike = [](const Action& a, const Action& b) {
    return a.kind == b.kind && a.group == b.group && a.stage == b.stage &&
           a.microbatch == b.microbatch && a.peer == b.peer && a.overlap_next == b.overlap_next;
  };
  for (const bool beyond : {false, true}) {
    GeneratorConfig g{.family = *family,
                      .mesh = s.mesh,
                      .microbatches = s.num_microbatches,
                      .virtual_stages = s.virtual_stages(),
                      .reduce_beyond_mesh = beyond};
    Schedule made;
    try {
      made = generate(g);
    } catch (const std::invalid_argument&) {
      return false;  // a shape the family does not take
    }
    bool same = made.ranks.size() == s.ranks.size();
    for (size_t r = 0; same && r < s.ranks.size(); ++r) {
      same = std::equal(s.ranks[r].begin(), s.ranks[r].end(), made.ranks[r].begin(),
                        made.ranks[r].end(), alike);
    }
    if (same) return true;
  }
  return false;
}

}  // namespace meshscope::schedule
