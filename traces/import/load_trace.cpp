// load_trace: opens a file (or bytes), undoes gzip, and hands the stream to the importer that
// claims its first bytes (traces/import/importer_table.cpp).
#include "traces/import/load_trace.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include "traces/analysis.h"
#include "traces/import/byte_source.h"
#include "traces/import/import_common.h"
#include "traces/import/importer_table.h"
#include "traces/import/multi_rank.h"
#include "traces/import/torch_pipeline.h"
#include "traces/input_file.h"
#include "traces/number_text.h"
#include "traces/printable.h"

namespace meshscope::traces {
namespace {

using importer::OpenedTrace;

Timeline load_any(const std::filesystem::path& file, const std::string_view* memory,
                  const std::string& name, const ImportOptions& options, ImportReport* report) {
  ImportReport local;
  ImportReport& r = report != nullptr ? *report : local;
  r.file = name;
  bool gzip = false;
  try {
    OpenedTrace opened = importer::open_trace_source(file, memory, name, options);
    gzip = opened.gzip;
    const importer::Importer& reader = importer::importer_for(opened, options, name);
    Timeline t = reader.load(importer::TraceInput{file, memory, opened, name}, options, r);
    importer::drop_devices_without_spans(t, r);
    return t;
  } catch (const ImportError& e) {
    if (gzip) throw e.in_decompressed_data();
    throw;
  } catch (const std::length_error& e) {
    // The Timeline's own limits (2^32 spans, 2^16 devices) or an allocation size limit.
    throw ImportError(name, "", std::string("trace too large: ") + e.what());
  }
}

// --rank-from file-order: the file's devices take `rank`, in their names too ("rank 0 · GPU 0",
// as the builder named them from distributedInfo, becomes "rank 3 · GPU 0").
void renumber_rank(Timeline& t, int rank) {
  const std::string prefix = "rank " + t.metadata["rank"] + " · ";
  for (Device& d : t.devices) {
    d.rank = rank;
    if (d.name.starts_with(prefix)) {
      d.name = "rank " + std::to_string(rank) + " · " + d.name.substr(prefix.size());
    }
  }
  t.metadata["rank"] = std::to_string(rank);
}

bool is_trace_file_name(const std::string& n) {
  for (const importer::Importer& i : importer::importers()) {
    for (const std::string_view suffix : i.suffixes) {
      if (n.ends_with(suffix)) return true;
    }
  }
  return false;
}

}  // namespace

std::string_view detect_trace_format(const std::filesystem::path& file) {
  ImportOptions options;
  OpenedTrace opened = importer::open_trace_source(file, nullptr, file.string(), options);
  return importer::importer_for(opened, options, file.string()).format;
}

Timeline load_trace(const std::filesystem::path& file, const ImportOptions& options,
                    ImportReport* report) {
  return load_any(file, nullptr, file.string(), options, report);
}

Timeline load_trace_bytes(std::string_view bytes, std::string_view display_name,
                          const ImportOptions& options, ImportReport* report) {
  return load_any({}, &bytes, std::string(display_name), options, report);
}

std::vector<std::filesystem::path> trace_files_in(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    if (!is_trace_file_name(entry.path().filename().string())) continue;
    std::error_code entry_ec;
    const bool regular = entry.is_regular_file(entry_ec);
    // A link that leads nowhere is no file of the folder's; one that cannot be followed (a loop)
    // is named rather than ending the listing with the library's text.
    if (entry_ec && entry_ec != std::errc::no_such_file_or_directory)
      throw ImportError(entry.path(), "", "cannot be read: " + entry_ec.message());
    if (regular) files.push_back(entry.path());
  }
  if (ec) throw ImportError(folder, "", "cannot list folder: " + ec.message());
  // Numbers in names in their numeric order: rank10.json after rank9.json, not after rank1.json
  // (files without distributedInfo are numbered in this order: an 11-rank job had read rank10 as
  // rank 2).
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
    return natural_less(a.filename().string(), b.filename().string());
  });
  return files;
}

bool natural_less(std::string_view a, std::string_view b) {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ei = i, ej = j;
      while (ei < a.size() && digit(a[ei])) ++ei;
      while (ej < b.size() && digit(b[ej])) ++ej;
      std::string_view x = a.substr(i, ei - i), y = b.substr(j, ej - j);
      while (x.size() > 1 && x.front() == '0') x.remove_prefix(1);
      while (y.size() > 1 && y.front() == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if ((i < a.size()) != (j < b.size())) return j < b.size();
  return a < b;  // equal as numbers ("rank01", "rank1"): by their bytes, for a total order
}

namespace {

// One rank's file, read: its rank from the trace (or its place among the files) and clock base.
importer::RankTrace rank_trace(Timeline timeline, std::string file, int index,
                               const ImportOptions& options) {
  importer::RankTrace r;
  r.timeline = std::move(timeline);
  r.file = std::move(file);
  r.rank = index;
  const auto& meta = r.timeline.metadata;
  const auto number = [&meta](const char* key) -> std::optional<int64_t> {
    const auto it = meta.find(key);
    return it == meta.end() ? std::nullopt : parse_whole_int(it->second);
  };
  if (const std::optional<int64_t> rank = number("rank")) {
    if (options.rank_from_file_order) {
      renumber_rank(r.timeline, r.rank);
    } else {
      r.rank = static_cast<int>(*rank);
    }
  }
  if (const std::optional<int64_t> base = number("base_time_ns"); base && time_in_range(*base)) {
    r.base_time_ns = *base;
  }
  return r;
}

// Files that say which job they are of (Kineto's distributedInfo: world_size, backend) must say
// the same, and each rank must be inside its world: ranks of two jobs merged gave steps of years
// (clocks 2.5 years apart) and bubbles of 100% without a word. With --rank-from file-order the
// files are whatever the user lines up (two single-GPU runs side by side), so nothing is checked.
void require_same_job(const importer::RankTrace& first, const importer::RankTrace& r) {
  const auto stated = [](const importer::RankTrace& t, const char* key) -> const std::string* {
    const auto it = t.timeline.metadata.find(key);
    return it == t.timeline.metadata.end() ? nullptr : &it->second;
  };
  const std::string* w = stated(r, "world_size");
  if (const std::optional<int64_t> world = w != nullptr ? parse_whole_int(*w) : std::nullopt;
      world && *world > 0 && r.rank >= *world) {
    throw ImportError(r.file, "",
                      "rank " + std::to_string(r.rank) + " is outside its job's world_size " +
                          std::to_string(*world) + " (distributedInfo)");
  }
  for (const char* key : {"world_size", "backend"}) {
    const std::string* mine = stated(r, key);
    const std::string* theirs = stated(first, key);
    if (mine != nullptr && theirs != nullptr && *mine != *theirs) {
      throw ImportError(r.file, "",
                        std::string(key) + " " + printable(*mine, 40) + ", where " + first.file +
                            " says " + printable(*theirs, 40) +
                            ": ranks of different jobs (give one job's files; analyze "
                            "--rank-from file-order sets unrelated traces side by side)");
    }
  }
}

// The ranks of one job run each step together: a pipeline's activations and gradients, a data-
// parallel all-reduce tie every rank's step to the others'. A rank whose steps (a trace without
// steps: all of it), on the common clock, lie wholly before or after the first rank's is of
// another run, or its steps were profiled at other times, or its clock is not the others' (two
// Nsight reports 92 days apart had read as one job with a step of 92 days); merged by index its
// step k widens every step k by the distance between them (a swapped torch rank file: a step of 67
// s for 0.1 s of work). Named in the report, not refused: a user may mean it (--align none on
// purpose).
void warn_of_ranks_apart(const std::vector<importer::RankTrace>& ranks,
                         const std::vector<int64_t>& offsets, ImportReport& report) {
  const auto extent = [&](size_t r) -> std::optional<StepWindow> {
    const Timeline& t = ranks[r].timeline;
    if (t.steps.empty() && t.spans.empty()) return std::nullopt;
    // A trace without steps (an Nsight Systems report, an inference trace): all of it.
    StepWindow e = t.steps.empty() ? t.extent() : t.steps.front();
    for (const StepWindow& w : t.steps) {
      e.begin_ns = std::min(e.begin_ns, w.begin_ns);
      e.end_ns = std::max(e.end_ns, w.end_ns);
    }
    // An offset that would overflow is the merge's to refuse (merge_ranks names the file).
    StepWindow moved;
    if (__builtin_add_overflow(e.begin_ns, offsets[r], &moved.begin_ns) ||
        __builtin_add_overflow(e.end_ns, offsets[r], &moved.end_ns))
      return std::nullopt;
    return moved;
  };
  std::optional<size_t> first;
  std::optional<StepWindow> reference;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const std::optional<StepWindow> mine = extent(r);
    if (!mine) continue;
    if (!reference) {
      first = r;
      reference = mine;
      continue;
    }
    const bool before = mine->end_ns <= reference->begin_ns;
    if (!before && mine->begin_ns < reference->end_ns) continue;  // they overlap
    int64_t apart = 0;
    if (before ? __builtin_sub_overflow(reference->begin_ns, mine->end_ns, &apart)
               : __builtin_sub_overflow(mine->begin_ns, reference->end_ns, &apart))
      continue;  // clocks past any alignment: the merge refuses them
    const auto what = [&](size_t k) { return ranks[k].timeline.steps.empty() ? "trace" : "steps"; };
    report.warn_at(ImportWarning::kRankStepsApart,
                   "rank " + std::to_string(ranks[r].rank) + "'s " + what(r) + " (" +
                       ranks[r].file + ") " + (before ? "end " : "begin ") +
                       format_duration(apart) + (before ? " before" : " after") + " rank " +
                       std::to_string(ranks[*first].rank) + "'s " + what(*first) + " " +
                       (before ? "begin" : "end"));
  }
}

// The ranks' files as one mesh Timeline (load_traces, load_traces_bytes).
Timeline merge_rank_traces(std::vector<importer::RankTrace> ranks, const ImportOptions& options,
                           ImportReport total, ImportReport* report) {
  std::map<int, const std::string*> file_of_rank;
  for (const importer::RankTrace& r : ranks) {
    // meshscope's export of a whole job (`convert` of a folder) is one job, not one rank of one.
    const auto job = r.timeline.metadata.find("ranks");
    if (const std::optional<int64_t> held =
            job != r.timeline.metadata.end() ? parse_whole_int(job->second) : std::nullopt;
        ranks.size() > 1 && held && *held > 1) {
      throw ImportError(r.file, "",
                        "holds a whole job of " + std::to_string(*held) +
                            " ranks (a meshscope export): read it alone, not as one rank of "
                            "several files");
    }
    // So is a meshscope run's trace (every rank's devices in one file), and two runs' traces in
    // one folder were merged as one run's, devices named alike side by side.
    std::set<int> device_ranks;
    for (const Device& d : r.timeline.devices) device_ranks.insert(d.rank);
    if (ranks.size() > 1 && device_ranks.size() > 1 && r.timeline.run.source != RunSource::kNsys) {
      throw ImportError(r.file, "",
                        "holds the devices of " + std::to_string(device_ranks.size()) +
                            " ranks (a whole run's trace): read it alone, not as one rank of "
                            "several files");
    }
    if (!options.rank_from_file_order) require_same_job(ranks.front(), r);
    const auto [it, fresh] = file_of_rank.emplace(r.rank, &r.file);
    if (!fresh) {
      // rank0.json beside rank0.json.gz: the same trace twice, which file-order would read as
      // twice the ranks.
      const auto stem = [](std::string name) {
        if (name.ends_with(".gz")) name.resize(name.size() - 3);
        return name;
      };
      if (stem(r.file) == stem(*it->second)) {
        throw ImportError(r.file, "",
                          "rank " + std::to_string(r.rank) + " is also the rank of " + *it->second +
                              ": the same trace twice, once compressed? give one");
      }
      throw ImportError(r.file, "",
                        "rank " + std::to_string(r.rank) + " is also the rank of " + *it->second +
                            ": one file per rank (or --rank-from file-order to number the files "
                            "in order)");
    }
  }
  std::stable_sort(ranks.begin(), ranks.end(),
                   [](const auto& a, const auto& b) { return a.rank < b.rank; });
  const auto offsets = importer::align_clocks(ranks, options.align, total.clocks);
  warn_of_ranks_apart(ranks, offsets, total);
  Timeline merged = importer::merge_ranks(ranks, offsets);
  importer::pair_torch_transfers(merged);
  merged.metadata["clock_align"] = std::string(name(options.align));
  merged.sort_spans();
  if (report != nullptr) *report = std::move(total);
  return merged;
}

}  // namespace

Timeline load_traces(std::span<const std::filesystem::path> paths, const ImportOptions& options,
                     ImportReport* report) {
  std::vector<std::filesystem::path> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      const auto inside = trace_files_in(p);
      if (inside.empty()) throw ImportError(p, "", "no trace files in this folder");
      files.insert(files.end(), inside.begin(), inside.end());
    } else {
      files.push_back(p);
    }
  }
  if (files.empty()) throw ImportError("(no files)", "", "no trace files given");
  // The same file under two names (x.json ./x.json, a folder and a file in it) is one rank read
  // twice: files are told apart by device and inode, one stat each.
  std::map<std::pair<dev_t, ino_t>, size_t> seen;
  for (size_t i = 0; i < files.size(); ++i) {
    struct stat st {};
    if (::stat(files[i].c_str(), &st) != 0) continue;  // load_trace says why
    const auto [it, fresh] = seen.emplace(std::make_pair(st.st_dev, st.st_ino), i);
    if (!fresh) {
      throw ImportError(
          files[i], "",
          "given twice (also as " + files[it->second].string() + "): each rank's file once");
    }
  }
  ImportReport total;
  std::vector<importer::RankTrace> ranks;
  for (size_t i = 0; i < files.size(); ++i) {
    ImportReport one;
    Timeline t = load_trace(files[i], options, &one);
    total.merge(one);
    ranks.push_back(rank_trace(std::move(t), files[i].string(), static_cast<int>(i), options));
  }
  return merge_rank_traces(std::move(ranks), options, std::move(total), report);
}

Timeline load_trace_paths(std::span<const std::filesystem::path> paths,
                          const ImportOptions& options, ImportReport* report) {
  // Every path is looked at before any is read: a missing last rank is said at once, not after
  // minutes of reading the others.
  for (const std::filesystem::path& p : paths) {
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) throw ImportError(p, "", why_missing(p.string()));
  }
  std::error_code ec;
  if (paths.size() == 1 && !std::filesystem::is_directory(paths[0], ec)) {
    return load_trace(paths[0], options, report);
  }
  return load_traces(paths, options, report);
}

Timeline load_traces_bytes(std::span<const NamedTraceBytes> files, const ImportOptions& options,
                           ImportReport* report) {
  if (files.empty()) throw ImportError("(no files)", "", "no trace files given");
  ImportReport total;
  std::vector<importer::RankTrace> ranks;
  for (size_t i = 0; i < files.size(); ++i) {
    ImportReport one;
    Timeline t = load_trace_bytes(files[i].bytes, files[i].name, options, &one);
    total.merge(one);
    ranks.push_back(rank_trace(std::move(t), files[i].name, static_cast<int>(i), options));
  }
  return merge_rank_traces(std::move(ranks), options, std::move(total), report);
}

void require_spans(const Timeline& t, const std::filesystem::path& source,
                   const ImportReport* report) {
  if (!t.spans.empty()) return;
  std::string reason = "no usable spans";
  if (report != nullptr && report->events_read > 0) {
    reason += " (" + std::to_string(report->events_read) + " events read, " +
              std::to_string(report->total_warnings()) + " skipped with warnings)";
  }
  throw ImportError(source, std::string(), reason + ": nothing to analyze, convert or show");
}

}  // namespace meshscope::traces
