// diff(): header fields first, then the first differing step of each rank.
#include "sim/schedule/schedule_diff.h"

#include <algorithm>

namespace meshscope::schedule {
namespace {

std::string join(const std::vector<int>& v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : " ") + std::to_string(x);
  return out;
}

class Differ {
 public:
  Differ(std::string_view a_name, std::string_view b_name) : a_(a_name), b_(b_name) {}

  void field(std::string_view what, const std::string& a, const std::string& b) {
    if (a != b) out_ += std::string(what) + ": " + a + " (" + a_ + ") vs " + b + " (" + b_ + ")\n";
  }

  void rank(size_t r, const std::vector<Action>* a, const std::vector<Action>* b) {
    const std::string prefix = "rank " + std::to_string(r);
    if (!a || !b) {
      const auto& present = a ? *a : *b;
      out_ += prefix + ": only in " + (a ? a_ : b_) + " (" + std::to_string(present.size()) +
              " actions)\n";
      return;
    }
    const size_t n = std::min(a->size(), b->size());
    size_t i = 0;
    while (i < n && (*a)[i] == (*b)[i]) ++i;
    if (i == n && a->size() == b->size()) return;
    const auto at = [&](const std::vector<Action>& v) {
      return i < v.size() ? to_string(v[i]) : std::string("ends");
    };
    out_ += prefix + " step " + std::to_string(i) + ": " + at(*a) + " (" + a_ + ") vs " + at(*b) +
            " (" + b_ + "); " + std::to_string(a->size()) + " vs " + std::to_string(b->size()) +
            " actions\n";
  }

  std::string take() { return std::move(out_); }

 private:
  std::string a_, b_, out_;
};

}  // namespace

std::string diff(const Schedule& a, const Schedule& b, std::string_view a_name,
                 std::string_view b_name) {
  Differ d(a_name, b_name);
  d.field("name", a.name, b.name);
  d.field("mesh", to_string(a.mesh), to_string(b.mesh));
  d.field("stages", std::to_string(a.num_stages), std::to_string(b.num_stages));
  d.field("microbatches", std::to_string(a.num_microbatches), std::to_string(b.num_microbatches));
  d.field("stage_owner", join(a.stage_owner), join(b.stage_owner));
  const size_t ranks = std::max(a.ranks.size(), b.ranks.size());
  for (size_t r = 0; r < ranks; ++r) {
    d.rank(r, r < a.ranks.size() ? &a.ranks[r] : nullptr,
           r < b.ranks.size() ? &b.ranks[r] : nullptr);
  }
  return d.take();
}

}  // namespace meshscope::schedule
