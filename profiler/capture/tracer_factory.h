// Picks the tracer for a run: the host-clock tracer, or CUPTI + NVTX on the cuda backends when
// this build has them (profiler/capture/cupti, MESHSCOPE_HAS_CUPTI_TRACER).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "profiler/capture/action_tracer.h"
#include "profiler/runtime/backend.h"

namespace meshscope::capture {

enum class TracerKind : uint8_t { kAuto = 0, kHostClock = 1, kCupti = 2, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(TracerKind::kCount)>
    kTracerKindNames = {"auto", "host", "cupti"};
constexpr std::string_view name(TracerKind k) { return kTracerKindNames[static_cast<size_t>(k)]; }
std::optional<TracerKind> parse_tracer_kind(std::string_view s);

// kAuto: cupti for the cuda backends when built with it, else the host clock.
// Throws std::runtime_error when kCupti is asked for but not built or the backend is not cuda.
std::unique_ptr<ActionTracer> make_tracer(TracerKind kind, runtime::Backend& backend);

// What must happen before the backend is built, while the process has no CUDA or NCCL thread:
// for a run that will use the CUPTI tracer (kind as make_tracer resolves it for `backend`),
// NVTX_INJECTION64_PATH is pointed at libcupti (cupti_entry.h). Does nothing otherwise.
void prepare_tracer(TracerKind kind, runtime::BackendKind backend);

}  // namespace meshscope::capture
