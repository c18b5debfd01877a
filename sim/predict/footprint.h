// What a simulation would hold in host memory, estimated before it is built, so a configuration
// that cannot fit is refused with the key to change instead of dying in std::bad_alloc.
#pragma once

#include <cstdint>
#include <string>

namespace meshscope::predict {

// Upper bound of the actions a generated schedule gives `ranks` ranks holding `virtual_stages`
// chunks each, `microbatches` per replica: F, B (or I and W), a send and a receive each way per
// microbatch and chunk (7), and the per-step collectives and STEP of each chunk.
double schedule_actions(double ranks, double microbatches, double virtual_stages);

// Host bytes per action: the Action (schedule.h), its compiled engine Op (program.h), the
// engine's per-op state and the generator's growth slack; with a Timeline, its span too.
double bytes_per_action(bool timeline);

// Host bytes the workload's per-layer op records take (a GPT layer appends about 32 OpCosts over
// its three passes, transformer.cpp; an mlp block 2 linears and their unit).
double gpt_layer_bytes();
double mlp_layer_bytes();

// The memory this process may use, and what sets it: the least of the machine's physical memory
// (sysconf), the cgroup's limit (cgroup v2 memory.max or v1 memory.limit_in_bytes: a container's
// `docker run --memory`), the address-space limit (`ulimit -v`), and $MESHSCOPE_MEMORY_LIMIT
// (bytes, or a number with K, M, G or T for KiB...TiB). The budget no simulation may exceed.
struct MemoryBudget {
  double bytes = 0;
  std::string source;  // "this machine has 24.0 GiB", "its cgroup allows 4.0 GiB", ...
};
MemoryBudget host_memory();
double host_memory_bytes();  // host_memory().bytes

// Reads $MESHSCOPE_MEMORY_LIMIT's form: "4294967296", "512M", "4G", "1.5T". Returns a negative
// number for anything else (which host_memory() reports instead of ignoring).
double parse_memory_limit(const std::string& text);

// "1.2 TiB", "24.0 GiB", "512 MiB".
std::string bytes_text(double bytes);

}  // namespace meshscope::predict
