// Scanning and reading a Chrome trace event's args (chrome_args.h).
#include "traces/import/chrome_args.h"

#include <cmath>

#include "traces/import/json_reader.h"

namespace meshscope::traces::importer {

ArgView scan_args(const ChromeEvent& ev) {
  ArgView a;
  for (uint32_t i = 0; i < ev.arg_count; ++i) {
    const std::string_view k = ev.args[i].key;
    const JsonScalar* v = &ev.args[i].value;
    switch (k.size()) {
      case 4:
        if (k == "span") a.span = v;
        break;
      case 5:
        if (k == "stage")
          a.stage = v;
        else if (k == "phase")
          a.phase = v;
        else if (k == "bytes")
          a.bytes = v;
        else if (k == "flops")
          a.flops = v;
        else if (k == "dtype")
          a.dtype = v;
        break;
      case 6:
        if (k == "device")
          a.device = v;
        else if (k == "stream")
          a.stream = v;
        break;
      case 9:
        if (k == "waited_ns") a.waited_ns = v;
        break;
      case 10:
        if (k == "microbatch")
          a.microbatch = v;
        else if (k == "Group size")
          a.group_size = v;
        break;
      case 11:
        if (k == "External id")
          a.external_id = v;
        else if (k == "correlation")
          a.correlation = v;
        break;
      case 13:
        if (k == "In msg nelems")
          a.in_nelems = v;
        else if (k == "collective_op")
          a.collective_op = v;
        break;
      case 14:
        if (k == "Out msg nelems") a.out_nelems = v;
        break;
      case 15:
        if (k == "Collective name") a.collective = v;
        break;
      case 16:
        if (k == "collective_group")
          a.collective_group = v;
        else if (k == "collective_bytes")
          a.collective_bytes = v;
        else if (k == "collective_ranks")
          a.collective_ranks = v;
        break;
      case 19:
        if (k == "Process Group Ranks") a.group_ranks = v;
        break;
      case 20:
        if (k == "collective_algorithm") a.collective_algorithm = v;
        break;
      case 21:
        if (k == "collective_first_rank") a.collective_first_rank = v;
        break;
      case 22:
        if (k == "collective_rank_stride") a.collective_rank_stride = v;
        break;
      default:
        break;
    }
  }
  return a;
}

std::optional<int64_t> as_int(const JsonScalar* v) {
  if (v == nullptr || (v->type != JsonType::kNumber && v->type != JsonType::kString)) {
    return std::nullopt;
  }
  int64_t x = 0;
  if (number_text_to_int(v->text, x)) return x;
  double d = 0;
  if (number_text_to_double(v->text, d) && d == std::floor(d) && std::fabs(d) < 9.2e18) {
    return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

std::string_view as_text(const JsonScalar& v) {
  return v.type == JsonType::kString || v.type == JsonType::kNumber ? v.text : std::string_view{};
}

}  // namespace meshscope::traces::importer
