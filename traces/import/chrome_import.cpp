// The Chrome Trace Event Format importer's entry (Kineto / PyTorch profiler, meshscope's own
// export, Perfetto JSON): the streaming reader into the builder, then torch pipeline labels.
#include "traces/import/chrome_builder.h"
#include "traces/import/chrome_reader.h"
#include "traces/import/importer_table.h"
#include "traces/import/torch_pipeline.h"

namespace meshscope::traces::importer {

Timeline load_chrome_trace(const TraceInput& in, const ImportOptions& options,
                           ImportReport& report) {
  ChromeTimelineBuilder builder(in.name, options, report);
  const auto summary = read_chrome_json(*in.opened.source, in.name, options, builder, report);
  Timeline t = builder.finish(summary);
  // A torch.distributed.pipelining job: its action ranges label the spans under them.
  if (const auto it = t.metadata.find("source"); it != t.metadata.end() && it->second == "kineto") {
    label_torch_pipeline(t);
  }
  return t;
}

}  // namespace meshscope::traces::importer
