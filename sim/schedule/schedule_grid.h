// The step x rank grid of a schedule (like torch.distributed.pipelining's _format_pipeline_order):
// row i shows each rank's i-th action. The validator prints it with the failing step marked.
#pragma once

#include <string>
#include <vector>

#include "sim/schedule/schedule.h"

namespace meshscope::schedule {

// A cell to highlight: `step` may equal the rank's program length, meaning "at its end".
struct GridMark {
  int rank = -1;
  int step = -1;
  friend bool operator==(const GridMark&, const GridMark&) = default;
};

// Without marks: every row. With marks: the rows within `context` steps of a mark (gaps shown as
// "..."), marked cells in [brackets] and their rows flagged with "=>". At most `max_ranks`
// columns: every rank when they fit, else the marked ranks and their nearest neighbours.
std::string format_grid(const Schedule& s, const std::vector<GridMark>& marks = {}, int context = 4,
                        int max_ranks = 16);

}  // namespace meshscope::schedule
