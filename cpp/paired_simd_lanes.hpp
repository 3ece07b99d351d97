// The merge and count lanes of paired_simd.cpp, written once for every vector
// level. paired_simd.cpp includes this file once per level, inside that
// level's namespace, after defining there (hence no include guard):
//   PAIRMETRICS_LANE    the attributes of an inlined function of the level;
//   Vec, Counts         a vector of doubles and one of 64-bit counts;
//   kWidth              the doubles in a Vec;
//   load_padded(src, at, end), store_prefix(dst, n, v), merge_vectors(lo, hi),
//   count_not_far(count, a, b, min_dist), add_counts(a, b), zero_counts(),
//   last_count(count), sum_counts(count), load(src), store(dst, v), broadcast(x).
// Each job is run interleaved with up to kLanes others, so that their chains
// of dependent vector operations overlap.

// A merge with both runs read as blocks of kWidth, the last one padded with
// +inf: the vector `carry` holds the kWidth largest seen so far; each step
// loads the block of the run whose next label is smaller and outputs the
// kWidth smallest of it and the carry, which are at most every label not yet
// output. The padding comes out last and is not stored.
struct MergeLane {
    std::size_t i, m, j, r, k, end;
    Vec carry;
};

PAIRMETRICS_LANE void store_clipped(double* dst, MergeLane& lane, Vec v) {
    if (lane.k + kWidth <= lane.end) {
        store(dst + lane.k, v);
    } else if (lane.k < lane.end) {
        store_prefix(dst + lane.k, lane.end - lane.k, v);
    }
    lane.k += kWidth;
}

PAIRMETRICS_LANE bool merge_active(const MergeLane& lane) {
    return lane.i < lane.m || lane.j < lane.r;
}

PAIRMETRICS_LANE void merge_step(const double* src, double* dst, MergeLane& lane) {
    const double a = lane.i < lane.m ? src[lane.i] : kInf;
    const double b = lane.j < lane.r ? src[lane.j] : kInf;
    // The run to read is picked by masks, not a branch: which one comes next
    // is as unpredictable as the labels.
    const std::size_t left = std::size_t{0} - static_cast<std::size_t>(a <= b);
    const std::size_t at = (lane.i & left) | (lane.j & ~left), end = (lane.m & left) | (lane.r & ~left);
    Vec next = load_padded(src, at, end);
    lane.i += left & kWidth;
    lane.j += ~left & kWidth;
    merge_vectors(next, lane.carry);
    store_clipped(dst, lane, next);
}

PAIRMETRICS_LANE void merge_jobs(const double* src, double* dst, const MergeJob* jobs, std::size_t count) {
    for (std::size_t first = 0; first < count; first += kLanes) {
        const std::size_t lanes = std::min(kLanes, count - first);
        MergeLane lane[kLanes];
        std::size_t used = 0;
        for (std::size_t t = 0; t < lanes; ++t) {
            const MergeJob& job = jobs[first + t];
            const std::size_t end = job.k + (job.m - job.i) + (job.r - job.j);
            if (job.i == job.m || job.j == job.r) {  // one run: a copy
                std::copy(src + job.i, src + job.m, dst + job.k);
                std::copy(src + job.j, src + job.r, dst + job.k + (job.m - job.i));
                continue;
            }
            MergeLane& x = lane[used++];
            x = MergeLane{job.i + kWidth, job.m, job.j + kWidth, job.r, job.k, end, load_padded(src, job.j, job.r)};
            Vec low = load_padded(src, job.i, job.m);
            merge_vectors(low, x.carry);
            store_clipped(dst, x, low);
        }
        for (;;) {
            bool all = used > 0;
            for (std::size_t t = 0; t < used; ++t) all &= merge_active(lane[t]);
            if (!all) break;
            for (std::size_t t = 0; t < used; ++t) merge_step(src, dst, lane[t]);
        }
        for (std::size_t t = 0; t < used; ++t) {
            while (merge_active(lane[t])) merge_step(src, dst, lane[t]);
            store_clipped(dst, lane[t], lane[t].carry);
        }
    }
}

// Counting lane: for each block of kWidth right labels b (one vector), how
// many left labels from p on are not far above each b (a prefix of the left
// run for each b), counted in windows of 16 left labels, each broadcast and
// compared with every b at once. The count of the last (largest) b is where
// the next block starts; windows move on while it fills them all.
struct CountLane {
    std::size_t p, m, j, r;
    std::uint64_t sum;  // kWidth (m - p) per block, at the p the block starts from
    Counts not_far;     // less these, per b lane
};

PAIRMETRICS_LANE void count_block(const double* src, CountLane& lane, Vec min_dist) {
    const Vec b = load(src + lane.j);
    Counts c0 = zero_counts(), c1 = c0, c2 = c0, c3 = c0;  // four chains of adds
    std::size_t window = lane.p, last;
    for (;;) {
        const std::size_t avail = std::min<std::size_t>(16, lane.m - window);
        if (avail == 16) {
            for (std::size_t k = 0; k < 16; k += 4) {
                c0 = count_not_far(c0, src[window + k], b, min_dist);
                c1 = count_not_far(c1, src[window + k + 1], b, min_dist);
                c2 = count_not_far(c2, src[window + k + 2], b, min_dist);
                c3 = count_not_far(c3, src[window + k + 3], b, min_dist);
            }
        } else {  // the end of the left run: labels past it count as far
            for (std::size_t k = 0; k < avail; ++k) c0 = count_not_far(c0, src[window + k], b, min_dist);
        }
        const Counts count = add_counts(add_counts(c0, c1), add_counts(c2, c3));
        last = last_count(count);
        window += 16;
        if (last < window - lane.p) {
            lane.not_far = add_counts(lane.not_far, count);
            break;
        }
    }
    lane.sum += kWidth * (lane.m - lane.p);
    lane.p += last;
    lane.j += kWidth;
}

PAIRMETRICS_LANE std::uint64_t count_jobs(const double* src, const CountJob* jobs, std::size_t count, double min_dist) {
    const Vec dist = broadcast(min_dist);
    std::uint64_t total = 0;
    for (std::size_t first = 0; first < count; first += kLanes) {
        const std::size_t lanes = std::min(kLanes, count - first);
        CountLane lane[kLanes];
        for (std::size_t t = 0; t < lanes; ++t) {
            const CountJob& job = jobs[first + t];
            lane[t] = CountLane{job.p, job.m, job.j, job.r, 0, zero_counts()};
        }
        for (;;) {
            bool all = lanes > 0;
            for (std::size_t t = 0; t < lanes; ++t) all &= lane[t].j + kWidth <= lane[t].r;
            if (!all) break;
            for (std::size_t t = 0; t < lanes; ++t) count_block(src, lane[t], dist);
        }
        for (std::size_t t = 0; t < lanes; ++t) {
            while (lane[t].j + kWidth <= lane[t].r) count_block(src, lane[t], dist);
            count_tail(src, lane[t].p, lane[t].m, lane[t].j, lane[t].r, lane[t].sum, min_dist);
            total += lane[t].sum - sum_counts(lane[t].not_far);
        }
    }
    return total;
}
