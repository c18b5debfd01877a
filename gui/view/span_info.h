// The text a tooltip shows for a span or a folded box: pure, so the wording is tested.
#pragma once

#include <cstdint>
#include <string>

#include "gui/view/track_index.h"
#include "traces/timeline.h"

namespace meshscope::gui {

// Several lines: name; activity, stage and microbatch; start (from the trace's origin) and
// duration; bytes and achieved bandwidth for transfers, FLOP rate for compute; the flow's peer.
std::string describe_span(const traces::Timeline& t, const TrackIndex& index, uint32_t span,
                          int64_t origin_ns);

// What fits inside a span's box, shortest last: the span's name, then "F3" / "B3" / "I3" / "W3"
// / "S3" / "R3" (phase or transfer and microbatch), or an idle span's length ("1.250 ms").
std::string long_label(const traces::Timeline& t, const traces::Span& s);
std::string short_label(const traces::Timeline& t, const traces::Span& s);

// "1234 spans folded: 1.250 ms (zoom in to see them)"
std::string describe_fold(uint32_t count, int64_t begin_ns, int64_t end_ns);

}  // namespace meshscope::gui
