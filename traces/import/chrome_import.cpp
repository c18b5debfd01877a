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
  // A torch.distributed.pipelining job: its action ranges label the spans under them. Not again
  // in meshscope's export of one: its spans carry their labels and mesh coordinates already, and
  // a merged job is many ranks, where labelling assumes one (the export said "source": "kineto"
  // for it, and reading it back moved every rank to one rank's pp coordinate).
  if (const auto it = t.metadata.find("source");
      !builder.own_export() && it != t.metadata.end() && it->second == "kineto") {
    label_torch_pipeline(t);
  }
  return t;
}

}  // namespace meshscope::traces::importer
