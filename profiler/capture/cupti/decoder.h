// Decodes one completed CUPTI activity buffer into plain records (records.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "profiler/capture/cupti/cupti_api.h"
#include "profiler/capture/cupti/records.h"

namespace meshscope::capture::cupti {

// Appends every record of buffer[0, valid_bytes) to `out`; kinds it does not use are counted in
// out.ignored_records. Names are copied, so the buffer may be freed afterwards.
void decode_buffer(CuptiApi& api, uint8_t* buffer, size_t valid_bytes, RecordSet& out);

CopyDirection copy_direction(uint8_t cupti_copy_kind);

}  // namespace meshscope::capture::cupti
