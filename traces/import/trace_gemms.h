// The GEMMs of a PyTorch profiler (Kineto) trace recorded with shapes (`record_shapes=True`), as
// the rates they ran at: each aten::mm, aten::addmm, aten::bmm and aten::baddbmm with the shapes
// and dtypes of its inputs ("Input Dims", "Input type") and the GPU time of the kernels it
// launched. A kernel belongs to the innermost such op, on the same process and thread, whose
// interval holds the runtime call that launched it (cudaLaunchKernel, cuLaunchKernel, ...; matched
// to the kernel by its correlation id), so composite ops (aten::linear, aten::matmul) are seen
// through to the GEMM they call. GEMMs that do not go through these ATen ops (Transformer Engine's,
// Triton kernels of torch.compile, FP8's aten::_scaled_mm) are not seen. `meshscope calibrate
// --gemm-rates TRACE --hardware NAME` sets these rates beside a catalog entry's GEMM model
// (sim/cost/gemm_table_fit.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "traces/import/import_types.h"

namespace meshscope::traces {

// One GEMM op of the trace: [b, m, k] x [b, k, n] (b = 1 for mm and addmm).
struct TraceGemm {
  std::string op;     // "aten::addmm"
  std::string dtype;  // of the first matrix operand, as the profiler names it ("c10::BFloat16")
  int64_t b = 1, m = 0, n = 0, k = 0;
  int kernels = 0;      // kernels it launched
  double kernel_s = 0;  // their summed GPU time
  int64_t offset = 0;   // byte of the op's event in the file
  double flops() const {
    return 2.0 * static_cast<double>(b) * static_cast<double>(m) * static_cast<double>(n) *
           static_cast<double>(k);
  }
};

struct TraceGemms {
  std::string file;
  bool record_shapes = false;    // the trace's top-level "record_shapes" said true
  std::vector<TraceGemm> gemms;  // with shapes and at least one kernel, in file order
  // GEMM ops left out, and why.
  int64_t without_shapes = 0;   // no or unreadable "Input Dims" (a trace without record_shapes)
  int64_t without_kernels = 0;  // no kernel found for any runtime call inside it (a CPU tensor,
                                // a trace without GPU activity)
};

// Throws ImportError on a file that is not Chrome JSON (an Nsight SQLite export) or is malformed.
TraceGemms read_trace_gemms(const std::filesystem::path& file, const ImportOptions& options = {});
// The same from bytes in memory (gzip or not), `name` standing for the file in errors.
TraceGemms read_trace_gemms_bytes(std::string_view bytes, const std::string& name,
                                  const ImportOptions& options = {});

}  // namespace meshscope::traces
