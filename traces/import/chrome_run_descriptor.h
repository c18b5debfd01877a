// Reading the "meshscope_run" member of a meshscope Chrome trace (layout: traces/chrome_export.h)
// back into a Timeline's typed run descriptor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "traces/run_descriptor.h"

namespace meshscope::traces::importer {

// `json` is the member's value text, found at byte `offset` of `file`. Throws ImportError naming
// the file, the byte and the field for a value of the wrong type or an unknown name.
RunDescriptor read_run_descriptor(std::string_view json, const std::filesystem::path& file,
                                  int64_t offset);

}  // namespace meshscope::traces::importer
