// Progress reporting and cancellation for long kernels, without any Python.
//
// Every kernel takes a `Control&` and calls `advance(amount)` (or
// `report(done, total)`) between blocks of work, from any thread. That is
// cheap: an atomic add, a flag check and, on the owning thread only, a clock
// read. At most every kReportInterval the owning thread (the one that created
// the Control, i.e. the caller) runs the callback, which may report progress
// or throw to stop the computation (Ctrl-C, an exception in a user's progress
// callback). The first such exception is stored; every thread then throws
// Cancelled at its next check, and `rethrow_if_failed()` hands the stored
// exception back to the caller unchanged.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <stdexcept>
#include <thread>
#include <utility>

namespace pairmetrics {

struct Cancelled : std::runtime_error {
    Cancelled() : std::runtime_error("computation cancelled") {}
};

class Control {
  public:
    using Callback = std::function<void(std::uint64_t done, std::uint64_t total)>;
    static constexpr std::chrono::milliseconds kReportInterval{50};

    Control() = default;
    explicit Control(Callback callback) : callback_(std::move(callback)) {}
    // A control for one part of a larger computation (one group of a grouped
    // call), on any thread: its checks are also the parent's (cancellation,
    // and the parent's callback on the parent's owning thread), while the
    // totals a kernel sets on it stay its own.
    explicit Control(Control& parent) : parent_(&parent) {}
    Control(const Control&) = delete;
    Control& operator=(const Control&) = delete;

    void set_total(std::uint64_t total) { total_.store(total, std::memory_order_relaxed); }
    void add_total(std::uint64_t amount) { total_.fetch_add(amount, std::memory_order_relaxed); }

    // Work done since the last call; thread safe.
    void advance(std::uint64_t amount = 1) {
        done_.fetch_add(amount, std::memory_order_relaxed);
        check();
    }

    // Absolute progress, for kernels that know it directly; thread safe.
    void report(std::uint64_t done, std::uint64_t total) {
        done_.store(done, std::memory_order_relaxed);
        total_.store(total, std::memory_order_relaxed);
        check();
    }

    // Throws Cancelled once the computation was stopped; on the owning thread
    // it also runs the callback when kReportInterval has passed.
    void check() {
        if (parent_) parent_->check();
        if (cancelled_.load(std::memory_order_relaxed)) throw Cancelled();
        if (!callback_ || std::this_thread::get_id() != owner_) return;
        const auto now = std::chrono::steady_clock::now();
        if (now < next_report_) return;
        next_report_ = now + kReportInterval;
        call_back();
    }

    // Like check(), but runs the callback now (owning thread only).
    void check_now() {
        next_report_ = {};
        check();
    }

    // Reports completion (done = total) to the callback; the caller's last step.
    void finish() {
        done_.store(total_.load(std::memory_order_relaxed), std::memory_order_relaxed);
        check_now();
    }

    bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

    // Stops the computation from inside a kernel (the next check() throws).
    void cancel() { cancelled_.store(true, std::memory_order_relaxed); }

    // Rethrows what stopped the computation, if anything did.
    void rethrow_if_failed() const {
        if (error_) std::rethrow_exception(error_);
    }

    bool is_owner_thread() const { return std::this_thread::get_id() == owner_; }

  private:
    void call_back() {
        try {
            callback_(done_.load(std::memory_order_relaxed), total_.load(std::memory_order_relaxed));
        } catch (...) {
            error_ = std::current_exception();
            cancelled_.store(true, std::memory_order_relaxed);
            throw Cancelled();
        }
    }

    Callback callback_;
    Control* parent_ = nullptr;
    std::thread::id owner_ = std::this_thread::get_id();
    std::chrono::steady_clock::time_point next_report_{};
    std::atomic<std::uint64_t> done_{0};
    std::atomic<std::uint64_t> total_{0};
    std::atomic<bool> cancelled_{false};
    std::exception_ptr error_;  // written once, on the owning thread
};

// Hands one thread's work to a Control in batches of at least `batch` units,
// so that inner loops pay an add and a compare rather than an atomic add and
// a clock read. Work that is part of the control's total advances it; other
// work (counted = false: a step the total leaves out) only gets a chance to
// stop.
class Ticker {
  public:
    static constexpr std::uint64_t kDefaultBatch = std::uint64_t{1} << 15;  // tens of microseconds

    explicit Ticker(Control& control, std::uint64_t batch = kDefaultBatch, bool counted = true)
        : control_(control), batch_(batch), counted_(counted) {}
    void operator()(std::uint64_t work) {
        pending_ += work;
        if (pending_ < batch_) return;
        if (counted_) {
            control_.advance(std::exchange(pending_, 0));
        } else {
            pending_ = 0;
            control_.check();
        }
    }

  private:
    Control& control_;
    std::uint64_t pending_ = 0;
    const std::uint64_t batch_;
    const bool counted_;
};

}  // namespace pairmetrics
