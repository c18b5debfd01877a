// `meshscope schedules`: list the schedule families, or generate one (`--dump FAMILY --pp 4
// --microbatches 8 [-o FILE]`) or convert a schedule file (`--from FILE`) to schedule text or
// torch's CSV (`--format torch-csv`) to read, hand-edit, `validate` or hand to torch; or recover
// the schedule a torch.distributed.pipelining job ran from its traces (`--from-trace DIR`).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "cli/commands.h"
#include "cli/output_path.h"
#include "cli/run_common.h"
#include "cli/torch_trace_schedule.h"
#include "sim/schedule/generators.h"
#include "sim/schedule/schedule_file.h"
#include "sim/schedule/schedule_grid.h"
#include "sim/schedule/schedule_text.h"
#include "sim/schedule/torch_csv.h"
#include "traces/atomic_file.h"
#include "traces/byte_size.h"

namespace meshscope::cli {
namespace {

struct SchedulesArgs {
  std::string family;          // empty: list the families
  bool dump_given = false;     // --dump was on the command line (an empty name is an error)
  int dp = 0, pp = 0, tp = 0;  // 0: not given (mesh_of_flags, as `run`)
  int microbatches = 0;        // 0: default_microbatches (as `run`)
  int virtual_stages = 0;      // 0: the family's default (as `run`)
  int64_t activation_bytes = 0;
  int64_t gradient_bytes = 0;
  std::string from;        // a schedule file to convert instead of generating
  std::string from_trace;  // a torch pipelining job's traces: the schedule that ran
  std::string format = "text";
  std::string torch_format;  // empty: the input's torch variant, else compute_only
  std::string out;
  bool grid = false;
};

std::string family_names() {
  std::string out;
  for (const schedule::FamilyInfo& f : schedule::kFamilies) {
    out += (out.empty() ? "" : ", ") + std::string(f.name);
  }
  return out;
}

// One line per family; chunks per rank and placement when they are not one chunk in a loop, and
// torch.distributed.pipelining's class of the same order.
void list_families() {
  for (const schedule::FamilyInfo& f : schedule::kFamilies) {
    std::string extra;
    if (f.max_virtual_stages != 1) {
      extra = "chunks per rank: " +
              (f.min_virtual_stages == f.max_virtual_stages
                   ? std::to_string(f.min_virtual_stages)
                   : std::to_string(f.min_virtual_stages) + "+ (default " +
                         std::to_string(f.default_virtual_stages) + ")") +
              ", placement " +
              std::string(schedule::kPlacementNames[static_cast<size_t>(f.placement)]);
    }
    if (!f.torch_class.empty()) {
      extra += (extra.empty() ? "" : "; ") + std::string("torch ") + std::string(f.torch_class);
    }
    std::printf("%-15s %s%s\n", std::string(f.name).c_str(), std::string(f.description).c_str(),
                extra.empty() ? "" : (" [" + extra + "]").c_str());
  }
}

schedule::Schedule generate(const SchedulesArgs& args) {
  const std::optional<schedule::Family> family = schedule::parse_family(args.family);
  if (!family) {
    throw usage_error("unknown schedule family '" + args.family + "' (one of " + family_names() +
                      ")");
  }
  schedule::GeneratorConfig config;
  config.family = *family;
  // The defaults of `run -s FAMILY`, so that a dump is the schedule run would execute.
  config.mesh = mesh_of_flags(args.dp, args.pp, args.tp, 0, *family);
  config.microbatches = args.microbatches > 0
                            ? args.microbatches
                            : default_microbatches(*family, config.mesh.pp, args.virtual_stages);
  config.virtual_stages = args.virtual_stages > 0 ? args.virtual_stages
                                                  : schedule::info(*family).default_virtual_stages;
  if (args.activation_bytes > 0) config.activation_bytes = {args.activation_bytes};
  if (args.gradient_bytes > 0) config.gradient_bytes = {args.gradient_bytes};
  try {
    return schedule::generate(config);
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
}

// The schedule in the requested form; a torch CSV written in the variant asked for, else in the
// one it was read from (so torch CSV -> meshscope -> torch CSV gives the same bytes).
std::string render(const SchedulesArgs& args, schedule::ScheduleFileFormat format,
                   const schedule::Schedule& s,
                   const std::optional<schedule::TorchCsvFormat>& input_variant) {
  if (format == schedule::ScheduleFileFormat::kText) return schedule::dump(s);
  // A schedule that came from torch through schedule text keeps torch's markers: WAIT_SEND,
  // UNSHARD, ... only appear in compute_comms, so they say which variant it was; REDUCE_GRAD and
  // its wait alone, pipeline_order (torch's compute_comms files all hold UNSHARD and RESHARD).
  const auto any_marker = [&](auto&& pred) {
    return std::any_of(s.markers.begin(), s.markers.end(), [&](const auto& rank) {
      return std::any_of(rank.begin(), rank.end(), pred);
    });
  };
  const auto reduce = [](const schedule::Marker& m) {
    return m.kind == schedule::MarkerKind::kReduceGrad ||
           m.kind == schedule::MarkerKind::kWaitReduceGrad;
  };
  const bool comms_markers = any_marker([&](const schedule::Marker& m) {
    return m.kind != schedule::MarkerKind::kIdle && !reduce(m);
  });
  schedule::TorchCsvFormat variant =
      input_variant.value_or(comms_markers        ? schedule::TorchCsvFormat::kComputeComms
                             : any_marker(reduce) ? schedule::TorchCsvFormat::kPipelineOrder
                                                  : schedule::TorchCsvFormat::kComputeOnly);
  if (!args.torch_format.empty()) {
    variant = *schedule::parse_torch_csv_format(args.torch_format);  // checked in run()
    // pipeline_order is torch's own _get_pipeline_order() output, whose REDUCE_GRAD cells (and
    // numbering) only a schedule read from torch carries: written without them it was
    // compute_only under another name.
    if (variant == schedule::TorchCsvFormat::kPipelineOrder && !any_marker(reduce)) {
      throw UserError(
          "--torch-format pipeline_order needs the REDUCE_GRAD cells torch writes, which only a "
          "schedule read from torch holds (--from a pipeline_order CSV or its schedule text); "
          "this one has none: use compute_only or compute_comms");
    }
  }
  try {
    return schedule::write_torch_csv(s, variant);
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
}

void run(const SchedulesArgs& args) {
  require_distinct_outputs({{"--out", &args.out}},
                           {{"--from", args.from}, {"--from-trace", args.from_trace}});
  if (!args.torch_format.empty()) {
    if (!schedule::parse_torch_csv_format(args.torch_format))
      throw usage_error("unknown --torch-format '" + args.torch_format +
                        "' (compute_only, compute_comms or pipeline_order)");
    if (args.format != "torch-csv")
      throw usage_error(
          "--torch-format chooses a torch CSV variant: it goes with --format torch-csv");
  }
  const std::optional<schedule::ScheduleFileFormat> format =
      schedule::parse_schedule_file_format(args.format);
  if (!format) throw usage_error("unknown --format '" + args.format + "' (text or torch-csv)");
  // The readers go by the name (detect_schedule_format: a .csv file is torch's CSV, a .sched file
  // text): a file named for the other form is refused when read back ("unknown keyword
  // '0F0,0F1,0B0,0B1'").
  const std::string extension = std::filesystem::path(args.out).extension().string();
  const bool as_text = *format == schedule::ScheduleFileFormat::kText;
  if ((extension == ".csv" || extension == ".sched") &&
      schedule::detect_schedule_format(args.out, "") != *format)
    throw usage_error("--out " + args.out + ": a " + extension + " file is read as " +
                      (as_text ? "torch's CSV" : "schedule text") + ", but --format " +
                      args.format + " writes " + (as_text ? "schedule text" : "torch's CSV") +
                      ": name it " + (as_text ? ".sched" : ".csv") + ", or give --format " +
                      (as_text ? "torch-csv" : "text"));
  if (const std::string problem = schedule_file_name_problem(args.out, !as_text); !problem.empty())
    throw usage_error("--out: " + problem);
  // `--dump ""` (an unset shell variable) had listed the families and succeeded.
  if (args.dump_given && args.family.empty())
    throw usage_error("--dump needs a family name (see `meshscope schedules`)");
  const int sources = !args.family.empty() + !args.from.empty() + !args.from_trace.empty();
  if (sources > 1) throw usage_error("give one of --dump FAMILY, --from FILE, --from-trace DIR");
  if (sources == 0) {
    // Options that shape a schedule's output, given with none to output, would be ignored.
    if (args.grid || !args.out.empty() || args.format != "text" || !args.torch_format.empty())
      throw usage_error(
          "--format, --torch-format, --out and --grid apply to a schedule: give --dump FAMILY, "
          "--from FILE or --from-trace DIR");
    list_families();
    return;
  }
  schedule::Schedule s;
  std::optional<schedule::TorchCsvFormat> input_variant;
  std::string recovered_csv;
  std::string replicas_note;  // a recovered job of several pipeline groups: which one this is
  if (!args.from_trace.empty()) {
    RecoveredSchedule recovered =
        recover_torch_schedule(load_torch_job(args.from_trace, "schedules"), args.from_trace);
    s = std::move(recovered.parsed.schedule);
    input_variant = recovered.parsed.format;
    recovered_csv = std::move(recovered.csv);
    if (recovered.groups > 1) {
      std::string ranks;
      for (const int r : recovered.ranks) ranks += (ranks.empty() ? "" : " ") + std::to_string(r);
      replicas_note = "the job ran " + std::to_string(recovered.groups) + " pipeline groups (dp " +
                      std::to_string(recovered.groups) + "); this is the first's (global ranks " +
                      ranks + "), " +
                      (recovered.differing_rank < 0
                           ? std::string("which every group ran")
                           : "and global rank " + std::to_string(recovered.differing_rank) +
                                 " ran other actions than its place in it");
      std::cerr << "meshscope schedules: note: " << replicas_note << "\n";
    }
  } else if (!args.from.empty()) {
    try {
      schedule::LoadedSchedule loaded = schedule::load_schedule_file(args.from);
      s = std::move(loaded.schedule);
      if (loaded.format == schedule::ScheduleFileFormat::kTorchCsv)
        input_variant = loaded.torch_format;
    } catch (const schedule::ScheduleParseError& e) {
      throw UserError(e.what());
    }
  } else {
    s = generate(args);
  }
  // torch's CSV of a recovered run: its rows as torch writes them, unless a variant is asked for.
  const bool torch_rows = !recovered_csv.empty() && args.torch_format.empty() &&
                          *format == schedule::ScheduleFileFormat::kTorchCsv;
  std::string text = torch_rows ? recovered_csv : render(args, *format, s, input_variant);
  // The schedule text of one pipeline says mesh dp=1: say, in a comment, what the job was.
  constexpr std::string_view kTextHeader = "# meshscope schedule v1\n";
  if (!replicas_note.empty() && text.starts_with(kTextHeader))
    text.insert(kTextHeader.size(), "# " + replicas_note + "\n");
  // A schedule past what validate, run and simulate read would be written and then refused
  // (pp 1048576: 138 MB written, "more than the 64 MiB a schedule file may have").
  if (text.size() > schedule::kMaxScheduleFileBytes)
    throw UserError("the schedule is " + traces::format_bytes(static_cast<double>(text.size())) +
                    " as " + (as_text ? "schedule text" : "torch's CSV") + ", more than the " +
                    traces::format_bytes(static_cast<double>(schedule::kMaxScheduleFileBytes)) +
                    " a schedule file may have (validate, run and simulate read no more): "
                    "fewer ranks or microbatches; nothing written");
  if (args.grid) std::cout << schedule::format_grid(s);
  if (args.out.empty()) {
    if (!args.grid) std::cout << text;
    return;
  }
  try {
    traces::write_file_atomic(args.out, text);
  } catch (const std::runtime_error& e) {
    throw UserError(e.what());
  }
}

}  // namespace

void add_schedules_command(CLI::App& app) {
  auto args = std::make_shared<SchedulesArgs>();
  CLI::App* cmd = app.add_subcommand(
      "schedules",
      "List the schedule families (one line each), or generate one as schedule text with --dump");
  cmd->add_option(
         "--dump", args->family,
         "generate this family's schedule and print it as schedule text (" + family_names() + ")")
      ->type_name("FAMILY");
  cmd->add_option("--dp", args->dp,
                  "data-parallel replicas (the defaults are run's: each of --dp, --pp, --tp is 1, "
                  "but with none given the family's own dimension is 4)")
      ->check(CLI::Range(1, schedule::kMaxRanks))
      ->needs("--dump");
  cmd->add_option("--pp", args->pp, "pipeline ranks")
      ->check(CLI::Range(1, schedule::kMaxRanks))
      ->needs("--dump");
  cmd->add_option("--tp", args->tp, "tensor-parallel ranks per stage")
      ->check(CLI::Range(1, schedule::kMaxRanks))
      ->needs("--dump");
  cmd->add_option(
         "--microbatches,-m", args->microbatches,
         "microbatches per replica per step (default 8, or as many as the family needs when "
         "that is more: pp, or pp x chunks per rank for dualpipe-v)")
      ->check(CLI::Range(1, schedule::kMaxRanks))
      ->needs("--dump");
  cmd->add_option("--virtual,-v", args->virtual_stages,
                  "model chunks per pp rank (default: the family's, see the list)")
      ->check(CLI::Range(1, schedule::kMaxRanks))
      ->needs("--dump");
  cmd->add_option("--activation-bytes", args->activation_bytes,
                  "bytes each stage sends per microbatch (and receives back as gradient)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 50))
      ->needs("--dump");
  cmd->add_option("--grad-bytes", args->gradient_bytes,
                  "bytes of each stage's gradients, all-reduced over dp")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 50))
      ->needs("--dump");
  cmd->add_option("--from", args->from,
                  "convert this schedule file instead of generating one: " +
                      std::string(schedule::kScheduleFileHelp))
      ->type_name("FILE")
      ->check(input_path_check());
  cmd->add_option("--from-trace", args->from_trace,
                  "recover the schedule a torch.distributed.pipelining job ran from its "
                  "profiler traces (a folder of per-rank Kineto files, or one file)")
      ->type_name("DIR")
      ->check(input_path_check());
  cmd->add_option("--format", args->format,
                  "output form: text (meshscope schedule text) or torch-csv (torch's _load_csv "
                  "format)")
      ->capture_default_str();
  cmd->add_option(
      "--torch-format", args->torch_format,
      "torch CSV variant: compute_only (torch lowers it itself), compute_comms "
      "(with SEND/RECV rows) or pipeline_order (compute_only with the REDUCE_GRAD cells of torch's "
      "_get_pipeline_order() for GPipe and 1F1B, for a schedule read from torch that holds them); "
      "default: the variant --from was in (a schedule "
      "text from torch: "
      "compute_comms when it holds torch's UNSHARD/WAIT markers, pipeline_order when its only "
      "markers are REDUCE_GRAD), else compute_only");
  cmd->add_option("-o,--out", args->out, "write the schedule to FILE (whole or not at all)")
      ->check(output_file_check())
      ->type_name("FILE");
  cmd->add_flag("--grid", args->grid,
                "print the step x rank grid (instead of the text when no --out is given)");
  cmd->callback([args, cmd] {
    args->dump_given = cmd->count("--dump") > 0;
    run(*args);
  });
}

}  // namespace meshscope::cli
