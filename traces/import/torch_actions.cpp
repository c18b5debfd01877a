// Parsing torch.distributed.pipelining's action range names (see torch_actions.h).
#include "traces/import/torch_actions.h"

#include <charconv>
#include <cstdint>

namespace meshscope::traces::importer {
namespace {

// torch's _action_regex tries the alternatives in this order (longest first where one token is
// a prefix of another).
constexpr std::array kMatchOrder = {
    TorchActionType::kWaitReduceGrad,   TorchActionType::kWaitSendForward,
    TorchActionType::kWaitSendBackward, TorchActionType::kReduceGrad,
    TorchActionType::kUnshard,          TorchActionType::kReshard,
    TorchActionType::kSendForward,      TorchActionType::kRecvForward,
    TorchActionType::kSendBackward,     TorchActionType::kRecvBackward,
    TorchActionType::kForward,          TorchActionType::kInputGrad,
    TorchActionType::kBackward,         TorchActionType::kWeightGrad};

bool parse_digits(std::string_view s, int32_t& out) {
  if (s.empty() || s.size() > 9) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

size_t digits_prefix(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  return n;
}

std::optional<TorchSubAction> parse_single(std::string_view s) {
  const size_t n = digits_prefix(s);
  TorchSubAction a;
  // Stages are int16 in a Span; a larger number is no stage of a real job.
  if (!parse_digits(s.substr(0, n), a.stage) || a.stage > INT16_MAX) return std::nullopt;
  const std::string_view rest = s.substr(n);
  for (TorchActionType t : kMatchOrder) {
    if (!rest.starts_with(token(t))) continue;
    const std::string_view mb = rest.substr(token(t).size());
    if (!mb.empty() && !parse_digits(mb, a.microbatch)) return std::nullopt;
    a.type = t;
    return a;
  }
  return std::nullopt;
}

std::optional<TorchAction> parse_gpipe(std::string_view name) {
  TorchAction a;
  std::string_view rest;
  if (name.starts_with("Forward ")) {
    a.type = TorchActionType::kForward;
    rest = name.substr(8);
  } else if (name.starts_with("Backward ")) {
    a.type = TorchActionType::kBackward;
    rest = name.substr(9);
  } else {
    return std::nullopt;
  }
  if (!parse_digits(rest, a.microbatch)) return std::nullopt;
  return a;
}

}  // namespace

Phase phase_of(TorchActionType t) {
  switch (t) {
    case TorchActionType::kForward:
    case TorchActionType::kSendForward:
    case TorchActionType::kRecvForward:
    case TorchActionType::kWaitSendForward:
      return Phase::kForward;
    case TorchActionType::kBackward:
    case TorchActionType::kSendBackward:
    case TorchActionType::kRecvBackward:
    case TorchActionType::kWaitSendBackward:
      return Phase::kBackward;
    case TorchActionType::kInputGrad:
      return Phase::kInputGrad;
    case TorchActionType::kWeightGrad:
      return Phase::kWeightGrad;
    default:
      return Phase::kNone;
  }
}

std::string torch_action_text(TorchActionType type, int32_t stage, int32_t microbatch) {
  std::string out = std::to_string(stage);
  out += token(type);
  if (microbatch >= 0) out += std::to_string(microbatch);
  return out;
}

std::optional<TorchAction> parse_torch_range(std::string_view name) {
  if (!name.starts_with("PP:")) {
    auto g = parse_gpipe(name);
    if (g) g->text = torch_action_text(g->type, g->stage, g->microbatch);
    return g;
  }
  const std::string_view body = name.substr(3);
  TorchAction a;
  a.text = std::string(body);
  if (body.starts_with("(")) {
    const size_t close = body.find(')');
    if (close == std::string_view::npos ||
        body.substr(close + 1) != token(TorchActionType::kOverlapFB)) {
      return std::nullopt;
    }
    a.type = TorchActionType::kOverlapFB;
    std::string_view list = body.substr(1, close - 1);
    while (!list.empty()) {
      const size_t semi = list.find(';');
      const std::string_view one = list.substr(0, semi);
      const auto part = parse_single(one);
      if (!part || !is_compute(part->type) || a.part_count == static_cast<int>(a.parts.size())) {
        return std::nullopt;
      }
      a.parts[static_cast<size_t>(a.part_count++)] = *part;
      if (semi == std::string_view::npos) break;
      list = list.substr(semi + 1);
    }
    if (a.part_count == 0) return std::nullopt;
    return a;
  }
  const auto single = parse_single(body);
  if (!single) return std::nullopt;
  a.type = single->type;
  a.stage = single->stage;
  a.microbatch = single->microbatch;
  return a;
}

}  // namespace meshscope::traces::importer
