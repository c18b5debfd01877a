// scripts/dev_gemm_shapes.csv, the GEMMs of the H100 Megatron-core development rows that
// scripts/gpu-check.sh measures (row 2b) and `calibrate --gemm-rates --compare` sets beside the
// GEMM model: every line follows from its row's config, twelve a row, in the file's order.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim/predict/config.h"

namespace meshscope::predict {
namespace {

struct ShapeLine {
  int64_t b = 0, m = 0, n = 0, k = 0;
  std::string row, gemm;
};

std::vector<ShapeLine> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<ShapeLine> lines;
  std::string text;
  bool header = false;
  while (std::getline(in, text)) {
    if (text.empty() || text[0] == '#') continue;
    if (!header) {
      EXPECT_EQ(text, "b,m,n,k,row,gemm");
      header = true;
      continue;
    }
    std::replace(text.begin(), text.end(), ',', ' ');
    std::istringstream s(text);
    ShapeLine l;
    s >> l.b >> l.m >> l.n >> l.k >> l.row >> l.gemm;
    EXPECT_FALSE(s.fail()) << text;
    lines.push_back(l);
  }
  return lines;
}

// The row's config: <row>.json, or the first (by name) of <row>-*.json that is not an FP8 run
// (<...>-fp8.json, held-back set 9: the same shapes, other GEMMs).
std::string config_of(const std::string& row) {
  const std::string dir = std::string(MESHSCOPE_SOURCE_DIR) + "/sim/predict/configs";
  if (std::filesystem::exists(dir + "/" + row + ".json")) return dir + "/" + row + ".json";
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(row + "-", 0) == 0 && !name.ends_with("-fp8.json"))
      paths.push_back(e.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths.empty() ? "" : paths.front();
}

TEST(DevGemmShapes, EveryLineIsAGemmOfItsRowsLayer) {
  const std::vector<ShapeLine> lines =
      read_lines(std::string(MESHSCOPE_SOURCE_DIR) + "/scripts/dev_gemm_shapes.csv");
  ASSERT_EQ(lines.size(), 7u * 12u);
  for (size_t i = 0; i < lines.size(); i += 12) {
    const std::string& row = lines[i].row;
    SCOPED_TRACE(row);
    const std::string path = config_of(row);
    ASSERT_FALSE(path.empty());
    const PredictConfig c = parse_config(load_json_file(path), path);
    EXPECT_EQ(c.gpu, "h100-sxm");
    const int64_t t = c.mesh.tp, T = c.micro_batch * c.gpt.seq / c.cp, h = c.gpt.hidden;
    const int64_t a = c.gpt.heads, kv = c.gpt.kv_heads > 0 ? c.gpt.kv_heads : a, d = h / a;
    const int64_t ffn = c.gpt.ffn > 0 ? c.gpt.ffn : 4 * h, gate = c.gpt.gated_mlp ? 2 : 1;
    const std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> gemms = {
        {"qkv", {(a + 2 * kv) * d / t, h}},
        {"proj", {h, a * d / t}},
        {"fc1", {ffn * gate / t, h}},
        {"fc2", {h, ffn / t}}};
    size_t at = i;
    for (const auto& [name, out_in] : gemms) {
      const auto [N, K] = out_in;
      const std::vector<std::pair<std::string, std::vector<int64_t>>> want = {
          {name + ".fwd", {T, N, K}}, {name + ".dgrad", {T, K, N}}, {name + ".wgrad", {K, N, T}}};
      for (const auto& [gemm, mnk] : want) {
        ASSERT_LT(at, lines.size());
        const ShapeLine& l = lines[at++];
        EXPECT_EQ(l.row, row);
        EXPECT_EQ(l.gemm, gemm);
        EXPECT_EQ(l.b, 1);
        EXPECT_EQ(std::vector<int64_t>({l.m, l.n, l.k}), mnk) << gemm;
      }
    }
  }
}

}  // namespace
}  // namespace meshscope::predict
