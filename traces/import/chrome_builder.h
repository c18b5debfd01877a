// Turns the trace events of a Chrome/Kineto JSON file into a Timeline: Kineto's GPU events onto
// one device per GPU with a lane per stream, host events onto one device per process with a lane
// per thread, NCCL kernels into communication spans, flows bound to the spans they point at,
// ProfilerStep#N into steps; meshscope's own exports (the "meshscope" header) back exactly.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "traces/import/chrome_reader.h"
#include "traces/import/comm_kernels.h"
#include "traces/import/correlation_flows.h"
#include "traces/import/import_common.h"
#include "traces/import/import_types.h"
#include "traces/import/kineto_names.h"
#include "traces/timeline.h"

namespace meshscope::traces::importer {

struct ArgView;

// A pid, tid or flow id as written: a number, or a string (kept as an index into a local table).
struct IdKey {
  int64_t value = 0;
  bool is_string = false;
  friend bool operator==(const IdKey&, const IdKey&) = default;
};
struct ThreadKey {
  IdKey pid, tid;
  friend bool operator==(const ThreadKey&, const ThreadKey&) = default;
};
struct IdKeyHash {
  size_t operator()(const IdKey& k) const {
    return std::hash<int64_t>{}(k.value) * 2 + static_cast<size_t>(k.is_string);
  }
};
struct ThreadKeyHash {
  size_t operator()(const ThreadKey& k) const {
    return IdKeyHash{}(k.pid) * 0x9E3779B97F4A7C15ULL ^ IdKeyHash {}(k.tid);
  }
};
struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using StringIndex = std::unordered_map<std::string, uint32_t, StringViewHash, std::equal_to<>>;

class ChromeTimelineBuilder : public ChromeSink {
 public:
  ChromeTimelineBuilder(std::string file, const ImportOptions& options, ImportReport& report);
  void on_event(const ChromeEvent& event) override;
  void on_member(const ChromeMember& member) override;
  // Completes the Timeline (device order, sorting, flows, steps, metadata) and hands it over.
  Timeline finish(const ChromeReadSummary& summary);
  // The file is meshscope's own export (its "meshscope" header): its spans carry their labels.
  bool own_export() const { return mode_ == Mode::kMeshscope; }

 private:
  enum class Mode : uint8_t { kKineto, kMeshscope };
  enum class DeviceClass : uint8_t { kGpu, kProcess };

  struct DeviceRec {
    DeviceClass cls = DeviceClass::kProcess;
    IdKey key;                 // GPU index, or pid
    std::vector<IdKey> lanes;  // stream ids or tids, in creation order
    std::unordered_map<IdKey, uint16_t, IdKeyHash> lane_of;
  };
  struct DeviceKey {
    DeviceClass cls;
    IdKey key;
    friend bool operator==(const DeviceKey&, const DeviceKey&) = default;
  };
  struct DeviceKeyHash {
    size_t operator()(const DeviceKey& k) const {
      return IdKeyHash{}(k.key) ^ (static_cast<size_t>(k.cls) << 1);
    }
  };
  struct ThreadSlot {
    uint16_t device = 0;  // index into devices_ (creation order until finish)
    uint16_t lane = 0;
    std::vector<Span> open;                // B events waiting for their E
    std::vector<SpanOrigin> open_origins;  // their origins (keep_origins), span index unset
  };
  struct ProcessMeta {
    std::string name, labels;
    std::optional<int64_t> sort_index, rank, dp, pp, tp;
  };
  struct ThreadMeta {
    std::string name;
    std::optional<LaneKind> kind;
    std::optional<int64_t> sort_index;
  };
  struct FlowEnd {
    ThreadKey thread;
    IdKey id;
    uint32_t cat = 0;       // index into id_strings_, for pairing
    uint32_t category = 0;  // keep_origins: the "cat" as a Timeline string (Flow::category)
    char ph = 's';
    bool enclosing = true;  // binds to the enclosing slice, else to the next one
    int64_t ts_ns = 0;
    int64_t offset = 0;
    int64_t span = -1;  // meshscope: index of the X event it binds to
  };
  struct Placed {
    SpanKind kind = SpanKind::kHost;
    DeviceClass cls = DeviceClass::kProcess;
    CommOp comm = CommOp::kNone;
    bool skip = false;
    bool host = false;
  };

  // on_event parts.
  void complete_event(const ChromeEvent& ev);
  void begin_event(const ChromeEvent& ev);
  void end_event(const ChromeEvent& ev);
  void flow_event(const ChromeEvent& ev, char ph);
  void metadata_event(const ChromeEvent& ev);
  void counter_event(const ChromeEvent& ev);
  bool read_time(const ChromeEvent& ev, const JsonScalar& v, int64_t& ns);
  Placed place(const ChromeEvent& ev);
  void note_profiler_step(std::string_view name, int64_t begin_ns, int64_t end_ns,
                          int64_t byte_offset);
  void note_dropped_call(const ChromeEvent& ev, int64_t begin_ns);
  // Fills `s` from the event and adds it (returns its index), or with open_only pushes it on its
  // thread's B stack. kNoSpan when it has no place.
  uint32_t emit_span(const ChromeEvent& ev, const Placed& p, Span s, bool open_only);
  int64_t nccl_bytes(const ArgView& a) const;
  // A meshscope span's collective_* args into Timeline::collectives (a bad one: a warning).
  void read_collective(const ChromeEvent& ev, const ArgView& a, uint32_t span);
  // An NCCL kernel's collective from PyTorch's args on it ("Collective name", "Group size",
  // "Process Group Ranks"; bytes from its element counts and dtype) into Timeline::collectives:
  // the op where the cost model prices it (kineto_names.h, collective_op_named), else kOther; its
  // group's kind is not known (kWorld).
  void read_nccl_collective(const ArgView& a, std::string_view kernel, uint32_t span,
                            int64_t bytes);
  // The event's origin (keep_origins): its correlation, stream, category and the other args.
  SpanOrigin origin_of(const ChromeEvent& ev, const ArgView& a);
  std::optional<uint32_t> slot_for(const ChromeEvent& ev, DeviceClass cls,
                                   std::optional<int64_t> device_arg,
                                   std::optional<int64_t> stream_arg);
  std::optional<uint16_t> device_for(DeviceClass cls, IdKey key, int64_t offset);
  std::optional<uint16_t> lane_for(uint16_t device, IdKey key, int64_t offset);
  // Events of thread `key` go on the lane of thread `lane` (made if new), unless `key` has one.
  void alias_lane(uint16_t device, IdKey key, IdKey lane, int64_t offset);
  IdKey id_key(const JsonScalar& v);
  uint32_t intern(std::string_view s);

  // finish parts (chrome_builder_finish.cpp).
  void resolve_send_recv();
  void build_devices();
  void bind_flows();
  // Counters on a process id that holds no span but is a GPU's device id go to that GPU.
  void counters_onto_gpus();
  void build_steps();
  void fill_metadata(const ChromeReadSummary& summary);
  void read_meshscope_header(const ChromeMember& m);

  std::string file_;
  ImportOptions options_;
  CommKernelRules comm_rules_;
  ImportReport& report_;
  Timeline tl_;
  Mode mode_ = Mode::kKineto;
  bool saw_event_ = false;
  bool saw_kineto_ = false;

  StringIndex names_;       // span name -> Timeline string id
  StringIndex id_strings_;  // string pids, tids, flow ids, categories
  std::vector<std::string> id_string_list_;
  std::vector<DeviceRec> devices_;
  std::unordered_map<DeviceKey, uint16_t, DeviceKeyHash> device_of_;
  std::vector<ThreadSlot> slots_;
  std::unordered_map<ThreadKey, uint32_t, ThreadKeyHash> slot_of_;
  ThreadKey last_thread_;
  uint32_t last_slot_ = UINT32_MAX;
  std::unordered_map<IdKey, ProcessMeta, IdKeyHash> process_meta_;
  std::unordered_map<ThreadKey, ThreadMeta, ThreadKeyHash> thread_meta_;

  std::vector<FlowEnd> flow_ends_;
  std::vector<uint32_t> x_event_span_;  // meshscope: X event ordinal -> span (UINT32_MAX: none)
  std::vector<std::pair<uint32_t, int64_t>> send_recv_;  // SendRecv kernel span, External id
  std::vector<CorrelationEnd> correlation_ends_;         // Kineto spans with args.correlation
  // Kineto host calls dropped (keep_host false): correlation -> when the call began, so that a
  // step still covers the GPU work they launched (build_steps).
  std::unordered_map<int64_t, int64_t> dropped_call_at_;
  std::vector<DroppedLaunch> dropped_launches_;
  std::unordered_map<int64_t, CommOp> comm_op_of_external_id_;
  std::map<int64_t, StepWindow> profiler_steps_;  // ProfilerStep#N -> host range
  std::map<std::pair<uint16_t, std::string>, uint32_t> counter_of_;
  std::vector<bool> is_gpu_;  // by final device index, from build_devices
  std::string args_scratch_;  // origin_of's buffer, kept to avoid an allocation per event

  // Facts from top-level members.
  std::optional<int64_t> rank_, world_size_, base_time_ns_;
  std::string backend_, gpu_model_;
  std::string process_groups_;  // distributedInfo.pg_config (chrome_builder_finish.cpp)
  std::vector<StepWindow> header_steps_;
  std::map<std::string, std::string> header_metadata_;
  bool run_facts_typed_ = false;  // "meshscope_run" holds "cores" and the others beside it
};

}  // namespace meshscope::traces::importer
