// CUPTI error checks naming file, line and the call's text (as Kineto's CUPTI_CALL): throwing for
// calls a capture cannot do without, warn-and-continue for the optional ones.
#pragma once

#include <cupti.h>

#include "kernels/cuda/check.h"

namespace meshscope::capture::cupti {

void check_cupti(CUptiResult status, const char* call, const char* file, int line);
// Returns false (and prints one warning line) on failure.
bool warn_cupti(CUptiResult status, const char* call, const char* file, int line) noexcept;

}  // namespace meshscope::capture::cupti

#define MESHSCOPE_CUPTI_CHECK(call) \
  ::meshscope::capture::cupti::check_cupti((call), #call, __FILE__, __LINE__)
#define MESHSCOPE_CUPTI_WARN(call) \
  ::meshscope::capture::cupti::warn_cupti((call), #call, __FILE__, __LINE__)
