// A device's position in a dp x pp x tp mesh: shared by the Timeline and the mesh arithmetic, so
// neither has to include the other.
#pragma once

namespace meshscope::traces {

// Position of a device in a dp x pp x tp mesh; -1 where unknown (imported traces).
struct MeshCoord {
  int dp = -1;
  int pp = -1;
  int tp = -1;
  friend bool operator==(const MeshCoord&, const MeshCoord&) = default;
};

}  // namespace meshscope::traces
