// Work arrays of the paired kernel: uninitialised, and backed by huge pages
// where the system offers them.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <type_traits>
#include <utility>

namespace pairmetrics::paired_detail {

// Memory for large work arrays. On Linux they are aligned to 2 MiB and
// advised to use transparent huge pages (where the system allows it): a
// fresh array then costs a page fault per 2 MiB instead of one per 4 KiB,
// which at a million elements is a good part of the run time.
void* allocate_work(std::size_t bytes);
// An uninitialised array of trivially copyable T (no pass to zero it).
template <class T>
class Buffer {
    static_assert(std::is_trivially_copyable_v<T>, "a Buffer holds plain values");

  public:
    Buffer() = default;
    explicit Buffer(std::size_t n) : data_(n ? static_cast<T*>(allocate_work(n * sizeof(T))) : nullptr), size_(n) {}
    Buffer(Buffer&& other) noexcept { swap(other); }
    Buffer& operator=(Buffer&& other) noexcept {
        Buffer(std::move(other)).swap(*this);
        return *this;
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer() { std::free(data_); }
    T* data() { return data_; }
    const T* data() const { return data_; }
    std::size_t size() const { return size_; }
    T& operator[](std::size_t i) { return data_[i]; }
    const T& operator[](std::size_t i) const { return data_[i]; }
    T* begin() { return data_; }
    T* end() { return data_ + size_; }
    void swap(Buffer& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(size_, other.size_);
    }
    void release() { Buffer().swap(*this); }

  private:
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace pairmetrics::paired_detail
