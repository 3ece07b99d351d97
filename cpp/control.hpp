// Progress reporting and cancellation for long kernels, without any Python.
//
// A kernel calls `control.tick(done, total)` between blocks of work. The
// callback (installed by the bindings) may report progress and returns false
// when the caller wants to stop (Ctrl-C); the kernel then throws Cancelled.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <stdexcept>

namespace pairmetrics {

struct Cancelled : std::runtime_error {
    Cancelled() : std::runtime_error("computation cancelled") {}
};

class Control {
  public:
    using Callback = std::function<bool(std::uint64_t done, std::uint64_t total)>;

    Control() = default;
    explicit Control(Callback callback) : callback_(std::move(callback)) {}

    // Thread safe: worker threads may report; calls are serialised.
    void tick(std::uint64_t done, std::uint64_t total) {
        if (!callback_) return;
        std::lock_guard<std::mutex> lock(mutex_);
        if (cancelled_ || !callback_(done, total)) {
            cancelled_ = true;
            throw Cancelled();
        }
    }

  private:
    Callback callback_;
    std::mutex mutex_;
    bool cancelled_ = false;
};

}  // namespace pairmetrics
