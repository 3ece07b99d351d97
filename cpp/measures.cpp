#include "measures.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "element_types.hpp"

namespace pairmetrics::measures {
namespace {

// Independent accumulators per run: they break the dependency chain of a
// single running sum so that several elements are in flight at once.
constexpr std::size_t kLanes = 4;  // the lane arrays below are spelled out for 4
static_assert(kLanes == 4, "update the lane initialisers in run_1d and reduce_strided");
constexpr std::size_t kTickEvery = std::size_t{1} << 20;  // elements between progress ticks (a Ticker's batch)

// An accumulator has add(x, y) for one element, flush() that must be called at
// least every kFlush adds, and add_to(Result&) once flushed.

// Two-level summation: short partial sums folded into the totals every kFlush
// elements keep the rounding error near that of pairwise summation.
struct ErrorAccumulator {
    using Result = ErrorStats;
    static constexpr std::size_t kFlush = 256;

    double abs_part = 0.0, sq_part = 0.0, abs_sum = 0.0, sq_sum = 0.0, max_abs = 0.0;
    std::uint64_t wrong = 0;

    template <class A, class B>
    void add(A x, B y) {
        const double d = static_cast<double>(x) - static_cast<double>(y);
        const double ad = std::fabs(d);
        abs_part += ad;
        sq_part += d * d;
        max_abs = ad > max_abs ? ad : max_abs;
        wrong += (d != 0.0);
    }
    void flush() {
        abs_sum += abs_part;
        sq_sum += sq_part;
        abs_part = sq_part = 0.0;
    }
    void add_to(Result& r) const {
        r.abs_sum += abs_sum;
        r.sq_sum += sq_sum;
        r.max_abs = std::max(r.max_abs, max_abs);
        r.n_wrong += wrong;
    }
};

void combine(ErrorStats& into, const ErrorStats& other) {
    into.abs_sum += other.abs_sum;
    into.sq_sum += other.sq_sum;
    into.max_abs = std::max(into.max_abs, other.max_abs);
    into.n_wrong += other.n_wrong;
}

// Bitwise select: compilers turn a ternary on doubles into a branch.
inline double select(bool condition, double if_true, double if_false) {
    std::uint64_t t, f;
    std::memcpy(&t, &if_true, sizeof t);
    std::memcpy(&f, &if_false, sizeof f);
    const std::uint64_t mask = std::uint64_t{0} - static_cast<std::uint64_t>(condition);
    const std::uint64_t r = (t & mask) | (f & ~mask);
    double out;
    std::memcpy(&out, &r, sizeof out);
    return out;
}

// The product of the q's kept as mantissa * 2^exponent: one multiplication per
// element instead of one log, and no underflow however long the product. The
// mantissa is renormalised to [1, 2) every kFlush factors; since every factor
// handled this way is >= 2^-64, it stays a normal number in between. Smaller
// (but positive) factors are rare and go through log directly.
struct LogAccumulator {
    using Result = LogLikelihoodStats;
    static constexpr std::size_t kFlush = 8;
    static constexpr double kSmall = 0x1p-64;

    double eps = 0.0;
    double mantissa = 1.0;
    std::int64_t exponent = 0;
    double small_logs = 0.0;
    std::uint64_t zeros = 0;
    bool bad_true = false, bad_pred = false;

    explicit LogAccumulator(double eps_) : eps(eps_) {}

    template <class Y, class P>
    void add(Y y, P p) {
        const double pd = static_cast<double>(p);
        bad_pred |= !(pd >= 0.0 && pd <= 1.0);
        // Branch free: the outcomes are random, a branch on them mispredicts.
        const bool one = y == Y(1);
        bad_true |= !(one || y == Y(0));
        double q = select(one, pd, 1.0 - pd);
        if (eps > 0.0) q = std::min(std::max(q, eps), 1.0 - eps);
        if (q >= kSmall) {
            mantissa *= q;
        } else if (q > 0.0) {
            small_logs += std::log(q);
        } else {
            ++zeros;
        }
    }
    void flush() {
        std::uint64_t bits;
        std::memcpy(&bits, &mantissa, sizeof bits);
        const auto biased = static_cast<std::int64_t>((bits >> 52) & 0x7ff);
        exponent += biased - 1023;
        bits = (bits & ~(std::uint64_t{0x7ff} << 52)) | (std::uint64_t{1023} << 52);
        std::memcpy(&mantissa, &bits, sizeof bits);
    }
    void add_to(Result& r) const {
        r.log_sum += std::log(mantissa) + static_cast<double>(exponent) * 0.69314718055994530942 + small_logs;
        r.n_zero += zeros;
        r.bad_true |= bad_true;
        r.bad_pred |= bad_pred;
    }
};

void combine(LogLikelihoodStats& into, const LogLikelihoodStats& other) {
    into.log_sum += other.log_sum;
    into.n_zero += other.n_zero;
    into.bad_true |= other.bad_true;
    into.bad_pred |= other.bad_pred;
}

// One run of n elements with strides sa, sb (Contiguous: both 1), into the lanes.
template <bool Contiguous, class Acc, class A, class B>
void run_1d(const A* a, std::ptrdiff_t sa, const B* b, std::ptrdiff_t sb, std::size_t n, Acc* lanes, Ticker& progress) {
    auto at_a = [&](std::size_t i) { return Contiguous ? a[i] : a[static_cast<std::ptrdiff_t>(i) * sa]; };
    auto at_b = [&](std::size_t i) { return Contiguous ? b[i] : b[static_cast<std::ptrdiff_t>(i) * sb]; };
    constexpr std::size_t group = kLanes * Acc::kFlush;
    constexpr std::size_t groups_per_tick = std::max<std::size_t>(1, kTickEvery / group);
    // Work on local copies so that the compiler can keep the lanes in registers.
    Acc local[kLanes] = {lanes[0], lanes[1], lanes[2], lanes[3]};
    std::size_t i = 0;
    while (n - i >= group) {
        const std::size_t stop = i + std::min((n - i) / group, groups_per_tick) * group;
        const std::size_t start = i;
        for (; i < stop; i += group) {
            for (std::size_t k = 0; k < Acc::kFlush; ++k) {
                for (std::size_t l = 0; l < kLanes; ++l)
                    local[l].add(at_a(i + k * kLanes + l), at_b(i + k * kLanes + l));
            }
            for (std::size_t l = 0; l < kLanes; ++l) local[l].flush();
        }
        progress(stop - start);
    }
    // Fewer than `group` left: round robin gives each lane fewer than kFlush.
    const std::size_t start = i;
    for (std::size_t k = 0; i < n; ++i, ++k) local[k % kLanes].add(at_a(i), at_b(i));
    for (std::size_t l = 0; l < kLanes; ++l) {
        local[l].flush();
        lanes[l] = local[l];
    }
    progress(n - start);
}

template <class Acc, class A, class B>
typename Acc::Result reduce_strided(const A* a, std::ptrdiff_t sa, const B* b, std::ptrdiff_t sb, std::size_t n,
                                    const Acc& proto, Ticker& progress) {
    Acc lanes[kLanes] = {proto, proto, proto, proto};
    if (sa == 1 && sb == 1) {
        run_1d<true>(a, sa, b, sb, n, lanes, progress);
    } else {
        run_1d<false>(a, sa, b, sb, n, lanes, progress);
    }
    typename Acc::Result result{};
    for (const Acc& lane : lanes) lane.add_to(result);
    return result;
}

// Per-column results for rows stored contiguously (C order): walk the rows
// once, with one accumulator per column, so every byte is read exactly once.
template <class Acc, class A, class B>
void reduce_rows(View<A> a, View<B> b, std::size_t n, std::size_t t, const Acc& proto, typename Acc::Result* out,
                 Ticker& progress) {
    std::vector<Acc> acc(t, proto);
    std::size_t since_flush = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const A* ra = a.data + static_cast<std::ptrdiff_t>(i) * a.row;
        const B* rb = b.data + static_cast<std::ptrdiff_t>(i) * b.row;
        for (std::size_t j = 0; j < t; ++j) acc[j].add(ra[j], rb[j]);
        if (++since_flush == Acc::kFlush) {
            for (Acc& x : acc) x.flush();
            since_flush = 0;
        }
        progress(t);
    }
    for (Acc& x : acc) x.flush();
    for (std::size_t j = 0; j < t; ++j) acc[j].add_to(out[j]);
}

template <class A, class B>
bool same_contiguous_layout(View<A> a, View<B> b, std::size_t n, std::size_t t) {
    const auto tn = static_cast<std::ptrdiff_t>(t), nn = static_cast<std::ptrdiff_t>(n);
    if (t == 1) return a.row == 1 && b.row == 1;
    if (n == 1) return a.col == 1 && b.col == 1;
    const bool c_order = a.col == 1 && b.col == 1 && a.row == tn && b.row == tn;
    const bool f_order = a.row == 1 && b.row == 1 && a.col == nn && b.col == nn;
    return c_order || f_order;
}

template <class Acc, class A, class B>
void reduce(View<A> a, View<B> b, std::size_t n, std::size_t t, bool per_column, const Acc& proto,
            typename Acc::Result* out, Control& control) {
    using Result = typename Acc::Result;
    control.set_total(static_cast<std::uint64_t>(n) * t);
    Ticker progress(control, kTickEvery);
    if (n == 0 || t == 0) {
        for (std::size_t j = 0; j < (per_column ? t : 1); ++j) out[j] = Result{};
        return;
    }
    if ((!per_column || t == 1) && same_contiguous_layout(a, b, n, t)) {
        out[0] = reduce_strided(a.data, 1, b.data, 1, n * t, proto, progress);
        return;
    }
    std::vector<Result> columns(t);
    if (t > 1 && a.col == 1 && b.col == 1) {
        reduce_rows(a, b, n, t, proto, columns.data(), progress);
    } else {
        for (std::size_t j = 0; j < t; ++j) {
            const auto offset = static_cast<std::ptrdiff_t>(j);
            columns[j] =
                reduce_strided(a.data + offset * a.col, a.row, b.data + offset * b.col, b.row, n, proto, progress);
        }
    }
    if (per_column) {
        std::copy(columns.begin(), columns.end(), out);
    } else {
        out[0] = Result{};
        for (const Result& c : columns) combine(out[0], c);
    }
}

}  // namespace

template <class A, class B>
void error_stats(View<A> a, View<B> b, std::size_t n, std::size_t t, bool per_column, ErrorStats* out,
                 Control& control) {
    reduce(a, b, n, t, per_column, ErrorAccumulator{}, out, control);
}

template <class Y, class P>
void log_likelihood(View<Y> y, View<P> p, std::size_t n, std::size_t t, bool per_column, double eps,
                    LogLikelihoodStats* out, Control& control) {
    reduce(y, p, n, t, per_column, LogAccumulator{eps}, out, control);
}

template <class I>
void multilabel_sparse_counts(const I* t_indptr, const I* t_indices, std::size_t t_nnz, const I* p_indptr,
                              const I* p_indices, std::size_t p_nnz, std::size_t n_samples, std::size_t n_labels,
                              LabelCounts per_label, LabelCounts per_sample, Control& control) {
    auto row_ok = [](const I* indptr, std::size_t i, std::size_t nnz) {
        return indptr[i] >= 0 && indptr[i] <= indptr[i + 1] && static_cast<std::size_t>(indptr[i + 1]) <= nnz;
    };
    // stamp[j] == i + 1 marks label j as seen in row i: no clearing between rows.
    std::vector<std::size_t> stamp_true(n_labels, 0), stamp_pred(n_labels, 0);
    // The label of one CSR entry of row mark - 1, checked: in range, and not yet seen in the row.
    auto label_of = [n_labels](I j, std::vector<std::size_t>& stamp, std::size_t mark, const char* matrix) {
        if (j < 0 || static_cast<std::size_t>(j) >= n_labels)
            throw std::invalid_argument("internal error: CSR index out of range");
        if (stamp[j] == mark)
            throw std::invalid_argument(std::string("internal error: duplicate CSR entry in ") + matrix);
        stamp[j] = mark;
        return static_cast<std::size_t>(j);
    };
    control.set_total(t_nnz + p_nnz + n_samples);
    Ticker progress(control, kTickEvery);
    for (std::size_t i = 0; i < n_samples; ++i) {
        if (!row_ok(t_indptr, i, t_nnz) || !row_ok(p_indptr, i, p_nnz))
            throw std::invalid_argument("internal error: malformed CSR indptr");
        const std::size_t mark = i + 1;
        for (I k = t_indptr[i]; k < t_indptr[i + 1]; ++k)
            ++per_label.true_ones[label_of(t_indices[k], stamp_true, mark, "y_true")];
        std::int64_t both = 0;
        for (I k = p_indptr[i]; k < p_indptr[i + 1]; ++k) {
            const std::size_t j = label_of(p_indices[k], stamp_pred, mark, "y_pred");
            ++per_label.pred_ones[j];
            const bool hit = stamp_true[j] == mark;
            per_label.both[j] += hit;
            both += hit;
        }
        const auto n_true = static_cast<std::int64_t>(t_indptr[i + 1] - t_indptr[i]);
        const auto n_pred = static_cast<std::int64_t>(p_indptr[i + 1] - p_indptr[i]);
        per_sample.both[i] = both;
        per_sample.true_ones[i] = n_true;
        per_sample.pred_ones[i] = n_pred;
        progress(static_cast<std::uint64_t>(n_true + n_pred) + 1);
    }
}

void multilabel_dense_counts(View<std::uint8_t> t, View<std::uint8_t> p, std::size_t n_samples, std::size_t n_labels,
                             LabelCounts per_label, LabelCounts per_sample, Control& control) {
    // Column counts go to byte counters for up to 255 rows at a time, then to
    // the 64-bit totals: the inner loop is then plain byte adds, which
    // compilers vectorise for contiguous rows.
    constexpr std::size_t kRowsPerFlush = 255;
    std::vector<std::uint8_t> col_true(n_labels), col_pred(n_labels), col_both(n_labels);
    const bool contiguous = t.col == 1 && p.col == 1;
    control.set_total(static_cast<std::uint64_t>(n_samples) * n_labels);
    Ticker progress(control, kTickEvery);
    for (std::size_t start = 0; start < n_samples; start += kRowsPerFlush) {
        const std::size_t stop = std::min(n_samples, start + kRowsPerFlush);
        std::fill(col_true.begin(), col_true.end(), 0);
        std::fill(col_pred.begin(), col_pred.end(), 0);
        std::fill(col_both.begin(), col_both.end(), 0);
        for (std::size_t i = start; i < stop; ++i) {
            const std::uint8_t* rt = t.data + static_cast<std::ptrdiff_t>(i) * t.row;
            const std::uint8_t* rp = p.data + static_cast<std::ptrdiff_t>(i) * p.row;
            std::uint64_t n_true = 0, n_pred = 0, n_both = 0;
            if (contiguous) {
                std::uint8_t* ct = col_true.data();
                std::uint8_t* cp = col_pred.data();
                std::uint8_t* cb = col_both.data();
                for (std::size_t j = 0; j < n_labels; ++j) {
                    const std::uint8_t x = rt[j], y = rp[j], b = x & y;
                    ct[j] += x;
                    cp[j] += y;
                    cb[j] += b;
                    n_true += x;
                    n_pred += y;
                    n_both += b;
                }
            } else {
                for (std::size_t j = 0; j < n_labels; ++j) {
                    const auto offset = static_cast<std::ptrdiff_t>(j);
                    const std::uint8_t x = rt[offset * t.col], y = rp[offset * p.col], b = x & y;
                    col_true[j] += x;
                    col_pred[j] += y;
                    col_both[j] += b;
                    n_true += x;
                    n_pred += y;
                    n_both += b;
                }
            }
            per_sample.true_ones[i] = static_cast<std::int64_t>(n_true);
            per_sample.pred_ones[i] = static_cast<std::int64_t>(n_pred);
            per_sample.both[i] = static_cast<std::int64_t>(n_both);
            progress(n_labels);
        }
        for (std::size_t j = 0; j < n_labels; ++j) {
            per_label.true_ones[j] += col_true[j];
            per_label.pred_ones[j] += col_pred[j];
            per_label.both[j] += col_both[j];
        }
    }
}

template void multilabel_sparse_counts<std::int32_t>(const std::int32_t*, const std::int32_t*, std::size_t,
                                                     const std::int32_t*, const std::int32_t*, std::size_t, std::size_t,
                                                     std::size_t, LabelCounts, LabelCounts, Control&);
template void multilabel_sparse_counts<std::int64_t>(const std::int64_t*, const std::int64_t*, std::size_t,
                                                     const std::int64_t*, const std::int64_t*, std::size_t, std::size_t,
                                                     std::size_t, LabelCounts, LabelCounts, Control&);

#define PAIRMETRICS_ERROR_STATS(A, B) \
    template void error_stats<A, B>(View<A>, View<B>, std::size_t, std::size_t, bool, ErrorStats*, Control&);
#define PAIRMETRICS_ERROR_STATS_A(A) PAIRMETRICS_ERROR_STATS(A, float) PAIRMETRICS_ERROR_STATS(A, double)
PAIRMETRICS_FOR_EACH_ELEMENT(PAIRMETRICS_ERROR_STATS_A)
#undef PAIRMETRICS_ERROR_STATS_A
#undef PAIRMETRICS_ERROR_STATS

#define PAIRMETRICS_LOG_LIKELIHOOD(Y, P)                                                                              \
    template void log_likelihood<Y, P>(View<Y>, View<P>, std::size_t, std::size_t, bool, double, LogLikelihoodStats*, \
                                       Control&);
#define PAIRMETRICS_LOG_LIKELIHOOD_Y(Y) PAIRMETRICS_LOG_LIKELIHOOD(Y, float) PAIRMETRICS_LOG_LIKELIHOOD(Y, double)
PAIRMETRICS_FOR_EACH_ELEMENT(PAIRMETRICS_LOG_LIKELIHOOD_Y)
#undef PAIRMETRICS_LOG_LIKELIHOOD_Y
#undef PAIRMETRICS_LOG_LIKELIHOOD

}  // namespace pairmetrics::measures
