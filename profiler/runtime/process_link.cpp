// Reading how the environment launched this process (mpirun, srun, PMI).
#include "profiler/runtime/process_link.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <string>

namespace meshscope::runtime {
namespace {

// How many processes a launch holds: Open MPI's mpirun sets the first, MPICH's and Slurm's PMI
// the second.
constexpr std::initializer_list<const char*> kSizeVariables = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};

// The first of `vars` the environment sets to an integer in [0, 2^20]; nullopt when none does.
std::optional<int> launch_variable(std::initializer_list<const char*> vars) {
  for (const char* var : vars) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (*end == '\0' && n >= 0 && n <= (1 << 20)) return static_cast<int>(n);
  }
  return std::nullopt;
}

}  // namespace

int launched_process_count() { return std::max(1, launch_variable(kSizeVariables).value_or(1)); }

bool launched_by_a_launcher() { return launch_variable(kSizeVariables).has_value(); }

std::string launch_variables_text() {
  std::string out;
  for (const char* var : kSizeVariables) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0') continue;
    // Its value when it is a number; a hostile value is not echoed.
    const std::string value(v);
    const bool number = value.size() <= 10 && std::all_of(value.begin(), value.end(), [](char c) {
                          return c >= '0' && c <= '9';
                        });
    out += (out.empty() ? "" : ", ") + std::string(var) + (number ? "=" + value : "");
  }
  return out;
}

int launched_process_index() {
  return launch_variable({"OMPI_COMM_WORLD_RANK", "PMI_RANK"}).value_or(0);
}

int launched_processes_on_this_node() {
  return std::max(0,
                  launch_variable({"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"}).value_or(0));
}

}  // namespace meshscope::runtime
