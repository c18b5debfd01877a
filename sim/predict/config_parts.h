// The config reader's insides, shared by the files that read a config's parts: config.cpp (the
// top level, mesh, batch, schedule, cluster, framework and options, and the order of the reading)
// and config_model.cpp (the model, and its shape checked against the rest). Not a public
// interface: config.h is.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/predict/config.h"

namespace meshscope::predict::config_parts {

using nlohmann::json;

// One object of a config: reads its keys with their defaults and ranges, remembers which it
// asked for (check_unknown refuses the rest), and names the dotted key in every error.
class Reader {
 public:
  // `keys`, when given, collects every dotted key the parser asks for (config_keys).
  Reader(const json& j, std::string where, std::string prefix,
         std::set<std::string>* keys = nullptr)
      : j_(j), where_(std::move(where)), prefix_(std::move(prefix)), keys_(keys) {
    if (!j_.is_object()) fail("", "must be an object");
  }

  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    const std::string path = prefix_.empty() ? key : (key.empty() ? prefix_ : prefix_ + "." + key);
    // The whole file at fault (a number, a list of nothing) is no key: it read "key ''".
    throw std::runtime_error(where_ + (path.empty() ? ": the top level" : ": key '" + path + "'") +
                             ": " + why);
  }
  bool has(const std::string& key) {
    seen_.insert(key);
    if (keys_ != nullptr) keys_->insert(dotted(key));
    return j_.contains(key);
  }
  const json& at(const std::string& key) { return j_.at(key); }

  // Every count fits an int (mesh dimensions, layers, batch sizes are ints downstream).
  // An integer in [lo, hi]; anything else (another type too) fails naming that range and
  // `unit` (" (bytes a parameter)").
  int64_t integer(const std::string& key, int64_t def, int64_t lo = 1,
                  int64_t hi = std::numeric_limits<int32_t>::max(), const std::string& unit = "") {
    if (!has(key)) return def;
    const json& v = at(key);
    const std::string range =
        "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]" + unit;
    if (v.is_number_float()) {
      const double d = v.get<double>();
      if (d != std::floor(d) || d < static_cast<double>(lo) || d > static_cast<double>(hi))
        fail(key, range);
      return static_cast<int64_t>(d);
    }
    if (!v.is_number_integer()) fail(key, range);
    if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(hi)
                               : v.get<int64_t>() > hi)
      fail(key, range);
    const int64_t x = v.get<int64_t>();
    if (x < lo) fail(key, range);
    return x;
  }
  bool boolean(const std::string& key, bool def) {
    if (!has(key)) return def;
    if (!at(key).is_boolean()) fail(key, "must be true or false");
    return at(key).get<bool>();
  }
  std::string string(const std::string& key, const std::string& def) {
    if (!has(key)) return def;
    if (!at(key).is_string()) fail(key, "must be a string");
    return at(key).get<std::string>();
  }
  template <typename Enum, size_t N>
  Enum choice(const std::string& key, Enum def, const std::array<std::string_view, N>& names) {
    if (!has(key)) return def;
    return required_choice<Enum>(key, names);
  }
  // A key the config must give: what it models has no default.
  template <typename Enum, size_t N>
  Enum required_choice(const std::string& key, const std::array<std::string_view, N>& names) {
    if (!has(key)) fail(key, "missing: one of " + list(names));
    const std::string v = string(key, "");
    for (size_t i = 0; i < N; ++i)
      if (names[i] == v) return static_cast<Enum>(i);
    fail(key, "'" + v + "' is not one of " + list(names));
  }
  template <size_t N>
  static std::string list(const std::array<std::string_view, N>& names) {
    std::string all;
    for (auto n : names) all += (all.empty() ? "" : ", ") + std::string(n);
    return all;
  }
  int64_t required_integer(const std::string& key, const std::string& what) {
    if (!has(key)) fail(key, "missing: " + what);
    return integer(key, 0);
  }
  void check_unknown() const {
    for (const auto& [k, v] : j_.items())
      if (!seen_.count(k)) fail(k, "unknown key");
  }
  Reader child(const std::string& key) {
    if (!has(key)) return Reader(empty_, where_, dotted(key), keys_);
    return Reader(at(key), where_, dotted(key), keys_);
  }
  std::string dotted(const std::string& key) const {
    return prefix_.empty() ? key : prefix_ + "." + key;
  }

 private:
  static inline const json empty_ = json::object();
  const json& j_;
  std::string where_;
  std::string prefix_;
  std::set<std::string>* keys_;
  std::set<std::string> seen_;
};

// model.*: the kind and its shape (config_model.cpp).
void parse_model(Reader m, PredictConfig& c);

// What the model builders would reject, said with the key to change; checked once every key is
// read, as the checks join the model with the mesh, the schedule and the options
// (config_model.cpp).
void check_shapes(const PredictConfig& c, Reader& mesh, Reader& top);

}  // namespace meshscope::predict::config_parts
