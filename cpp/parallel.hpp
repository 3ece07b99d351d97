// The one fork-join helper of the kernels: run tasks on worker threads and
// rethrow the first exception on the calling thread (a worker must never
// terminate the process).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "control.hpp"

namespace pairmetrics {

// Calls task(i) for i in [0, n_tasks) on up to n_threads threads (the caller
// is one of them). Tasks are handed out dynamically; n_threads <= 1 or a
// single task runs inline. When the system refuses a thread, the threads
// already running do the work. The caller keeps checking the control
// (Ctrl-C, progress) while it waits for the other threads to finish.
template <class Task>
void parallel_for(std::size_t n_tasks, int n_threads, Task&& task, Control& control) {
    const std::size_t workers = std::min<std::size_t>(n_tasks, n_threads < 1 ? 1 : n_threads);
    if (workers <= 1) {
        for (std::size_t i = 0; i < n_tasks; ++i) task(i);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex mutex;
    std::condition_variable finished;
    std::size_t running = 0;

    auto record = [&](std::exception_ptr e) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = e;
        failed = true;
    };
    auto work = [&] {
        for (std::size_t i; !failed.load(std::memory_order_relaxed) && (i = next++) < n_tasks;) {
            try {
                task(i);
            } catch (...) {
                record(std::current_exception());
            }
        }
    };
    std::vector<std::thread> threads;
    threads.reserve(workers - 1);
    for (std::size_t t = 1; t < workers; ++t) {
        try {
            {
                std::lock_guard<std::mutex> lock(mutex);
                ++running;
            }
            threads.emplace_back([&] {
                work();
                std::lock_guard<std::mutex> lock(mutex);
                --running;
                finished.notify_all();
            });
        } catch (const std::system_error&) {  // out of threads: make do with fewer
            std::lock_guard<std::mutex> lock(mutex);
            --running;
            break;
        }
    }
    work();
    {  // the caller checks the control while the others finish
        std::unique_lock<std::mutex> lock(mutex);
        while (running > 0) {
            if (finished.wait_for(lock, Control::kReportInterval, [&] { return running == 0; })) break;
            lock.unlock();
            try {
                control.check();
            } catch (...) {
                record(std::current_exception());
                control.cancel();
            }
            lock.lock();
        }
    }
    for (auto& thread : threads) thread.join();
    if (error) std::rethrow_exception(error);
}

}  // namespace pairmetrics
