// Running one rank per process (a multi-node launch by mpirun): the raw message layer between the
// processes. ProcessLink is all a launcher has to provide (MPI: profiler/runtime/mpi); everything
// above it (tags, collectives, aborts, the cpu transport, the NCCL unique id) is plain C++ in
// process_messenger.h, so it is tested with in-process links without MPI.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace meshscope::runtime {

// Contract:
// - Processes are numbered 0..size()-1; index() is this one.
// - post(to, bytes) never waits for the receiver (the link copies or owns `bytes`); messages from
//   one process to another arrive in post order. Posting to oneself is allowed.
// - poll() returns one message that has arrived (sender, bytes), or nothing; it never blocks.
// - Used by one thread at a time (the messenger serialises its calls).
// - Destruction may happen with messages never polled (an aborted run); it must not hang.
class ProcessLink {
 public:
  virtual ~ProcessLink() = default;
  virtual int index() const = 0;
  virtual int size() const = 0;
  virtual void post(int to, std::string bytes) = 0;
  virtual std::optional<std::pair<int, std::string>> poll() = 0;
  // "MPI (Open MPI v4.1.4), 4 processes on 2 hosts" for logs and trace metadata.
  virtual std::string describe() const = 0;
  // Another process stopped answering (a wait for it passed its deadline): it may never reach its
  // own end, so destruction must end this process's part without waiting for it (MPI: MPI_Abort
  // instead of MPI_Finalize, which waits for every process). The error was reported already.
  virtual void abandon() noexcept {}
};

// How many processes the environment says were launched together (Open MPI's mpirun sets
// OMPI_COMM_WORLD_SIZE, MPICH's and Slurm's PMI set PMI_SIZE); 1 when neither says so.
int launched_process_count();
// Whether a launcher said so at all (either variable set): mpirun -np 1 launches one process.
bool launched_by_a_launcher();
// The launch variables the environment sets ("OMPI_COMM_WORLD_SIZE=4"), for a message about a
// launch that does not match them; "" when none is.
std::string launch_variables_text();
// This process's index in that launch (OMPI_COMM_WORLD_RANK or PMI_RANK); 0 when not launched so.
int launched_process_index();
// How many of them run on this process's node (Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE, MPICH's
// MPI_LOCALNRANKS); 0 when the environment does not say.
int launched_processes_on_this_node();

}  // namespace meshscope::runtime
