// The harness of the C++ test executables: CHECK, CHECK_EQ and CHECK_CLOSE count
// checks and report failures with their line, run_tests runs a table of named tests (an
// argument filters them by name) and gives the exit status.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>

namespace pairmetrics::testing {

// Under AddressSanitizer the heaviest tests (quadratic reference checks) run
// several times slower: they cover every code path with fewer repeats.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

inline int g_failures = 0;
inline int g_checks = 0;

struct Test {
    const char* name;
    void (*run)();
};

template <std::size_t N>
int run_tests(const Test (&tests)[N], int argc, char** argv) {
    int width = 0;
    for (const Test& t : tests) width = std::max(width, static_cast<int>(std::strlen(t.name)));
    int run = 0;
    for (const Test& t : tests) {
        if (argc > 1 && std::strstr(t.name, argv[1]) == nullptr) continue;
        const int before = g_failures;
        try {
            t.run();
        } catch (const std::exception& e) {
            ++g_failures;
            std::fprintf(stderr, "%s: unexpected exception: %s\n", t.name, e.what());
        }
        std::printf("%-*s %s\n", width, t.name, g_failures == before ? "ok" : "FAILED");
        ++run;
    }
    std::printf("%d tests, %d checks, %d failures\n", run, g_checks, g_failures);
    return (g_failures == 0 && run > 0) ? 0 : 1;
}

}  // namespace pairmetrics::testing

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        ++::pairmetrics::testing::g_checks;                                               \
        if (!(cond)) {                                                                    \
            ++::pairmetrics::testing::g_failures;                                         \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                                 \
    } while (0)

#define CHECK_EQ(a, b)                                                                                              \
    do {                                                                                                            \
        ++::pairmetrics::testing::g_checks;                                                                         \
        const auto va_ = (a);                                                                                       \
        const auto vb_ = (b);                                                                                       \
        if (!(va_ == vb_)) {                                                                                        \
            ++::pairmetrics::testing::g_failures;                                                                   \
            std::fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%.17g vs %.17g)\n", __FILE__, __LINE__, #a, #b, \
                         static_cast<double>(va_), static_cast<double>(vb_));                                       \
        }                                                                                                           \
    } while (0)

#define CHECK_CLOSE(a, b, rel)                                                                                        \
    do {                                                                                                              \
        ++::pairmetrics::testing::g_checks;                                                                           \
        const double va_ = (a), vb_ = (b);                                                                            \
        if (!(std::fabs(va_ - vb_) <= (rel) * std::max({1.0, std::fabs(va_), std::fabs(vb_)}))) {                     \
            ++::pairmetrics::testing::g_failures;                                                                     \
            std::fprintf(stderr, "%s:%d: CHECK_CLOSE failed: %s ~ %s (%.17g vs %.17g)\n", __FILE__, __LINE__, #a, #b, \
                         va_, vb_);                                                                                   \
        }                                                                                                             \
    } while (0)
