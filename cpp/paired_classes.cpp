#include "paired_classes.hpp"

#include <utility>

namespace pairmetrics::paired_detail {
namespace {

// Each class segment is cut into up to kMaxRuns runs sorted on their own (on
// different threads); the counts of two classes are the sums over their
// pairs of runs.
constexpr std::size_t kMaxRuns = 4;

// Walks sorted keys b[j, end) against sorted keys a[p, na), where p starts as
// the number of a keys below b[j] (Strict: a < b[j], else a <= b[j]), and sums
// that number over the b keys. Branch-free steps; `equal` records whether a
// key of a equals a key of b (Strict walk only).
template <bool Strict>
struct BelowCursor {
    const std::uint64_t* a;
    const std::uint64_t* b;
    std::size_t p, na, j, end;
    std::uint64_t count = 0;
    bool equal = false;
    bool active() const { return p < na && j < end; }
    std::size_t safe_steps() const { return std::min(na - p, end - j); }
    void step() {
        const std::uint64_t x = a[p], y = b[j];
        const bool advance = Strict ? x < y : x <= y;
        count += p & (std::size_t{advance} - 1);  // b[j] is consumed: p keys of a lie below it
        if constexpr (Strict) equal |= !advance & (x == y);
        p += advance;
        j += !advance;
    }
    void finish() {  // a is exhausted: every key of a lies below the rest of b
        count += static_cast<std::uint64_t>(na) * (end - j);
        j = end;
    }
};

// One piece of a walk: the keys b[j0, j1) against all of a (both sorted).
struct WalkPiece {
    const std::uint64_t* a;
    std::size_t na;
    const std::uint64_t* b;
    std::size_t j0, j1;
    std::uint64_t count = 0;  // out: sum over b[j0, j1) of the a keys below
    bool equal = false;       // out (Strict walks): some key of a equals one of b[j0, j1)
};

// Appends the pieces of the walk of b[0, nb) against a[0, na): about
// `piece` steps each.
inline void cut_walk(const std::uint64_t* a, std::size_t na, const std::uint64_t* b, std::size_t nb, std::size_t piece,
                     std::vector<WalkPiece>& pieces) {
    if (na == 0 || nb == 0) return;
    const std::size_t parts = std::clamp<std::size_t>((na + nb) / piece, 1, nb);
    for (std::size_t t = 0; t < parts; ++t) pieces.push_back({a, na, b, nb * t / parts, nb * (t + 1) / parts});
}

// Walks every piece, kLanes pieces stepped together per task, the tasks
// spread over the threads.
template <bool Strict>
void walk(std::vector<WalkPiece>& pieces, int n_threads, Control& control) {
    const std::size_t tasks = (pieces.size() + kLanes - 1) / kLanes;
    parallel_for(
        tasks, n_threads,
        [&](std::size_t task) {
            Ticker tick(control);
            std::array<BelowCursor<Strict>, kLanes> c;
            const std::size_t begin = task * kLanes, used = std::min(kLanes, pieces.size() - begin);
            for (std::size_t t = 0; t < used; ++t) {
                const WalkPiece& w = pieces[begin + t];
                const std::uint64_t y = w.b[w.j0];
                const std::size_t p =
                    (Strict ? std::lower_bound(w.a, w.a + w.na, y) : std::upper_bound(w.a, w.a + w.na, y)) - w.a;
                c[t] = BelowCursor<Strict>{w.a, w.b, p, w.na, w.j0, w.j1};
            }
            step_all(c.data(), used, [](BelowCursor<Strict>& x) { x.step(); }, tick);
            for (std::size_t t = 0; t < used; ++t) {
                c[t].finish();
                pieces[begin + t].count = c[t].count;
                pieces[begin + t].equal = c[t].equal;
            }
        },
        &control);
}

// Counts by classes if the labels take at most min(limit, kMaxClasses)
// distinct values; returns false (having counted nothing) otherwise. Labels
// that compare equal (-0.0 and +0.0) are one class.
//
// Chunks of the input, spread over the threads, find their classes and
// class ids, then scatter their score keys to the class segments. Each class
// segment is cut into up to kMaxRuns runs sorted on their own (on different

struct Run {
    std::size_t begin, size;
    const std::uint64_t* sorted;
};

// The runs of each class, sorted on their own (in keys or scratch).
std::vector<std::vector<Run>> sort_class_runs(Buffer<std::uint64_t>& keys, Buffer<std::uint64_t>& scratch,
                                              const std::array<std::size_t, kMaxClasses + 1>& offset, std::size_t k,
                                              int threads, Control& control) {
    std::vector<std::vector<Run>> runs(k);
    std::vector<Run*> tasks;
    for (std::size_t g = 0; g < k; ++g) {
        const std::size_t size = offset[g + 1] - offset[g];
        const std::size_t parts = std::clamp<std::size_t>(
            std::min<std::size_t>(static_cast<std::size_t>(threads), size / kMinPerThread), 1, kMaxRuns);
        for (std::size_t r = 0; r < parts; ++r) {
            const std::size_t b = offset[g] + size * r / parts, e = offset[g] + size * (r + 1) / parts;
            runs[g].push_back({b, e - b, nullptr});
        }
    }
    for (auto& class_runs : runs)
        for (Run& run : class_runs) tasks.push_back(&run);
    std::sort(tasks.begin(), tasks.end(), [](const Run* x, const Run* y) { return x->size > y->size; });
    parallel_for(
        tasks.size(), threads,
        [&](std::size_t t) {
            Run& run = *tasks[t];
            run.sorted = radix_sort_by_key(keys.data() + run.begin, scratch.data() + run.begin, run.size, control);
        },
        &control);
    return runs;
}

using ClassPair = std::pair<std::size_t, std::size_t>;  // lower class, higher class

// Per pair of classes (those with `selected` set): the sum over the keys b of
// the higher class of the keys of the lower class below b (Strict) or at or
// below it; and whether some keys of the two are equal (Strict only). One
// walk per pair of their runs, cut into pieces of about `piece` steps.
template <bool Strict>
void walk_class_pairs(const std::vector<ClassPair>& pairs, const std::vector<std::vector<Run>>& runs,
                      const std::vector<std::uint8_t>& selected, std::size_t piece, int threads, Control& control,
                      std::vector<std::uint64_t>& sum, std::vector<std::uint8_t>& equal) {
    std::vector<WalkPiece> pieces;
    std::vector<std::size_t> pair_of;
    for (std::size_t f = 0; f < pairs.size(); ++f) {
        if (!selected[f]) continue;
        for (const Run& a : runs[pairs[f].first])
            for (const Run& b : runs[pairs[f].second]) {
                cut_walk(a.sorted, a.size, b.sorted, b.size, piece, pieces);
                pair_of.resize(pieces.size(), f);
            }
    }
    walk<Strict>(pieces, threads, control);
    sum.assign(pairs.size(), 0);
    equal.assign(pairs.size(), 0);
    for (std::size_t t = 0; t < pieces.size(); ++t) {
        sum[pair_of[t]] += pieces[t].count;
        equal[pair_of[t]] |= pieces[t].equal;
    }
}

}  // namespace

template <class L>
bool group_classes(std::vector<ChunkClasses<L>>& local, std::size_t limit, ClassGroups<L>& groups) {
    std::vector<L>& value = groups.value;
    for (const ChunkClasses<L>& loc : local)
        for (std::size_t t = 0; t < loc.k; ++t)
            if (std::find(value.begin(), value.end(), loc.value[t]) == value.end()) value.push_back(loc.value[t]);
    if (value.size() > limit) return false;
    std::sort(value.begin(), value.end());
    std::array<std::size_t, kMaxClasses + 1>& offset = groups.offset;
    for (ChunkClasses<L>& loc : local) {
        for (std::size_t t = 0; t < loc.k; ++t) {
            const std::size_t g = std::find(value.begin(), value.end(), loc.value[t]) - value.begin();
            loc.global[t] = static_cast<std::uint8_t>(g);
            offset[g + 1] += loc.size[t];
        }
    }
    for (std::size_t g = 0; g < value.size(); ++g) offset[g + 1] += offset[g];
    std::array<std::size_t, kMaxClasses> at{};
    std::copy_n(offset.begin(), kMaxClasses, at.begin());
    groups.next.resize(local.size());
    for (std::size_t c = 0; c < local.size(); ++c) {
        groups.next[c] = at;
        for (std::size_t t = 0; t < local[c].k; ++t) at[local[c].global[t]] += local[c].size[t];
    }
    return true;
}

// Every pair of classes far apart, the lower label first, is walked once
// counting the keys below; pairs with equal keys are walked again, counting
// the keys at or below.
template <class Gap>
PairedCounts count_class_pairs(Buffer<std::uint64_t>& keys, Buffer<std::uint64_t>& scratch,
                               const ClassGroups<typename Gap::Label>& groups, const Gap& gap, int threads,
                               Control& control) {
    const auto& value = groups.value;
    const auto& offset = groups.offset;
    const std::size_t k = value.size();
    const std::vector<std::vector<Run>> runs = sort_class_runs(keys, scratch, offset, k, threads, control);
    std::size_t work = 0;
    std::vector<ClassPair> far_pairs;
    PairedCounts counts;
    for (std::size_t lo = 0; lo < k; ++lo) {
        for (std::size_t hi = lo + 1; hi < k; ++hi) {
            if (!gap.far(value[hi], value[lo])) continue;
            far_pairs.emplace_back(lo, hi);
            work += runs[hi].size() * (offset[lo + 1] - offset[lo]) + runs[lo].size() * (offset[hi + 1] - offset[hi]);
            const std::uint64_t pairs =
                static_cast<std::uint64_t>(offset[lo + 1] - offset[lo]) * (offset[hi + 1] - offset[hi]);
            counts.rankable += pairs;
            counts.incorrect += pairs;  // less the pairs at or below, below
        }
    }
    const std::size_t piece = std::max<std::size_t>(
        std::size_t{1} << 12, work / (kChunksPerThread * kLanes * static_cast<std::size_t>(threads)));
    std::vector<std::uint64_t> below, at_most;
    std::vector<std::uint8_t> equal, unused;
    walk_class_pairs<true>(far_pairs, runs, std::vector<std::uint8_t>(far_pairs.size(), 1), piece, threads, control,
                           below, equal);
    walk_class_pairs<false>(far_pairs, runs, equal, piece, threads, control, at_most, unused);
    for (std::size_t f = 0; f < far_pairs.size(); ++f) {
        const std::uint64_t not_above = equal[f] ? at_most[f] : below[f];  // below + tied
        counts.correct += below[f];
        counts.tied += not_above - below[f];
        counts.incorrect -= not_above;
    }
    return counts;
}

template bool group_classes(std::vector<ChunkClasses<double>>&, std::size_t, ClassGroups<double>&);
template bool group_classes(std::vector<ChunkClasses<std::uint64_t>>&, std::size_t, ClassGroups<std::uint64_t>&);
template PairedCounts count_class_pairs(Buffer<std::uint64_t>&, Buffer<std::uint64_t>&, const ClassGroups<double>&,
                                        const RealGap&, int, Control&);
template PairedCounts count_class_pairs(Buffer<std::uint64_t>&, Buffer<std::uint64_t>&,
                                        const ClassGroups<std::uint64_t>&, const IntegerGap&, int, Control&);

}  // namespace pairmetrics::paired_detail
