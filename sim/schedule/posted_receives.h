// torch.distributed.pipelining posts each receive where its schedule places it (RECV_F, RECV_B:
// an irecv) and waits for the data only at the compute that needs it (schedules.py,
// _PipelineScheduleRuntime._step_microbatches). meshscope's RECV waits where it stands: a torch
// schedule run or simulated as written waits early, and work that fills its bubbles in torch
// (ZB-V's weight gradients behind a receive posted ahead) waits behind the data. Its receives are
// moved to where torch waits for them.
#pragma once

#include "sim/schedule/schedule.h"

namespace meshscope::schedule {

// Whether `s` is torch's (its CSV, or the text `schedules --from` and `--from-trace` write of
// one: name "torch"), whose receives are posted ahead.
bool posts_receives_ahead(const Schedule& s);

// `s` with each RECV moved to just before the compute that needs its data; before the first
// member of an OVERLAP_F_B group (Action::overlap_next) for any of its members; a RECV no compute
// of its rank needs, at the end. Sends are eager, so this cannot deadlock a schedule that
// validates. Markers (positions in the original order) are dropped.
Schedule receives_where_needed(const Schedule& s);

}  // namespace meshscope::schedule
