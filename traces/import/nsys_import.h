// Nsight Systems' SQLite export (`nsys export --type sqlite`) as a Timeline: CUPTI kernels,
// memcpys and memsets per GPU and stream (names through StringIds), NVTX push/pop and start/end
// ranges on host threads, CUDA runtime calls with their launch flows; NCCL kernels as
// communication, SendRecv kernels as sends or recvs where NCCL's NVTX ranges around their launch
// tell which (sendrecv_direction.h), else as sends with a counted warning.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "traces/import/import_types.h"
#include "traces/timeline.h"

namespace meshscope::traces::importer {

Timeline load_nsys_sqlite(const std::filesystem::path& file, const std::string& name,
                          const ImportOptions& options, ImportReport& report);
// The same from the bytes of a database in memory (fuzzing, tests).
Timeline load_nsys_sqlite_bytes(std::string_view bytes, const std::string& name,
                                const ImportOptions& options, ImportReport& report);

}  // namespace meshscope::traces::importer
