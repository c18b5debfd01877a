// One way to name and parse an enum: a constexpr table of names indexed by the enum's value, so
// every kind in the project is written and read by the same two functions.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace meshscope::traces {

// The name of `value` in `names` (indexed by the enum's underlying value).
template <typename Enum, size_t N>
constexpr std::string_view enum_name(const std::array<std::string_view, N>& names, Enum value) {
  return names[static_cast<size_t>(value)];
}

// The enum whose name is `s`; nullopt when no name matches (exact, case-sensitive).
template <typename Enum, size_t N>
constexpr std::optional<Enum> parse_enum(const std::array<std::string_view, N>& names,
                                         std::string_view s) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == s) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace meshscope::traces
