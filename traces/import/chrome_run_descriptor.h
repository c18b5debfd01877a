// Reading the "meshscope_run" member of a meshscope Chrome trace (layout: traces/chrome_export.h)
// back into a Timeline's typed run descriptor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "traces/run_descriptor.h"

namespace meshscope::traces::importer {

// `json` is the member's value text, found at byte `offset` of `file`. Throws ImportError naming
// the file, the byte and the field for a value of the wrong type or an unknown name. Sets
// `*typed_facts` (when given) to whether the member holds "cores": a file written since the
// run's cores, GPU, process-group backend, replicas and configuration were typed (an older one
// has them in its metadata: read_run_from_old_metadata).
RunDescriptor read_run_descriptor(std::string_view json, const std::filesystem::path& file,
                                  int64_t offset, bool* typed_facts = nullptr);

// A file written before RunDescriptor held the run's cores, GPU board, process-group backend,
// replicas simulated once and simulate configuration kept them only as display strings in its
// "metadata" ("cores", "gpu", "backend", "replicas", "config"; a merged job's "rank N.gpu" and
// "rank N.backend" where its ranks agree): fills each field of `run` still unknown from them, so
// that readers of the typed fields read old traces as they read new ones.
void read_run_from_old_metadata(const std::map<std::string, std::string>& metadata,
                                RunDescriptor& run);

}  // namespace meshscope::traces::importer
