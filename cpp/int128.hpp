// A signed 128-bit integer for the exact kernels: the compiler's
// __int128 where it has one (GCC, Clang), else Int128Words, two 64-bit words
// with the operations the solver needs (MSVC has no 128-bit integer type).
// Defining PAIRMETRICS_PORTABLE_INT128 selects Int128Words everywhere, so
// that the tests run the solver on it with any compiler.
#pragma once

#include <cstdint>
#include <type_traits>

namespace pairmetrics {

// Two's complement in two words, value = hi * 2^64 + lo; arithmetic wraps
// modulo 2^128 like the native type's (the solver keeps far inside the range).
class Int128Words {
  public:
    constexpr Int128Words() = default;
    // Implicit from any integer type, like a built-in integer.
    template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
    constexpr Int128Words(T v) : lo_(static_cast<std::uint64_t>(v)) {
        if constexpr (std::is_signed_v<T>) hi_ = v < 0 ? ~std::uint64_t{0} : 0;
    }
    // Integer conversions keep the low bits (bool: nonzero), as the native type's do.
    template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
    explicit constexpr operator T() const {
        if constexpr (std::is_same_v<T, bool>)
            return (lo_ | hi_) != 0;
        else
            return static_cast<T>(lo_);
    }

    friend constexpr Int128Words operator+(Int128Words a, Int128Words b) {
        const std::uint64_t lo = a.lo_ + b.lo_;
        return words(a.hi_ + b.hi_ + (lo < a.lo_ ? 1 : 0), lo);
    }
    friend constexpr Int128Words operator-(Int128Words a) { return words(~a.hi_ + (a.lo_ == 0 ? 1 : 0), ~a.lo_ + 1); }
    friend constexpr Int128Words operator-(Int128Words a, Int128Words b) { return a + -b; }
    friend constexpr Int128Words operator*(Int128Words a, Int128Words b) {
        Int128Words low = wide_product(a.lo_, b.lo_);
        low.hi_ += a.lo_ * b.hi_ + a.hi_ * b.lo_;  // the rest lies beyond 2^128
        return low;
    }
    // Truncates toward zero, as built-in division does.
    friend constexpr Int128Words operator/(Int128Words a, Int128Words b) {
        const Int128Words q = unsigned_quotient(a.magnitude(), b.magnitude());
        return a.negative() != b.negative() ? -q : q;
    }
    friend constexpr Int128Words operator%(Int128Words a, Int128Words b) { return a - a / b * b; }
    friend constexpr Int128Words operator<<(Int128Words a, int s) {
        if (s == 0) return a;
        if (s >= 64) return words(a.lo_ << (s - 64), 0);
        return words((a.hi_ << s) | (a.lo_ >> (64 - s)), a.lo_ << s);
    }
    // Arithmetic shift: rounds toward minus infinity, as GCC and Clang do.
    friend constexpr Int128Words operator>>(Int128Words a, int s) {
        const std::uint64_t fill = a.negative() ? ~std::uint64_t{0} : 0;
        if (s == 0) return a;
        if (s >= 64) return words(fill, s == 64 ? a.hi_ : (a.hi_ >> (s - 64)) | (fill << (128 - s)));
        return words((a.hi_ >> s) | (fill << (64 - s)), (a.lo_ >> s) | (a.hi_ << (64 - s)));
    }
    friend constexpr Int128Words operator&(Int128Words a, Int128Words b) { return words(a.hi_ & b.hi_, a.lo_ & b.lo_); }

    friend constexpr bool operator==(Int128Words a, Int128Words b) { return a.hi_ == b.hi_ && a.lo_ == b.lo_; }
    friend constexpr bool operator!=(Int128Words a, Int128Words b) { return !(a == b); }
    friend constexpr bool operator<(Int128Words a, Int128Words b) {
        if (a.hi_ != b.hi_) return static_cast<std::int64_t>(a.hi_) < static_cast<std::int64_t>(b.hi_);
        return a.lo_ < b.lo_;
    }
    friend constexpr bool operator>(Int128Words a, Int128Words b) { return b < a; }
    friend constexpr bool operator<=(Int128Words a, Int128Words b) { return !(b < a); }
    friend constexpr bool operator>=(Int128Words a, Int128Words b) { return !(a < b); }

    constexpr Int128Words& operator+=(Int128Words b) { return *this = *this + b; }
    constexpr Int128Words& operator-=(Int128Words b) { return *this = *this - b; }
    constexpr Int128Words& operator*=(Int128Words b) { return *this = *this * b; }
    constexpr Int128Words& operator/=(Int128Words b) { return *this = *this / b; }

  private:
    static constexpr Int128Words words(std::uint64_t hi, std::uint64_t lo) {
        Int128Words out;
        out.hi_ = hi;
        out.lo_ = lo;
        return out;
    }
    constexpr bool negative() const { return (hi_ >> 63) != 0; }
    constexpr Int128Words magnitude() const { return negative() ? -*this : *this; }

    // The full product of two words, from four products of half words.
    static constexpr Int128Words wide_product(std::uint64_t a, std::uint64_t b) {
        const std::uint64_t half = 0xffffffffu;
        const std::uint64_t a0 = a & half, a1 = a >> 32, b0 = b & half, b1 = b >> 32;
        const std::uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
        const std::uint64_t middle = (p00 >> 32) + (p01 & half) + (p10 & half);
        return words(p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32), (middle << 32) | (p00 & half));
    }

    // a / b of two values read as unsigned (b != 0): one word when both fit, else bit by bit.
    static constexpr Int128Words unsigned_quotient(Int128Words a, Int128Words b) {
        if (a.hi_ == 0 && b.hi_ == 0) return words(0, a.lo_ / b.lo_);
        Int128Words q, r;
        for (int bit = 127; bit >= 0; --bit) {
            r = r << 1;
            r.lo_ |= (bit >= 64 ? a.hi_ >> (bit - 64) : a.lo_ >> bit) & 1;
            if (!unsigned_less(r, b)) {
                r = r - b;
                if (bit >= 64)
                    q.hi_ |= std::uint64_t{1} << (bit - 64);
                else
                    q.lo_ |= std::uint64_t{1} << bit;
            }
        }
        return q;
    }
    static constexpr bool unsigned_less(Int128Words a, Int128Words b) {
        return a.hi_ != b.hi_ ? a.hi_ < b.hi_ : a.lo_ < b.lo_;
    }

    std::uint64_t lo_ = 0, hi_ = 0;
};

// The signed 128-bit integer of the kernels (matching weights beyond int64,
// exact sums of squared counts): the native type where the compiler has one.
#if defined(__SIZEOF_INT128__) && !defined(PAIRMETRICS_PORTABLE_INT128)
__extension__ typedef __int128 i128;
#else
using i128 = Int128Words;
#endif

}  // namespace pairmetrics
