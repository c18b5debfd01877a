// Sends held back into the receiver's order, for channels that deliver in send order (NCCL's
// ncclSend/ncclRecv match a pair's messages by position, not by tag): a message goes out only once
// every message the receiver takes before it has gone, so a schedule may receive in another order
// than it sends (the validator matches by key) without the channel pairing the wrong buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace meshscope::runtime {

// One sender -> receiver channel. T is the staged message (a device buffer and its size).
template <typename T>
class SendSequencer {
 public:
  // The tags the receiver takes from this sender within one step, in its order, each once. The
  // order repeats every step. Without it (or with an empty list) messages go out as they come.
  void expect(const std::vector<int64_t>& tags) {
    if (!held_.empty()) throw std::logic_error("SendSequencer::expect while messages are held");
    order_ = tags;
    position_.clear();
    for (size_t i = 0; i < order_.size(); ++i) {
      if (!position_.emplace(order_[i], i).second) {
        throw std::invalid_argument("receive order lists tag " + std::to_string(order_[i]) +
                                    " twice");
      }
    }
    next_ = 0;
  }

  // Queues `message` sent with `tag`; returns the messages now free to go, in the receiver's
  // order (none when one it takes earlier has not been sent yet). Throws std::invalid_argument
  // for a tag the receiver never takes, or one sent twice within a step.
  std::vector<T> push(int64_t tag, T message) {
    std::vector<T> out;
    if (order_.empty()) {
      out.push_back(std::move(message));
      return out;
    }
    const auto pos = position_.find(tag);
    if (pos == position_.end()) {
      throw std::invalid_argument("send of tag " + std::to_string(tag) +
                                  ", which the receiver never receives from this rank");
    }
    if (pos->second < next_ || !held_.emplace(pos->second, std::move(message)).second) {
      throw std::invalid_argument("second send of tag " + std::to_string(tag) +
                                  " to the same receiver within one step");
    }
    for (auto it = held_.find(next_); it != held_.end(); it = held_.find(next_)) {
      out.push_back(std::move(it->second));
      held_.erase(it);
      if (++next_ == order_.size()) next_ = 0;  // the step's last message: the next step starts
    }
    return out;
  }

  // Messages waiting for an earlier one (0 at the end of every step of a valid schedule).
  size_t held() const { return held_.size(); }

 private:
  std::vector<int64_t> order_;
  std::unordered_map<int64_t, size_t> position_;  // tag -> index in order_
  size_t next_ = 0;                               // index of the next message the receiver takes
  std::map<size_t, T> held_;                      // by index in order_
};

}  // namespace meshscope::runtime
