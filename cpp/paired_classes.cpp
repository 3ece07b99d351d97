#include "paired_classes.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <utility>

namespace pairmetrics::paired_detail {
namespace {

// Each class segment is cut into up to kMaxRuns runs sorted on their own (on
// different threads); the counts of two classes are the sums over their
// pairs of runs.
constexpr std::size_t kMaxRuns = 4;

// Walks sorted keys b[j, end) against sorted keys a[p, na), where p starts as
// the number of a keys below b[j] (Strict: a < b[j], else a <= b[j]), and
// hands that number for each b key to the sink (SumBelow, WriteBelow).
// Branch-free steps; `equal` records whether a key of a equals a key of b
// (Strict walk only).
template <bool Strict, class Sink>
struct BelowWalk {
    const std::uint64_t* a;
    const std::uint64_t* b;
    std::size_t p, na, j, end;
    Sink sink;
    bool equal = false;
    bool active() const { return p < na && j < end; }
    std::size_t safe_steps() const { return std::min(na - p, end - j); }
    void step() {
        const std::uint64_t x = a[p], y = b[j];
        const bool advance = Strict ? x < y : x <= y;
        sink.take(j, p, advance);
        if constexpr (Strict) equal |= !advance & (x == y);
        p += advance;
        j += !advance;
    }
    void finish() {  // a is exhausted: every key of a lies below the rest of b
        sink.rest(j, end, na);
        j = end;
    }
};

// The sum of the numbers over the b keys.
struct SumBelow {
    std::uint64_t count = 0;
    void take(std::size_t, std::size_t p, bool advance) {
        count += p & (std::size_t{advance} - 1);  // b[j] is consumed: p keys of a lie below it
    }
    void rest(std::size_t j, std::size_t end, std::size_t na) { count += static_cast<std::uint64_t>(na) * (end - j); }
};

// Each b key's number, to out[j - j0].
struct WriteBelow {
    std::uint64_t* out;
    std::size_t j0;
    void take(std::size_t j, std::size_t p, bool) { out[j - j0] = p; }  // final when b[j] is consumed
    void rest(std::size_t j, std::size_t end, std::size_t na) {
        for (; j < end; ++j) out[j - j0] = na;
    }
};

template <bool Strict>
using BelowCursor = BelowWalk<Strict, SumBelow>;
template <bool Strict>
using RankCursor = BelowWalk<Strict, WriteBelow>;

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
                c[t] = BelowCursor<Strict>{w.a, w.b, p, w.na, w.j0, w.j1, {}};
            }
            step_all(c.data(), used, [](BelowCursor<Strict>& x) { x.step(); }, tick);
            for (std::size_t t = 0; t < used; ++t) {
                c[t].finish();
                pieces[begin + t].count = c[t].sink.count;
                pieces[begin + t].equal = c[t].equal;
            }
        },
        control);
}

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
        control);
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

// A stretch of sorted keys of one class: the samples whose per-sample counts
// one lane of a moments task computes.
struct MomentPiece {
    std::size_t group;  // class
    const std::uint64_t* keys;
    std::size_t size;
};
constexpr std::size_t kMomentPiece = std::size_t{1} << 10;

// Sums over the samples of one class: q_i, q_i**2 and tied_i.
struct ClassSums {
    PairedSum q = 0, qq = 0, tied = 0;
};

// The runs of the classes far from class c, and whether each lies above c.
struct Partner {
    const Run* run;
    bool above;
};

// Per-sample counts of up to kLanes pieces of one class against every run of
// the classes far from it (partners): incorrect_i is the sum over partners
// above of their keys below x_i, and over partners below of their keys above
// x_i; tied_i the sum of their keys equal to x_i. Adds q_i, q_i**2 and tied_i
// of each sample, with r_i = r, to `sums`.
void piece_moments(const MomentPiece* pieces, std::size_t used, const std::vector<Partner>& partners, std::uint64_t r,
                   std::vector<std::uint64_t>& work, ClassSums& sums, Ticker& tick) {
    constexpr std::size_t P = kMomentPiece;
    work.resize(4 * kLanes * P);
    std::fill_n(work.data(), 2 * kLanes * P, 0);  // the sums; the ranks are written before they are read
    std::uint64_t* incorrect = work.data();
    std::uint64_t* tied = incorrect + kLanes * P;
    std::uint64_t* below = tied + kLanes * P;
    std::uint64_t* at_most = below + kLanes * P;
    for (const Partner& partner : partners) {
        const std::uint64_t* a = partner.run->sorted;
        const std::size_t na = partner.run->size;
        std::array<RankCursor<true>, kLanes> strict;
        for (std::size_t t = 0; t < used; ++t) {
            const std::uint64_t* b = pieces[t].keys;
            const std::size_t p = std::lower_bound(a, a + na, b[0]) - a;
            strict[t] = RankCursor<true>{a, b, p, na, 0, pieces[t].size, {below + t * P, 0}};
        }
        step_all(strict.data(), used, [](RankCursor<true>& c) { c.step(); }, tick);
        std::array<RankCursor<false>, kLanes> loose;
        std::size_t n_loose = 0;
        std::array<std::size_t, kLanes> lane_of{};
        for (std::size_t t = 0; t < used; ++t) {
            strict[t].finish();
            if (!strict[t].equal) continue;
            const std::uint64_t* b = pieces[t].keys;
            const std::size_t p = std::upper_bound(a, a + na, b[0]) - a;
            lane_of[n_loose] = t;
            loose[n_loose++] = RankCursor<false>{a, b, p, na, 0, pieces[t].size, {at_most + t * P, 0}};
        }
        step_all(loose.data(), n_loose, [](RankCursor<false>& c) { c.step(); }, tick);
        std::array<bool, kLanes> has_ties{};
        for (std::size_t u = 0; u < n_loose; ++u) {
            loose[u].finish();
            has_ties[lane_of[u]] = true;
        }
        for (std::size_t t = 0; t < used; ++t) {
            const std::uint64_t* lo = below + t * P;
            const std::uint64_t* hi = has_ties[t] ? at_most + t * P : lo;
            std::uint64_t* inc = incorrect + t * P;
            std::uint64_t* tie = tied + t * P;
            const std::size_t size = pieces[t].size;
            if (partner.above) {
                for (std::size_t e = 0; e < size; ++e) inc[e] += lo[e];
            } else {
                for (std::size_t e = 0; e < size; ++e) inc[e] += na - hi[e];
            }
            if (has_ties[t])
                for (std::size_t e = 0; e < size; ++e) tie[e] += hi[e] - lo[e];
        }
    }
    for (std::size_t t = 0; t < used; ++t) {
        const std::uint64_t* inc = incorrect + t * P;
        const std::uint64_t* tie = tied + t * P;
        for (std::size_t e = 0; e < pieces[t].size; ++e) {
            const std::uint64_t q = 2 * (r - inc[e]) - tie[e];  // 2 correct + tied
            sums.q += q;
            sums.qq += PairedSum{q} * q;
            sums.tied += tie[e];
        }
        tick(pieces[t].size);
    }
}

// A look at the first labels turns most real-valued labels away before
// anything is allocated.
template <class L>
bool first_labels_fit(const LabelReader<L>& labels, std::size_t n, std::size_t limit) {
    std::array<L, kMaxClasses> seen{};
    std::size_t k = 0;
    L block[kReadBlock];
    const std::size_t end = std::min<std::size_t>(n, 4 * kReadBlock);
    for (std::size_t begin = 0; begin < end; begin += kReadBlock) {
        const std::size_t size = std::min(end - begin, kReadBlock);
        labels.labels(begin, begin + size, block);
        for (std::size_t i = 0; i < size; ++i) {
            if (std::find(seen.begin(), seen.begin() + k, block[i]) != seen.begin() + k) continue;
            if (k == limit) return false;
            seen[k++] = block[i];
        }
    }
    return true;
}

// Pass 1: the class id of every label within its chunk (a label not seen
// before in the chunk opens a local class); false if a chunk finds more than
// `limit` classes.
template <class L>
bool find_chunk_classes(const LabelReader<L>& labels, const std::vector<std::size_t>& bound, std::size_t limit,
                        int threads, std::vector<ChunkClasses<L>>& local, Buffer<std::uint8_t>& id, Control& control) {
    std::atomic<bool> overflow{false};
    parallel_for(
        local.size(), threads,
        [&](std::size_t c) {
            // Worked on in a local copy: the byte stores of the ids could
            // otherwise change it, and the loop would reload it every time.
            ChunkClasses<L> loc;
            std::uint8_t* class_id = id.data();
            L block[kReadBlock];
            for (std::size_t begin = bound[c]; begin < bound[c + 1]; begin += kReadBlock) {
                const std::size_t end = std::min(bound[c + 1], begin + kReadBlock);
                labels.labels(begin, end, block);
                for (std::size_t i = begin; i < end; ++i) {
                    const L v = block[i - begin];
                    std::size_t t = loc.k;
                    for (std::size_t u = 0; u < loc.k; ++u) t = loc.value[u] == v ? u : t;
                    if (t == loc.k) {
                        if (loc.k == limit || overflow.load(std::memory_order_relaxed)) {
                            overflow.store(true, std::memory_order_relaxed);
                            return;
                        }
                        loc.value[loc.k++] = v;
                    }
                    class_id[i] = static_cast<std::uint8_t>(t);
                    ++loc.size[t];
                }
                control.advance(end - begin);
            }
            local[c] = loc;
        },
        control);
    return !overflow.load();
}

// Pass 2: score keys grouped by class, in input order within a class.
template <class L>
void scatter_keys(const ScoreReader& scores, const std::vector<std::size_t>& bound,
                  const std::vector<ChunkClasses<L>>& local, const ClassGroups<L>& groups,
                  const Buffer<std::uint8_t>& id, int threads, Buffer<std::uint64_t>& keys, Control& control) {
    parallel_for(
        local.size(), threads,
        [&](std::size_t c) {
            // Local copies: stores to the keys cannot change them, so the loop
            // need not reload them.
            const std::array<std::uint8_t, kMaxClasses> global = local[c].global;
            std::array<std::size_t, kMaxClasses> at = groups.next[c];
            const std::uint8_t* class_id = id.data();
            std::uint64_t* out = keys.data();
            std::uint64_t block[kReadBlock];
            for (std::size_t begin = bound[c]; begin < bound[c + 1]; begin += kReadBlock) {
                const std::size_t end = std::min(bound[c + 1], begin + kReadBlock);
                scores.keys(begin, end, block);
                for (std::size_t i = begin; i < end; ++i) out[at[global[class_id[i]]]++] = block[i - begin];
                control.advance(end - begin);
            }
        },
        control);
}

}  // namespace

template <class L>
bool group_by_classes(const PairedInput<L>& input, std::size_t limit, int threads, Control& control,
                      ClassGroups<L>& groups, Buffer<std::uint64_t>& keys) {
    const std::size_t n = input.n;
    limit = std::min(limit, kMaxClasses);
    if (limit == 0 || !first_labels_fit(input.labels, n, limit)) return false;
    const std::vector<std::size_t> bound = chunk_bounds(n, threads);
    std::vector<ChunkClasses<L>> local(bound.size() - 1);
    Buffer<std::uint8_t> id(n);
    if (!find_chunk_classes(input.labels, bound, limit, threads, local, id, control) ||
        !group_classes(local, limit, groups))
        return false;
    keys = Buffer<std::uint64_t>(n);
    scatter_keys(input.scores, bound, local, groups, id, threads, keys, control);
    return true;
}

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

// Each class is cut into pieces, kLanes pieces of a class per task; the
// per-sample counts of a piece live only in its task.
template <class Gap>
PairedCounts class_moments(Buffer<std::uint64_t>& keys, Buffer<std::uint64_t>& scratch,
                           const ClassGroups<typename Gap::Label>& groups, const Gap& gap, int threads,
                           Control& control, PairedMoments& moments) {
    const auto& value = groups.value;
    const auto& offset = groups.offset;
    const std::size_t k = value.size();
    const std::vector<std::vector<Run>> runs = sort_class_runs(keys, scratch, offset, k, threads, control);
    std::vector<std::vector<Partner>> partners(k);
    std::vector<std::uint64_t> rankable(k, 0);  // r_i of the samples of each class
    for (std::size_t c = 0; c < k; ++c) {
        for (std::size_t d = 0; d < k; ++d) {
            const bool above = d > c;
            if (d == c || !(above ? gap.far(value[d], value[c]) : gap.far(value[c], value[d]))) continue;
            rankable[c] += offset[d + 1] - offset[d];
            for (const Run& run : runs[d]) partners[c].push_back({&run, above});
        }
    }
    // Tasks: up to kLanes pieces of one class.
    std::vector<MomentPiece> pieces;
    std::vector<std::size_t> task_begin;
    for (std::size_t c = 0; c < k; ++c) {
        std::size_t in_task = 0;
        for (const Run& run : runs[c]) {
            for (std::size_t at = 0; at < run.size; at += kMomentPiece) {
                if (in_task++ % kLanes == 0) task_begin.push_back(pieces.size());
                pieces.push_back({c, run.sorted + at, std::min(kMomentPiece, run.size - at)});
            }
        }
    }
    task_begin.push_back(pieces.size());
    const std::size_t tasks = task_begin.size() - 1;
    std::vector<ClassSums> task_sums(tasks);
    parallel_for(
        tasks, threads,
        [&](std::size_t t) {
            thread_local std::vector<std::uint64_t> work;
            Ticker tick(control);
            const MomentPiece* first = pieces.data() + task_begin[t];
            const std::size_t c = first->group;
            piece_moments(first, task_begin[t + 1] - task_begin[t], partners[c], rankable[c], work, task_sums[t], tick);
        },
        control);
    std::vector<ClassSums> class_sums(k);
    for (std::size_t t = 0; t < tasks; ++t) {
        ClassSums& to = class_sums[pieces[task_begin[t]].group];
        to.q += task_sums[t].q;
        to.qq += task_sums[t].qq;
        to.tied += task_sums[t].tied;
    }
    moments = PairedMoments{};
    PairedSum twice_rankable = 0, twice_tied = 0, four_correct_two_tied = 0;
    for (std::size_t c = 0; c < k; ++c) {
        const std::uint64_t size = offset[c + 1] - offset[c], r = rankable[c];
        PairedMomentSums sums;
        sums.samples = size;
        sums.r = PairedSum{size} * r;
        sums.q = class_sums[c].q;
        sums.rr = PairedSum{size} * r * r;
        sums.qr = class_sums[c].q * r;
        sums.qq = class_sums[c].qq;
        (c == 0 ? moments.lowest : c + 1 == k ? moments.highest : moments.others).add(sums);
        twice_rankable += sums.r;
        twice_tied += class_sums[c].tied;
        four_correct_two_tied += sums.q;
    }
    // Every pair is counted at both of its samples.
    PairedCounts counts;
    counts.rankable = static_cast<std::uint64_t>(twice_rankable / 2);
    counts.tied = static_cast<std::uint64_t>(twice_tied / 2);
    counts.correct = static_cast<std::uint64_t>((four_correct_two_tied - twice_tied) / 4);
    counts.incorrect = counts.rankable - counts.correct - counts.tied;
    return counts;
}

template bool group_classes(std::vector<ChunkClasses<double>>&, std::size_t, ClassGroups<double>&);
template bool group_classes(std::vector<ChunkClasses<std::uint64_t>>&, std::size_t, ClassGroups<std::uint64_t>&);
template bool group_by_classes(const PairedInput<double>&, std::size_t, int, Control&, ClassGroups<double>&,
                               Buffer<std::uint64_t>&);
template bool group_by_classes(const PairedInput<std::uint64_t>&, std::size_t, int, Control&,
                               ClassGroups<std::uint64_t>&, Buffer<std::uint64_t>&);
template PairedCounts count_class_pairs(Buffer<std::uint64_t>&, Buffer<std::uint64_t>&, const ClassGroups<double>&,
                                        const RealGap&, int, Control&);
template PairedCounts count_class_pairs(Buffer<std::uint64_t>&, Buffer<std::uint64_t>&,
                                        const ClassGroups<std::uint64_t>&, const IntegerGap&, int, Control&);

template PairedCounts class_moments(Buffer<std::uint64_t>&, Buffer<std::uint64_t>&, const ClassGroups<double>&,
                                    const RealGap&, int, Control&, PairedMoments&);
template PairedCounts class_moments(Buffer<std::uint64_t>&, Buffer<std::uint64_t>&, const ClassGroups<std::uint64_t>&,
                                    const IntegerGap&, int, Control&, PairedMoments&);

}  // namespace pairmetrics::paired_detail
