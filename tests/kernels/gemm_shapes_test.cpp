// meshscope-kernel-check --gemm-rates's files (kernels/cpu/gemm_shapes.h), without a GPU: the
// shapes file it reads, read as strictly as the tables of measured rates (kernels/cpu/csv_lines.h),
// and the CSV it writes, which `meshscope calibrate --gemm-rates` reads back.
#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/gemm_shapes.h"
#include "sim/cost/gemm_table_fit.h"
#include "tests/remove_at_exit.h"

namespace meshscope::kernels {
namespace {

const std::string kShapes =
    std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/xla/h100_bf16_matmul.csv";

TEST(GemmShapes, ReadsTheShapesOfAMeasuredTableAndWritesWhatCalibrateReads) {
  const std::vector<GemmShape> shapes = read_gemm_shapes(kShapes);
  ASSERT_EQ(shapes.size(), 87u);
  EXPECT_EQ(shapes.front().b, 1);
  EXPECT_EQ(shapes.front().m, 1024);

  std::vector<GemmRate> rates;
  for (const GemmShape& s : shapes) rates.push_back({s, 1e-3, 2.0 * s.b * s.m * s.n * s.k / 1e-3});
  const std::string path = meshscope::testing::process_temp_path("gemm_rates.csv").string();
  std::ofstream(path) << format_gemm_rates(rates);
  const std::vector<cost::MeasuredGemm> back = cost::read_gemm_table(path);
  ASSERT_EQ(back.size(), rates.size());
  EXPECT_EQ(back[5].k, shapes[5].k);
  EXPECT_NEAR(back[5].flops_per_s / rates[5].flops_per_s, 1, 1e-6);

  const std::string bad = meshscope::testing::process_temp_path("gemm_shapes_bad.csv").string();
  std::ofstream(bad) << "b,m,n,k\n1,1024,0,1024\n";
  try {
    read_gemm_shapes(bad);
    ADD_FAILURE() << "a size of 0 was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad + ":2: want sizes b,m,n,k of 1 or more"),
              std::string::npos)
        << e.what();
  }
}

// The shapes file is read as cost::read_gemm_table reads the rates (one reader, csv_lines.h): a
// byte-order mark before the header is dropped, a line with a field too many or too few is refused
// (it would shift the sizes into other columns), and nothing but a regular file is read.
TEST(GemmShapes, AreReadAsStrictlyAsMeasuredTables) {
  const std::string bom = meshscope::testing::process_temp_path("gemm_shapes_bom.csv").string();
  std::ofstream(bom) << "\xEF\xBB\xBF"
                     << "b,m,n,k\r\n2,64,32,16\r\n";
  const std::vector<GemmShape> shapes = read_gemm_shapes(bom);
  ASSERT_EQ(shapes.size(), 1u);
  EXPECT_EQ(shapes[0].b, 2);
  EXPECT_EQ(shapes[0].k, 16);

  const auto expect_error = [](const std::string& path, const std::string& want) {
    try {
      read_gemm_shapes(path);
      ADD_FAILURE() << "read: " << path;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), path + want);
    }
  };
  const std::string extra = meshscope::testing::process_temp_path("gemm_shapes_extra.csv").string();
  std::ofstream(extra) << "b,m,n,k,row\n1,64,64,64,a,b\n";
  expect_error(extra, ":2: 6 fields where the header has 5");
  const std::string header = meshscope::testing::process_temp_path("gemm_shapes_hdr.csv").string();
  std::ofstream(header) << "# shapes\nm,n,k\n";
  expect_error(header, ":2: want a header starting 'b,m,n,k'");
  expect_error("/dev/zero", ": not a regular file");
  expect_error(header + ".missing", ": no such file or folder");
}

}  // namespace
}  // namespace meshscope::kernels
