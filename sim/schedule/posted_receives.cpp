// Receives waited for where the data is needed, as torch.distributed.pipelining's runtime waits.
#include "sim/schedule/posted_receives.h"

#include <vector>

namespace meshscope::schedule {

bool posts_receives_ahead(const Schedule& s) { return s.name == "torch"; }

Schedule receives_where_needed(const Schedule& s) {
  Schedule out = s;
  out.markers.clear();  // they name positions in the original order
  for (std::vector<Action>& acts : out.ranks) {
    std::vector<Action> moved;
    std::vector<Action> recvs;
    for (const Action& a : acts) {
      if (is_recv(a.kind)) {
        recvs.push_back(a);
        continue;
      }
      if (is_compute(a.kind)) {
        // Before the compute that needs them; before the first member of an OVERLAP_F_B group,
        // which runs as one action (Action::overlap_next), for any of its members.
        std::vector<Action> needed;
        for (auto it = recvs.begin(); it != recvs.end();) {
          const bool needs =
              it->stage == a.stage && it->microbatch == a.microbatch &&
              (it->kind == ActionKind::kRecvForward
                   ? a.kind == ActionKind::kForward
                   : a.kind == ActionKind::kBackward || a.kind == ActionKind::kInputGrad ||
                         a.kind == ActionKind::kWeightGrad);
          if (needs) {
            needed.push_back(*it);
            it = recvs.erase(it);
          } else {
            ++it;
          }
        }
        auto at = moved.end();
        while (at != moved.begin() && (at - 1)->overlap_next) --at;
        moved.insert(at, needed.begin(), needed.end());
      }
      moved.push_back(a);
    }
    moved.insert(moved.end(), recvs.begin(), recvs.end());
    acts = std::move(moved);
  }
  return out;
}

}  // namespace meshscope::schedule
