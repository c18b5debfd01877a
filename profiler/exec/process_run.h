// The multi-process side of a run (one rank per process, launched by mpirun): how each process
// tells the others how its part ended, and how process 0 puts the parts (rank results, Timelines
// on their own clocks) together into one RunResult.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/exec/rank_worker.h"
#include "traces/timeline.h"

namespace meshscope::exec {

// How one process's part of a run ended, exchanged by every process after its rank stopped.
struct ProcessReport {
  enum class Outcome : uint8_t { kOk = 0, kDeadlock = 1, kFailed = 2, kAborted = 3 };
  Outcome outcome = Outcome::kOk;
  std::string message;  // deadlock: the watchdog's message; failed / aborted: the error
  std::string where;    // describe_ranks() clauses of the ranks this process hosts
  std::string host;     // host name, to tell whether clocks are shared
};
std::string encode_report(const ProcessReport& report);
ProcessReport decode_report(const std::string& bytes);

// The error to throw when any process did not end well, or "" when all did. A deadlock anywhere
// sets `deadlock` (the caller throws DeadlockError) and gives the first fired watchdog's "deadlock:
// no progress for T s" followed by every process's clauses in process order; otherwise the first
// failure in process order, else the first abort.
std::string combine_reports(const std::vector<ProcessReport>& reports, bool& deadlock);

// What a process sends process 0 after a successful run.
struct ProcessPart {
  std::vector<int> ranks;           // hosted ranks
  std::vector<RankResult> results;  // same order as ranks
  traces::Timeline timeline;        // from its tracer: spans of its ranks only
  std::string host;
};
std::string encode_part(const ProcessPart& part);
ProcessPart decode_part(const std::string& bytes);

// One Timeline from every process's part (parts[0] is process 0's): each rank's device, lanes,
// spans and counters from the process that ran it, in process 0's device order; devices of no
// rank (a GPU's unattributed records) after them, from every process; flows within each part,
// and flows between parts re-paired from the sends' and receives' stages and microbatches. A
// part on another host is moved onto process 0's clock by aligning the begin of step 0 (all
// ranks leave the step-0 barrier together); parts on the same host share CLOCK_MONOTONIC and are
// only moved to process 0's origin. The results' step times are moved the same way.
traces::Timeline merge_parts(std::vector<ProcessPart>& parts);

// Pairs send and recv spans that no flow joins yet: the k-th "SEND_F" of stage s, microbatch m to
// the k-th "RECV_F" of stage s + 1, microbatch m within the same dp and tp coordinates (SEND_B to
// stage s - 1 likewise), by time.
void link_unpaired_transfers(traces::Timeline& timeline);

}  // namespace meshscope::exec
