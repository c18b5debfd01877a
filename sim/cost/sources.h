// What a catalog entry's or framework profile's `sources` (one line per figure or group of
// figures: "efficiency.memory 0.85: assumption (...)") say of one of its figures: the text a user
// reads beside the figure (`predict --sensitivity`), and what the provenance tests check exists.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace meshscope::cost {

// What `sources` says of `key`, a dotted key of a catalog entry or framework profile. A source
// line is read as parts, one per figure: split at "; ", a clause that starts with a key starts a
// part, the clauses after it until the next such clause qualify it. The part returned, in this
// order: one led (its text before ':' or '=') by the whole key; in a line with a part led by the
// key's section ("intra_node"), the part led by the key's last part; a part led by the last part
// anywhere ("latency_ns", for both tiers); the section's own part, led by the section itself and
// not one of its figures, which speaks for all its figures (a link tier's "intra_node: ...", a
// profile's "elementwise_passes: ..."); a part naming the whole key anywhere. Names match as whole
// words. Empty when none does.
std::string source_clause(const std::vector<std::string>& sources, std::string_view key);

// Every figure a catalog entry's or framework profile's file sets, dotted ("efficiency.sustained",
// "intra_node.bandwidth_bytes_per_s") with its value, by key: the top-level values and those one
// object down; a deeper value (a profile's per-GEMM settings) stands as one figure. Not
// figures: name, description, kind, sources and residuals (what a profile's rows measured).
std::vector<std::pair<std::string, nlohmann::json>> file_figures(const nlohmann::json& file);

}  // namespace meshscope::cost
