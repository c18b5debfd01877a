// Long reads say how far they are (ImportOptions::on_progress): every progress_interval_s of
// reading a file, its bytes read so far (of a gzip file: compressed) against its size.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "traces/import/load_trace.h"
#include "traces/import/trace_gemms.h"

namespace meshscope::traces {
namespace {

struct Call {
  std::string file;
  int64_t read = 0, size = 0;
  double seconds = 0;
};

ImportOptions recording(std::vector<Call>& calls, double interval_s) {
  ImportOptions options;
  options.progress_interval_s = interval_s;
  options.on_progress = [&calls](const std::string& file, int64_t read, int64_t size,
                                 double seconds) {
    calls.push_back({file, read, size, seconds});
  };
  return options;
}

const std::filesystem::path kGzip = std::filesystem::path(MESHSCOPE_SOURCE_DIR) /
                                    "tests/fixtures/kineto_2rank_a100_nccl_rank0.json.gz";

TEST(ImportProgress, AFileIsReportedAsItIsReadUpToItsSize) {
  std::vector<Call> calls;
  load_trace(kGzip, recording(calls, 0));  // every read reports
  ASSERT_GE(calls.size(), 2u);
  const auto size = static_cast<int64_t>(std::filesystem::file_size(kGzip));
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].file, kGzip.string());
    EXPECT_EQ(calls[i].size, size);
    EXPECT_GE(calls[i].seconds, 0);
    if (i > 0) {
      EXPECT_GE(calls[i].read, calls[i - 1].read);
      EXPECT_GE(calls[i].seconds, calls[i - 1].seconds);
    }
  }
  EXPECT_EQ(calls.back().read, size);  // the compressed bytes, all of them

  // The GEMM reader goes through the same source.
  calls.clear();
  read_trace_gemms(kGzip, recording(calls, 0));
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.back().read, size);
}

TEST(ImportProgress, AShortReadOrInputInMemoryIsNotReported) {
  std::vector<Call> calls;
  load_trace(kGzip, recording(calls, 3600));
  EXPECT_TRUE(calls.empty());
  std::ifstream in(kGzip, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  load_trace_bytes(bytes.str(), "in-memory.json.gz", recording(calls, 0));
  EXPECT_TRUE(calls.empty());
}

}  // namespace
}  // namespace meshscope::traces
