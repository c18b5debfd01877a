// The span kind, phase and label of an action (see action_span.h).
#include "sim/schedule/action_span.h"

namespace meshscope::schedule {

traces::SpanKind span_kind_of(ActionKind k) {
  if (is_send(k)) return traces::SpanKind::kSend;
  if (is_recv(k)) return traces::SpanKind::kRecv;
  if (is_collective(k)) return traces::SpanKind::kCollective;
  return traces::SpanKind::kCompute;
}

traces::Phase phase_of(ActionKind k) {
  switch (k) {
    case ActionKind::kForward:
    case ActionKind::kSendForward:
    case ActionKind::kRecvForward:
      return traces::Phase::kForward;
    case ActionKind::kBackward:
    case ActionKind::kSendBackward:
    case ActionKind::kRecvBackward:
      return traces::Phase::kBackward;
    case ActionKind::kInputGrad:
      return traces::Phase::kInputGrad;
    case ActionKind::kWeightGrad:
      return traces::Phase::kWeightGrad;
    case ActionKind::kOptimizerStep:
    case ActionKind::kAllReduce:
    case ActionKind::kReduceScatter:
      return traces::Phase::kOptimizer;
    default:
      return traces::Phase::kNone;
  }
}

std::string span_label(const Action& a) {
  std::string s(token(a.kind));
  if (is_collective(a.kind)) s += "(" + std::string(mesh::name(a.group)) + ")";
  s += " s" + std::to_string(a.stage);
  if (a.microbatch >= 0) s += " mb" + std::to_string(a.microbatch);
  return s;
}

}  // namespace meshscope::schedule
