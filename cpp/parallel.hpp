// A minimal fork-join helper: run tasks on worker threads and rethrow the first
// exception on the calling thread (a worker must never terminate the process).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace pairmetrics {

// Calls task(i) for i in [0, n_tasks) using up to n_threads threads. Tasks are
// handed out dynamically; n_threads <= 1 (or a single task) runs inline.
template <class Task>
void parallel_for(std::size_t n_tasks, int n_threads, Task&& task) {
    const std::size_t workers = std::min<std::size_t>(n_tasks, n_threads < 1 ? 1 : n_threads);
    if (workers <= 1) {
        for (std::size_t i = 0; i < n_tasks; ++i) task(i);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex error_mutex;
    auto work = [&] {
        for (std::size_t i; !failed.load(std::memory_order_relaxed) && (i = next++) < n_tasks;) {
            try {
                task(i);
            } catch (...) {
                std::lock_guard<std::mutex> lock(error_mutex);
                if (!error) error = std::current_exception();
                failed = true;
            }
        }
    };
    std::vector<std::thread> threads;
    threads.reserve(workers - 1);
    for (std::size_t t = 1; t < workers; ++t) threads.emplace_back(work);
    work();
    for (auto& thread : threads) thread.join();
    if (error) std::rethrow_exception(error);
}

}  // namespace pairmetrics
