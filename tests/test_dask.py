"""The public functions on Dask collections give the in-memory answers, computed on a cluster."""

import subprocess
import sys

import numpy as np
import pytest

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

# One worker runs this file: its module fixture is expensive (xdist's loadgroup, set in pyproject.toml).
pytestmark = pytest.mark.xdist_group("dask")

import dask.array as da  # noqa: E402
import pairmetrics as pm  # noqa: E402
from _hypothesis_budget import examples
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from pairmetrics.dask import measures as dask_measures  # noqa: E402
from pairmetrics.dask import paired as dask_paired  # noqa: E402

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None, memory_limit="2GiB"
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(autouse=True)
def scheduler(request):
    """Tests that ask for ``client`` run on the 2-worker cluster (gathering, progress, plugins, errors); the others,
    the hypothesis parity runs among them, run the same graphs on dask's synchronous scheduler, where an example
    takes about a sixth of the time of a cluster round trip."""
    if "client" in request.fixturenames:
        yield "cluster"
    else:
        with dask.config.set(scheduler="synchronous"):
            yield "synchronous"


# --------------------------------------------------------------------------- strategies


@st.composite
def chunkings(draw, n):
    """Row chunks summing to n: single elements, one chunk, or uneven cuts."""
    kind = draw(st.sampled_from(["single", "whole", "uneven"]))
    if kind == "single" and n <= 24:
        return (1,) * n
    if kind == "whole":
        return (n,)
    cuts = sorted(set(draw(st.lists(st.integers(1, n - 1), max_size=6)))) if n > 1 else []
    edges = [0, *cuts, n]
    return tuple(b - a for a, b in zip(edges, edges[1:]))


@st.composite
def paired_data(draw, max_n=40):
    n = draw(st.integers(2, max_n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    labels_kind = draw(
        st.sampled_from(["binary", "ordinal", "real", "signed zeros", "float32", "constant", "huge ints", "uint8"])
    )
    if labels_kind == "binary":
        labels, min_dist = (rng.random(n) < 0.4).astype(np.float64), 0.5
    elif labels_kind == "ordinal":
        labels, min_dist = rng.integers(0, 5, n).astype(np.int64), draw(st.sampled_from([0.5, 1.0, 2.0]))
    elif labels_kind == "real":
        labels, min_dist = np.round(rng.random(n), 2), draw(st.sampled_from([0.01, 0.1, 0.3]))
    elif labels_kind == "signed zeros":
        labels, min_dist = rng.choice([-1.0, -0.0, 0.0, 1.0], n), draw(st.sampled_from([0.5, 1.0]))
    elif labels_kind == "huge ints":  # beyond float64's integers, differences that a double would round
        ends = np.array([-(2**63), -(2**63) + 3, -1, 2**62, 2**63 - 4], dtype=np.int64)
        labels = ends[rng.integers(0, 5, n)] + rng.integers(0, 3, n)
        min_dist = draw(st.sampled_from([1.0, 2.5, 2.0**62, 2.0**64]))
    elif labels_kind == "uint8":
        labels, min_dist = rng.integers(250, 256, n).astype(np.uint8), draw(st.sampled_from([0.5, 2.0]))
    elif labels_kind == "float32":
        labels, min_dist = np.round(rng.random(n), 1).astype(np.float32), draw(st.sampled_from([0.1, 0.2]))
    else:
        labels, min_dist = np.full(n, 3.0), 0.5
    # few distinct scores: ties fall across chunk borders
    levels = draw(st.sampled_from([2, 5, 1000]))
    scores = (rng.integers(0, levels, n) / levels).astype(draw(st.sampled_from([np.float32, np.float64])))
    chunks = draw(chunkings(n))
    return scores, labels, min_dist, chunks


# --------------------------------------------------------------------------- paired evaluation


@settings(max_examples=8, **SETTINGS)
@given(data=paired_data(), many_partitions=st.booleans())
def test_paired_evaluation_equals_in_memory(monkeypatch, data, many_partitions):
    scores, labels, min_dist, chunks = data
    if many_partitions:  # partitions of a few samples each, many pairs of partitions
        monkeypatch.setattr(dask_paired, "PARTITION_SAMPLES", 5)
    expected = pm.paired_evaluation(labels, scores, min_dist=min_dist, warn=False)
    got = pm.paired_evaluation(
        da.from_array(labels, chunks=chunks), da.from_array(scores, chunks=chunks), min_dist=min_dist, warn=False
    )
    assert got == expected
    # the variance behind confidence_interval(), from per-sample counts reduced block by block
    np.testing.assert_allclose(got._variance, expected._variance, rtol=1e-9, atol=1e-300)
    assert pm.pairedeval.paired_eval(da.from_array(scores, chunks=chunks), labels, min_dist) == (
        expected.n_rankable,
        expected.n_correct,
    )


@settings(max_examples=12, **SETTINGS)
@given(data=paired_data(max_n=80), partition=st.sampled_from([3, 7, 40]))
def test_paired_totals_between_partitions_by_label_bucket(monkeypatch, data, partition):
    # without per-sample counts, pairs between score partitions are counted by label
    # bucket; many small partitions give many buckets and runs of equal labels
    scores, labels, min_dist, chunks = data
    monkeypatch.setattr(dask_paired, "PARTITION_SAMPLES", partition)
    expected = pm.paired_evaluation(labels, scores, min_dist=min_dist, warn=False, variance=False)
    got = pm.paired_evaluation(
        da.from_array(labels, chunks=chunks),
        da.from_array(scores, chunks=chunks),
        min_dist=min_dist,
        warn=False,
        variance=False,
    )
    assert got == expected


def test_integer_labels_beyond_float64_precision_are_exact(client):
    """Labels near both ends of int64, and near the top of uint64, whose differences float64 would
    round: both graphs (totals only, and per-sample counts for the variance) on the cluster."""
    rng = np.random.default_rng(21)
    scores = rng.integers(0, 9, 90).astype(np.float64)
    ends = np.array([np.iinfo(np.int64).min, -1, 2**62, np.iinfo(np.int64).max - 6])
    cases = [
        ends[rng.integers(0, 4, 90)] + rng.integers(0, 4, 90),
        (np.iinfo(np.uint64).max - rng.integers(0, 7, 90).astype(np.uint64)).astype(np.uint64),
    ]
    for labels in cases:
        for variance in (False, True):
            expected = pm.paired_evaluation(labels, scores, min_dist=2.5, variance=variance, warn=False)
            got = pm.paired_evaluation(
                da.from_array(labels, chunks=17), da.from_array(scores, chunks=17), min_dist=2.5, variance=variance
            )
            assert got == expected
            if variance:
                np.testing.assert_allclose(got._variance, expected._variance, rtol=1e-9)


def test_integer_labels_spanning_the_whole_64_bit_range_are_refused(client):
    labels = np.array([np.iinfo(np.int64).min, 0, 1, np.iinfo(np.int64).max], dtype=np.int64)
    with pytest.raises(ValueError, match="labels: integer labels .* whole 64-bit range"):
        pm.paired_evaluation(da.from_array(labels, chunks=2), da.from_array(np.arange(4.0), chunks=2))
    labels[0] += 1  # one short of the whole range: exact
    expected = pm.paired_evaluation(labels, np.arange(4.0), variance=False)
    assert pm.paired_evaluation(labels, da.from_array(np.arange(4.0), chunks=2), variance=False) == expected


def test_label_buckets_split_equal_labels_by_partition():
    # one label shared by every sample: buckets still split it (by score partition)
    labels, parts = dask_paired._label_bounds(np.arange(100.0), np.zeros(100), np.array([24.5, 49.5, 74.5]), 4)
    np.testing.assert_array_equal(labels, [0, 0, 0])
    np.testing.assert_array_equal(parts, [1, 2, 3])


@settings(max_examples=5, **SETTINGS)
@given(data=paired_data(max_n=40), seed=st.integers(0, 1000))
def test_compare_two_models_equals_in_memory(data, seed):
    scores_a, labels, min_dist, chunks = data
    scores_b = np.random.default_rng(seed).random(scores_a.size).astype(scores_a.dtype)
    models = np.vstack([scores_a, scores_b])
    with _quiet():
        expected = pm.compare_models(labels, models, min_dist=min_dist)
        got = pm.compare_models(
            da.from_array(labels, chunks=chunks), da.from_array(models, chunks=(2, chunks)), min_dist=min_dist
        )
    assert got.n_rankable == expected.n_rankable and got.df == expected.df
    for name in ("auc", "covariance", "statistic", "pvalue", "difference_pvalue"):
        np.testing.assert_allclose(getattr(got, name), getattr(expected, name), rtol=1e-9, atol=1e-15, err_msg=name)


def _per_sample_on_dask(scores, labels, min_dist, chunks, empty=False):
    """Totals and per-sample (rankable, tied, incorrect) of the Dask graph, in input order."""
    ds = _with_empty_chunks(scores, chunks) if empty else da.from_array(scores, chunks=(chunks,))
    s, y, min_dist = dask_paired._paired_inputs(ds, da.from_array(labels, chunks=ds.chunks), min_dist)
    totals, per_block, _ = dask_paired._paired_graph(s, y, min_dist, True, None)
    totals, per_block = dask.compute(totals, per_block)
    return totals, np.concatenate(per_block, axis=1)


def _per_sample_in_memory(scores, labels, min_dist):
    from pairmetrics import _core
    from pairmetrics._pairs import pair_totals, sample_counts

    output = _core.paired_counts(scores, labels, min_dist, True, 1)
    return pair_totals(output), np.array(sample_counts(output), dtype=np.int64)


@settings(max_examples=12, **SETTINGS)
@given(
    data=paired_data(max_n=120),
    partition=st.sampled_from([1, 3, 7, 40, 10**9]),
    buckets=st.sampled_from([1, 3]),
    sampled=st.sampled_from([1, 2000]),
    empty=st.booleans(),
)
def test_per_sample_counts_equal_the_kernels(monkeypatch, data, partition, buckets, sampled, empty):
    """Every sample's counts, not only the totals: partitions cut at tied scores, few or many
    label buckets, coarse bounds from tiny samples, empty blocks."""
    scores, labels, min_dist, chunks = data
    monkeypatch.setattr(dask_paired, "PARTITION_SAMPLES", partition)
    monkeypatch.setattr(dask_paired, "QUERY_BUCKETS_PER_PARTITION", buckets)
    monkeypatch.setattr(dask_paired, "SAMPLES_PER_PARTITION", sampled)
    totals, per_sample = _per_sample_on_dask(scores, labels, min_dist, chunks, empty)
    expected_totals, expected = _per_sample_in_memory(scores, labels, min_dist)
    assert totals == expected_totals
    np.testing.assert_array_equal(per_sample, expected)


@settings(max_examples=examples(60), deadline=None)
@given(
    n_parts=st.integers(1, 70), points=st.integers(0, 50), queries=st.integers(0, 30), seed=st.integers(0, 2**32 - 1)
)
def test_partition_dominance_counts_every_query(n_parts, points, queries, seed):
    """The bucket step's counts: weight of the points ranked below r in partitions above / below p."""
    rng = np.random.default_rng(seed)
    ranks, parts, weights = rng.integers(0, 6, points), rng.integers(0, n_parts, points), rng.integers(1, 5, points)
    query_ranks, query_parts = rng.integers(0, 7, queries), rng.integers(0, n_parts, queries)
    higher, lower = dask_paired._dominance(
        ranks, parts.astype(np.int32), weights, query_ranks, query_parts.astype(np.int32), n_parts
    )
    below = ranks[None, :] < query_ranks[:, None]
    np.testing.assert_array_equal(higher, (weights * (below & (parts[None, :] > query_parts[:, None]))).sum(axis=1))
    np.testing.assert_array_equal(lower, (weights * (below & (parts[None, :] < query_parts[:, None]))).sum(axis=1))


def test_per_sample_counts_with_one_partition(monkeypatch):
    monkeypatch.setattr(dask_paired.blocks, "cluster_threads", lambda: 1)
    rng = np.random.default_rng(16)
    scores, labels = rng.random(50), rng.integers(0, 4, 50)
    totals, per_sample = _per_sample_on_dask(scores, labels, 1.0, (20, 30))
    expected_totals, expected = _per_sample_in_memory(scores, labels, 1.0)
    assert totals == expected_totals
    np.testing.assert_array_equal(per_sample, expected)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.float64])
def test_per_sample_counts_of_labels_near_the_type_limits(monkeypatch, dtype):
    """Integer labels near the top of their type (exact as offsets, beyond float64's integers),
    and doubles near 2**53, where consecutive doubles are 2 apart: min_dist sits between
    representable gaps."""
    monkeypatch.setattr(dask_paired, "PARTITION_SAMPLES", 5)
    rng = np.random.default_rng(17)
    top = {np.int64: np.iinfo(np.int64).max, np.uint64: np.iinfo(np.uint64).max, np.float64: 2.0**53}[dtype]
    labels = (np.array(top, dtype=dtype) - rng.integers(0, 12, 60).astype(dtype)).astype(dtype)
    scores = rng.integers(0, 6, 60).astype(np.float64)
    for min_dist in (0.5, 1.0, 1.5, 2.0, 3.0, 11.0, 12.0):
        totals, per_sample = _per_sample_on_dask(scores, labels, min_dist, (13, 0, 47))
        expected_totals, expected = _per_sample_in_memory(scores, labels, min_dist)
        assert totals == expected_totals
        np.testing.assert_array_equal(per_sample, expected)


def test_per_sample_counts_of_unknown_chunk_sizes(client):
    rng = np.random.default_rng(18)
    scores, labels = da.from_array(rng.random(400), chunks=37), da.from_array(rng.integers(0, 5, 400), chunks=37)
    keep = scores > 0.3  # blocks of unknown length
    got = pm.paired_evaluation(labels[keep], scores[keep], min_dist=1.0, variance=True)
    s, y = scores[keep].compute(), labels[keep].compute()
    expected = pm.paired_evaluation(y, s, min_dist=1.0, variance=True)
    assert got == expected
    np.testing.assert_allclose(got._variance, expected._variance, rtol=1e-9)


def _graph_size(*delayed_values):
    graph = {}
    for value in delayed_values:
        graph.update(value.__dask_graph__())
    return len(graph)


def test_per_sample_graph_grows_linearly_with_the_partitions(client, monkeypatch):
    """One input block: the per-sample graph has O(P) tasks (no task per pair of partitions)."""
    rng = np.random.default_rng(19)
    n = 20_000
    scores, labels = da.from_array(rng.random(n), chunks=n), da.from_array(rng.random(n), chunks=n)
    sizes = {}
    for n_parts in (8, 32):
        monkeypatch.setattr(dask_paired, "PARTITION_SAMPLES", n // n_parts)
        totals, per_block, _ = dask_paired._paired_graph(scores, labels, 0.1, True, None)
        sizes[n_parts] = _graph_size(totals, *per_block)
    assert sizes[32] < 4.5 * sizes[8]
    assert sizes[32] < 12 * 32


@settings(max_examples=6, **SETTINGS)
@given(data=paired_data(max_n=40), k=st.integers(2, 3), seed=st.integers(0, 1000))
def test_compare_models_equals_in_memory(data, k, seed):
    scores, labels, min_dist, chunks = data
    rng = np.random.default_rng(seed)
    models = np.vstack([scores.astype(np.float64), *(rng.random(scores.size) for _ in range(k - 1))])
    with _quiet():
        expected = pm.compare_models(labels, models, min_dist=min_dist)
        got = pm.compare_models(
            da.from_array(labels, chunks=chunks), da.from_array(models, chunks=(1, chunks)), min_dist=min_dist
        )
    np.testing.assert_array_equal(got.auc, expected.auc)
    assert (got.n_rankable, got.df) == (expected.n_rankable, expected.df)
    for name in ("covariance", "statistic", "pvalue", "difference_pvalue"):
        np.testing.assert_allclose(getattr(got, name), getattr(expected, name), rtol=1e-9, atol=1e-15, err_msg=name)


def test_compare_models_errors_match_in_memory(client):
    labels = np.arange(10) % 3
    models = np.random.default_rng(20).random((2, 10))
    _same_error(pm.compare_models, (labels, models[0]), (labels, da.from_array(models[0], chunks=4)))
    bad = models.copy()
    bad[1, 7] = np.nan
    message = _same_error(pm.compare_models, (labels, bad), (labels, da.from_array(bad, chunks=(2, 4))))
    assert "y_score[1]" in message
    _same_error(pm.compare_models, (labels[:-1], models), (labels[:-1], da.from_array(models, chunks=(2, 4))))


def _quiet():
    import warnings

    manager = warnings.catch_warnings()
    manager.__enter__()
    warnings.simplefilter("ignore", RuntimeWarning)

    class _Exit:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            manager.__exit__(*exc)

    return _Exit()


def test_paired_on_dataframe_columns_and_mixed_inputs(client):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(4)
    n = 3000
    frame = pd.DataFrame({"a": rng.random(n).astype(np.float32), "b": rng.random(n), "y": rng.integers(0, 4, n)})
    ddf = dd.from_pandas(frame, npartitions=5)
    expected = pm.paired_evaluation(frame.y.to_numpy(), frame.a.to_numpy(), min_dist=1.0)
    assert pm.paired_evaluation(ddf.y, ddf.a, min_dist=1.0) == expected
    assert pm.paired_evaluation(ddf.y, frame.a.to_numpy(), min_dist=1.0) == expected  # numpy scores, dask labels
    assert (
        pm.paired_evaluation(list(frame.y), ddf[["a"]].to_dask_array(lengths=True), min_dist=1.0) == expected
    )  # (n, 1)
    result = pm.compare_models(
        ddf.y, da.stack([ddf.a.to_dask_array(lengths=True), ddf.b.to_dask_array(lengths=True)]), min_dist=1.0
    )
    reference = pm.compare_models(frame.y.to_numpy(), [frame.a.to_numpy(), frame.b.to_numpy()], min_dist=1.0)
    np.testing.assert_allclose(result.auc, reference.auc, rtol=1e-15)
    np.testing.assert_allclose(result.pvalue, reference.pvalue, rtol=1e-9)


def test_paired_on_parquet_columns(client, tmp_path):
    """Reading one column, dask may merge Parquet files into fewer partitions than the frame has."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(6)
    frame = pd.DataFrame({"score": rng.random(4000).astype(np.float32), "label": rng.integers(0, 3, 4000)})
    dd.from_pandas(frame, npartitions=40).to_parquet(tmp_path / "data.parquet")
    stored = dd.read_parquet(tmp_path / "data.parquet")
    expected = pm.paired_evaluation(frame.label.to_numpy(), frame.score.to_numpy(), min_dist=1.0)
    assert pm.paired_evaluation(stored.label, stored.score, min_dist=1.0) == expected


def test_paired_large_real_labels_many_partitions(monkeypatch):
    monkeypatch.setattr(dask_paired, "PARTITION_SAMPLES", 2000)
    rng = np.random.default_rng(5)
    n = 12000
    scores = rng.random(n).astype(np.float32)
    labels = np.round(rng.random(n), 3)  # labels exactly min_dist apart exercise the threshold rounding
    for min_dist in (0.1, 0.001):
        expected = pm.paired_evaluation(labels, scores, min_dist=min_dist)
        got = pm.paired_evaluation(
            da.from_array(labels, chunks=1500), da.from_array(scores, chunks=1500), min_dist=min_dist, variance=False
        )
        assert got == expected


def test_paired_errors_name_the_argument(client):
    scores = np.linspace(0, 1, 20)
    labels = np.arange(20.0)
    bad = scores.copy()
    bad[13] = np.nan
    with pytest.raises(ValueError) as memory:
        pm.paired_evaluation(labels, bad)
    with pytest.raises(ValueError) as distributed_error:
        pm.paired_evaluation(labels, da.from_array(bad, chunks=6))
    assert str(distributed_error.value) == str(memory.value)
    with pytest.raises(ValueError, match="same length"):
        pm.paired_evaluation(labels[:-1], da.from_array(scores, chunks=6))
    with pytest.raises(ValueError, match="min_dist"):
        pm.paired_evaluation(labels, da.from_array(scores, chunks=6), min_dist=-1.0)
    with pytest.raises(TypeError, match="unexpected keyword"):
        pm.paired_evaluation(labels, da.from_array(scores, chunks=6), min_dist=0.5, n_job=1)
    with pytest.raises(ValueError, match="1-D"):
        pm.paired_evaluation(labels, da.zeros((20, 2), chunks=5))
    with pytest.warns(RuntimeWarning, match="nothing is rankable"):
        pm.paired_evaluation(np.ones(20), da.from_array(scores, chunks=6))


class _TaskBytes(distributed.diagnostics.plugin.SchedulerPlugin):
    """Records the largest task output and the largest total input of any task."""

    name = "pairmetrics-task-bytes"

    def __init__(self):
        self.largest_output = 0
        self.largest_inputs = 0
        self.largest_key = None

    async def start(self, scheduler):
        self.scheduler = scheduler

    def transition(self, key, start, finish, *args, **kwargs):
        if finish != "memory":
            return
        ts = self.scheduler.tasks.get(key)
        if ts is None:
            return
        self.largest_output = max(self.largest_output, ts.nbytes or 0)
        inputs = sum(dep.nbytes or 0 for dep in ts.dependencies)
        if inputs > self.largest_inputs:
            self.largest_inputs, self.largest_key = inputs, key


def _task_bytes(dask_scheduler):
    plugin = dask_scheduler.plugins[_TaskBytes.name]
    return plugin.largest_inputs, plugin.largest_output


def test_paired_never_gathers_the_data(client, monkeypatch):
    """No task receives or produces more than a partition's worth of the data."""
    monkeypatch.setattr(dask_paired, "PARTITION_SAMPLES", 12_500)  # 8 partitions of about n / 8 samples
    plugin = _TaskBytes()
    client.register_plugin(plugin)
    try:
        n = 100_000
        scores = da.random.default_rng(0).random(n, chunks=6_250)
        labels = da.random.default_rng(1).random(n, chunks=6_250)
        result = pm.compare_models(labels, da.stack([scores, scores * 0.5 + labels * 0.5]), min_dist=0.1)
        assert result.n_rankable > 0
        # A partition holds at most 72 bytes per sample (score, label, index, per-sample
        # counts, sorted labels and their thresholds): with 8 partitions no task may see
        # more than a partition's share of that, with slack for the sampled boundaries.
        largest_inputs, largest_output = client.run_on_scheduler(_task_bytes)
        assert 0 < largest_inputs < 0.3 * 72 * n
        assert 0 < largest_output < 0.3 * 72 * n
    finally:
        client.unregister_scheduler_plugin(plugin.name)


# --------------------------------------------------------------------------- 2 vs 2


@st.composite
def two_vs_two_data(draw):
    n = draw(st.integers(2, 30))
    d = draw(st.integers(2, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    y = rng.integers(-3, 4, (n, d)).astype(dtype)
    y[np.all(y == 0, axis=1), 0] = 1
    y[np.all(y == y[:, :1], axis=1), 0] += 7  # no constant rows (correlation)
    p = (y + rng.normal(size=(n, d))).astype(dtype)
    if n > 3:  # identical targets and predictions across blocks
        y[-1] = y[0]
        p[1] = p[-2]
    return y, p, draw(chunkings(n))


@settings(max_examples=8, **SETTINGS)
@given(
    data=two_vs_two_data(),
    metric=st.sampled_from(["cosine", "correlation", "euclidean", "sqeuclidean"]),
    ties=st.sampled_from(["fail", "pass", "half", "exclude"]),
    pairs=st.sampled_from(["all", "distinct_targets", 3]),
)
def test_two_vs_two_equals_in_memory(data, metric, ties, pairs):
    y, p, chunks = data
    if isinstance(pairs, int) and y.shape[0] < 3:
        pairs = 1
    expected = pm.two_vs_two(y, p, metric=metric, ties=ties, pairs=pairs, rng=3)
    got = pm.two_vs_two(da.from_array(y, chunks=(chunks, -1)), p, metric=metric, ties=ties, pairs=pairs, rng=3)
    assert got == expected


def test_two_vs_two_permutation_test_and_progress(client, capsys):
    rng = np.random.default_rng(6)
    y = rng.normal(size=(60, 5)).astype(np.float32)
    p = (y + rng.normal(size=y.shape)).astype(np.float32)
    dy, dp = da.from_array(y, chunks=(25, 5)), da.from_array(p, chunks=(17, 5))
    expected = pm.two_vs_two_permutation_test(y, p, n_resamples=3, rng=1, metric="euclidean")
    got = pm.two_vs_two_permutation_test(dy, dp, n_resamples=3, rng=1, metric="euclidean", progress=True)
    assert got == expected
    assert pm.two_vs_two(dy, dp, progress=True) == pm.two_vs_two(y, p)


def test_two_vs_two_errors_match_in_memory(client):
    y = np.ones((10, 3))
    p = np.ones((10, 3))
    y[7] = 0
    for metric in ("cosine", "correlation"):
        with pytest.raises(ValueError) as memory:
            pm.two_vs_two(y, p, metric=metric)
        with pytest.raises(ValueError) as on_dask:
            pm.two_vs_two(da.from_array(y, chunks=(4, 3)), p, metric=metric)
        assert str(on_dask.value) == str(memory.value)
    with pytest.raises(ValueError, match="same shape"):
        pm.two_vs_two(da.from_array(y, chunks=(4, 3)), p[:, :2])


# --------------------------------------------------------------------------- measures, multi-label, cross-match


@pytest.mark.parametrize(
    "name", ["zero_one_error", "absolute_error", "sum_squares_error", "rms_error", "worst_case_error"]
)
def test_error_measures_equal_in_memory(client, name):
    rng = np.random.default_rng(7)
    func = getattr(pm, name)
    y = rng.integers(0, 3, (101, 3))
    p = rng.normal(size=(101, 3)).astype(np.float32)
    for a, b in ((y, p), (y, rng.integers(0, 3, (101, 3))), (y[:, 0], p[:, :1])):
        for per_target in (False, True):
            expected = func(a, b, per_target=per_target)
            got = func(da.from_array(a, chunks=((40, 1, 60),) + a.shape[1:]), b, per_target=per_target)
            assert type(got) is type(expected)
            np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_likelihood_family_equal_in_memory(client):
    rng = np.random.default_rng(8)
    y = (rng.random((90, 2)) < 0.4).astype(np.int8)
    p = rng.random((90, 2))
    dy = da.from_array(y, chunks=(31, 2))
    np.testing.assert_allclose(pm.log_loss(dy, p, base=2), pm.log_loss(y, p, base=2), rtol=1e-12)
    np.testing.assert_allclose(
        pm.log_likelihood(dy, p, average=True, per_target=True),
        pm.log_likelihood(y, p, average=True, per_target=True),
        rtol=1e-12,
    )
    np.testing.assert_allclose(pm.likelihood(dy, p, eps=0.01).log, pm.likelihood(y, p, eps=0.01).log, rtol=1e-12)
    bad = y.copy()
    bad[50, 1] = 2
    with pytest.raises(ValueError, match="y_true"):
        pm.log_loss(da.from_array(bad, chunks=(31, 2)), p)


@settings(max_examples=15, **SETTINGS)
@given(
    n=st.integers(1, 60),
    columns=st.sampled_from([None, 1, 3]),
    kind=st.sampled_from(["ties", "real", "binary", "signed zeros"]),
    loss=st.sampled_from(["zero_one", "absolute", "squares", "worst_case", "log_loss"]),
    seed=st.integers(0, 1000),
    small=st.booleans(),
)
def test_best_constant_equals_in_memory(monkeypatch, n, columns, kind, loss, seed, small):
    if small:  # several histogram passes before the median's values are gathered; many mode groups
        monkeypatch.setattr(dask_measures, "SELECT_GATHER", 2)
        monkeypatch.setattr(dask_measures, "MODE_GROUP_SAMPLES", 3)
    rng = np.random.default_rng(seed)
    shape = (n,) if columns is None else (n, columns)
    if kind == "binary" or loss == "log_loss":
        y = rng.integers(0, 2, shape).astype(np.int8)
    elif kind == "ties":
        y = rng.integers(-3, 4, shape).astype(np.float32)
    elif kind == "signed zeros":
        y = rng.choice([-0.0, 0.0, 1.5], shape)
    else:
        y = rng.standard_normal(shape) * 10.0 ** rng.integers(-300, 300, shape)
    expected = pm.best_constant(y, loss)
    got = pm.best_constant(da.from_array(y, chunks=max(1, n // 3)), loss)
    assert got.loss == expected.loss and np.shape(got.value) == np.shape(expected.value)
    exact = loss in ("zero_one", "absolute", "worst_case")
    np.testing.assert_allclose(got.value, expected.value, rtol=0 if exact else 1e-12)
    np.testing.assert_allclose(got.error, expected.error, rtol=1e-12)


def test_best_constant_bad_input_names_y(client):
    with pytest.raises(ValueError, match="y contains NaN"):
        pm.best_constant(da.from_array(np.array([1.0, np.nan, 2.0]), chunks=2), "squares")
    with pytest.raises(ValueError, match="y must hold only 0 and 1"):
        pm.best_constant(da.from_array(np.array([0, 1, 2]), chunks=2), "log_loss")
    with pytest.raises(ValueError, match="loss"):
        pm.best_constant(da.from_array(np.array([0, 1, 2]), chunks=2), "hinge")


def test_multilabel_counts_equal_in_memory(client):
    rng = np.random.default_rng(9)
    t = rng.random((77, 6)) < 0.3
    p = (rng.random((77, 6)) < 0.3).astype(np.float64)
    assert pm.multilabel_counts(da.from_array(t, chunks=(10, 3)), p, false_neg=5) == pm.multilabel_counts(
        t, p, false_neg=5
    )


def test_crossmatch_resample_equal_in_memory(client):
    rng = np.random.default_rng(10)
    x = rng.normal(size=(70, 2))
    y = rng.normal(size=(50, 2)) + 0.7
    expected = pm.crossmatch_resample(x, y, sample_size=15, n_resamples=8, rng=2)
    assert pm.crossmatch_resample(da.from_array(x, chunks=(9, 2)), y, sample_size=15, n_resamples=8, rng=2) == expected


def test_crossmatch_resample_refuses_undefined_rows_as_in_memory(client):
    """An all-zero row has no cosine distance: on Dask it is found at its global index, as in memory."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=(40, 3))
    x[23] = 0.0
    y = rng.normal(size=(30, 3))
    with pytest.raises(ValueError) as in_memory:
        pm.crossmatch_resample(x, y, sample_size=10, n_resamples=3, rng=1, metric="cosine")
    with pytest.raises(ValueError) as on_dask:
        pm.crossmatch_resample(
            da.from_array(x, chunks=(9, 3)), y, sample_size=10, n_resamples=3, rng=1, metric="cosine"
        )
    assert str(on_dask.value) == str(in_memory.value) and "23" in str(in_memory.value)


def test_default_scheduler_without_client():
    """Without a distributed client the same graphs run on dask's local scheduler."""
    code = (
        "import numpy as np, dask.array as da, pairmetrics as pm\n"
        "s = np.random.default_rng(0).random(500); y = np.arange(500) % 3\n"
        "assert pm.paired_evaluation(da.from_array(s, chunks=70), y) == pm.paired_evaluation(s, y)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_import_does_not_load_dask():
    code = "import sys, pairmetrics; assert 'dask' not in sys.modules and 'distributed' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@settings(max_examples=examples(60), deadline=None)
@given(
    y=st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=20),
    min_dist=st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False),
)
def test_label_thresholds_reproduce_the_rounded_difference(y, min_dist):
    """Counting labels >= t is the same test as fl(label - y) >= min_dist."""
    y = np.array(y)
    with np.errstate(all="ignore"):
        t = dask_paired.LabelRule(min_dist).up(y)
        finite = np.isfinite(t)
        assert ((t - y)[finite] >= min_dist).all()
        assert ((np.nextafter(t, -np.inf) - y)[finite] < min_dist).all()
        ordered = t[np.argsort(y)]
        assert (ordered[1:] >= ordered[:-1]).all()  # nondecreasing: thresholds of sorted labels are sorted


def test_kernels_accept_unpickled_arrays():
    """Blocks reach dask workers pickled; their dtype objects are equal to, not identical with, numpy's."""
    import pickle

    rng = np.random.default_rng(11)
    y = rng.random((20, 3))
    p = pickle.loads(pickle.dumps(rng.random((20, 3))))
    assert pm.absolute_error(y, p) == pm.absolute_error(y, p.copy())
    assert pm.log_loss((y > 0.5).astype(np.float64), p) == pm.log_loss((y > 0.5).astype(np.float64), p.copy())
    p32 = pickle.loads(pickle.dumps(p.astype(np.float32)))
    assert pm.two_vs_two(p32, p32 + 1) == pm.two_vs_two(p32.copy(), p32 + 1)


# --------------------------------------------------------------------------- parity: same number or same error


def _outcome(func, *args, **kwargs):
    """The result of a call, or ("error", type, message) when it raises ValueError/TypeError."""
    try:
        return func(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        return ("error", type(exc).__name__, str(exc))


def _assert_same(got, expected, rtol):
    if isinstance(expected, tuple) and expected and expected[0] == "error":
        assert got == expected
    else:
        assert not (isinstance(got, tuple) and got and got[0] == "error"), got
        assert type(got) is type(expected)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=0)


def _with_empty_chunks(a, chunks):
    """A dask array of ``a`` whose row chunks include empty ones (between and at the ends)."""
    parts = [da.from_array(a[:0])]
    start = 0
    for size in chunks:
        parts += [da.from_array(a[start : start + size]), da.from_array(a[:0])]
        start += size
    return da.concatenate(parts, axis=0)


@st.composite
def measure_inputs(draw):
    n = draw(st.integers(1, 30))
    two_d = draw(st.booleans())
    shape = (n, draw(st.integers(1, 3))) if two_d else (n,)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["huge", "tiny", "mixed", "float32 max", "int64 big", "ints", "nan"]))
    if kind in ("huge", "tiny", "mixed"):
        exponent = {"huge": (150, 300), "tiny": (-300, -150), "mixed": (-300, 300)}[kind]
        y = rng.standard_normal(shape) * 10.0 ** rng.integers(*exponent, shape)
        p = rng.standard_normal(shape) * 10.0 ** rng.integers(*exponent, shape)
    elif kind == "float32 max":
        y = (rng.uniform(-1, 1, shape) * np.finfo(np.float32).max).astype(np.float32)
        p = (rng.uniform(-1, 1, shape) * np.finfo(np.float32).max).astype(np.float32)
    elif kind == "int64 big":
        y = rng.integers(2**53, 2**62, shape, dtype=np.int64) * rng.choice([-1, 1], shape)
        p = draw(st.sampled_from([y + rng.integers(-3, 4, shape), rng.standard_normal(shape)]))
    elif kind == "ints":
        y, p = rng.integers(-3, 4, shape), rng.integers(-3, 4, shape).astype(np.uint8)
    else:
        y, p = rng.standard_normal(shape), rng.standard_normal(shape)
        y.ravel()[rng.integers(0, y.size)] = draw(st.sampled_from([np.nan, np.inf]))
    return y, p, draw(chunkings(n)), draw(st.booleans())


@settings(max_examples=25, **SETTINGS)
@given(
    data=measure_inputs(),
    name=st.sampled_from(["zero_one_error", "absolute_error", "sum_squares_error", "rms_error", "worst_case_error"]),
    per_target=st.booleans(),
)
def test_error_measures_parity(data, name, per_target):
    """Same number (up to the order of float sums) or the same error with the same global index."""
    y, p, chunks, empty = data
    func = getattr(pm, name)
    expected = _outcome(func, y, p, per_target=per_target)
    dy = _with_empty_chunks(y, chunks) if empty else da.from_array(y, chunks=(chunks,) + y.shape[1:])
    exact = name in ("zero_one_error", "worst_case_error")
    _assert_same(_outcome(func, dy, p, per_target=per_target), expected, rtol=0 if exact else 1e-13)


def test_rms_error_does_not_overflow_or_underflow_on_dask():
    for scale in (1e200, 1e-170, 1e-310):
        y = np.array([scale, 0.0, -scale, 0.5 * scale])
        p = np.zeros(4)
        expected = pm.rms_error(y, p)
        assert np.isfinite(expected) and expected > 0
        got = pm.rms_error(da.from_array(y, chunks=1), p)
        np.testing.assert_allclose(got, expected, rtol=1e-15)
    two = np.array([[1e200, 1e-200], [-1e200, 3e-200]])
    np.testing.assert_allclose(
        pm.rms_error(da.from_array(two, chunks=(1, 2)), np.zeros((2, 2)), per_target=True),
        pm.rms_error(two, np.zeros((2, 2)), per_target=True),
        rtol=1e-15,
    )
    assert pm.rms_error(da.from_array(two, chunks=(1, 2)), np.zeros((2, 2))) == pytest.approx(1e200, rel=1e-15)


def test_measures_take_arrays_with_empty_and_unknown_chunks():
    rng = np.random.default_rng(12)
    x = da.from_array(rng.random(200), chunks=10)
    picked = x[x > 0.5]  # unknown chunk sizes, some chunks may be empty
    y, p = picked, picked * 0.5
    got = [pm.absolute_error(y, p), pm.rms_error(y, p), pm.worst_case_error(y, p), pm.zero_one_error(y, p)]
    yy, pp = y.compute(), p.compute()
    expected = [pm.absolute_error(yy, pp), pm.rms_error(yy, pp), pm.worst_case_error(yy, pp), pm.zero_one_error(yy, pp)]
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    empty = _with_empty_chunks(yy, (3, len(yy) - 3))
    assert pm.best_constant(empty, "absolute") == pm.best_constant(yy, "absolute")
    assert pm.log_loss(_with_empty_chunks((yy > 0.7).astype(np.int8), (5, len(yy) - 5)), pp) == pm.log_loss(
        (yy > 0.7).astype(np.int8), pp
    )


def test_measures_from_a_dask_dataframe_with_unknown_sizes():
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"y": np.arange(40.0) ** 2, "p": np.arange(40.0)})
    ddf = dd.from_pandas(frame, npartitions=4)
    ddf = ddf[ddf.y % 3 != 0]  # partitions of unknown length
    expected = pm.rms_error(frame.y[frame.y % 3 != 0].to_numpy(), frame.p[frame.y % 3 != 0].to_numpy())
    np.testing.assert_allclose(pm.rms_error(ddf.y, ddf.p), expected, rtol=1e-14)


def _same_error(func, memory_args, dask_args, **kwargs):
    with pytest.raises(ValueError) as memory:
        func(*memory_args, **kwargs)
    with pytest.raises(ValueError) as on_dask:
        func(*dask_args, **kwargs)
    assert str(on_dask.value) == str(memory.value)
    return str(memory.value)


def test_errors_report_the_global_index():
    y = np.linspace(0.0, 1.0, 40)
    y[33] = np.nan
    p = np.full(40, 0.5)
    dy = da.from_array(y, chunks=7)
    assert "first at flat index 33" in _same_error(pm.absolute_error, (y, p), (dy, p))
    assert "first at flat index 33" in _same_error(pm.paired_evaluation, (p, y), (p, dy))
    assert "first at flat index 33" in _same_error(pm.best_constant, (y,), (dy,), loss="squares")
    assert "first at flat index 33" in _same_error(pm.log_loss, ((p > 0).astype(int), y), ((p > 0).astype(int), dy))
    bits = (np.arange(40) % 2).astype(np.int8)
    bits[33] = 3
    assert "at index 33" in _same_error(pm.log_loss, (bits, p), (da.from_array(bits, chunks=7), p))
    assert "at index 33" in _same_error(pm.best_constant, (bits,), (da.from_array(bits, chunks=7),), loss="log_loss")
    probabilities = np.full(40, 0.5)
    probabilities[33] = 1.5
    assert "at index 33" in _same_error(
        pm.log_loss, (bits % 2, probabilities), (bits % 2, da.from_array(probabilities, chunks=7))
    )
    labels = (np.arange(80).reshape(40, 2) % 2).astype(np.int8)
    labels[33, 1] = 2
    assert "at index (33, 1)" in _same_error(
        pm.multilabel_counts, (labels, labels % 2), (da.from_array(labels, chunks=(7, 2)), labels % 2)
    )
    matrix = np.random.default_rng(13).random((40, 3))
    matrix[33, 2] = np.inf
    assert "first at flat index 101" in _same_error(
        pm.two_vs_two, (matrix, matrix + 1), (da.from_array(matrix, chunks=(7, 3)), matrix + 1)
    )
    assert "first at flat index 101" in _same_error(
        pm.crossmatch_resample,
        (matrix, matrix + 1),
        (da.from_array(matrix, chunks=(7, 3)), matrix + 1),
        sample_size=5,
        n_resamples=2,
    )


def test_two_vs_two_euclidean_float32_near_its_limit():
    rng = np.random.default_rng(14)
    y = (rng.standard_normal((12, 3)) * 1e30).astype(np.float32)
    p = (y + rng.standard_normal((12, 3)).astype(np.float32) * np.float32(1e29)).astype(np.float32)
    for metric in ("euclidean", "sqeuclidean"):
        expected = pm.two_vs_two(y, p, metric=metric)
        assert pm.two_vs_two(da.from_array(y, chunks=(5, 3)), p, metric=metric) == expected
    too_big = y.copy()
    too_big[9, 0] = np.finfo(np.float32).max
    _same_error(pm.two_vs_two, (too_big, p), (da.from_array(too_big, chunks=(5, 3)), p), metric="euclidean")


def test_nothing_rankable_warnings_point_at_the_callers_line():
    scores, labels = np.arange(6.0), np.zeros(6)
    for args in ((labels, scores), (labels, da.from_array(scores, chunks=2))):
        with pytest.warns(RuntimeWarning, match="nothing is rankable") as records:
            pm.paired_evaluation(*args)
        assert {r.filename for r in records} == {__file__}
        stacked = da.stack([args[1], args[1]]) if isinstance(args[1], da.Array) else [args[1], args[1]]
        with pytest.warns(RuntimeWarning, match="nothing is rankable") as records:
            pm.compare_models(args[0], stacked)
        assert {r.filename for r in records} == {__file__}


@settings(max_examples=10, **SETTINGS)
@given(data=paired_data(max_n=25), empty=st.booleans())
def test_paired_evaluation_parity_with_empty_chunks(data, empty):
    scores, labels, min_dist, chunks = data
    expected = pm.paired_evaluation(labels, scores, min_dist=min_dist, warn=False, variance=True)
    ds = _with_empty_chunks(scores, chunks) if empty else da.from_array(scores, chunks=(chunks,))
    got = pm.paired_evaluation(labels, ds, min_dist=min_dist, warn=False, variance=True)
    assert (got.n_rankable, got.n_correct, got.n_tied, got.n_incorrect) == (
        expected.n_rankable,
        expected.n_correct,
        expected.n_tied,
        expected.n_incorrect,
    )
    np.testing.assert_allclose(got.confidence_interval(), expected.confidence_interval(), rtol=1e-12)


def test_multilabel_counts_with_empty_chunks():
    rng = np.random.default_rng(15)
    t = rng.random((30, 4)) < 0.4
    p = rng.random((30, 4)) < 0.4
    assert pm.multilabel_counts(_with_empty_chunks(t, (1, 14, 15)), p) == pm.multilabel_counts(t, p)


@settings(max_examples=10, **SETTINGS)
@given(
    data=two_vs_two_data(),
    metric=st.sampled_from(["cosine", "correlation", "euclidean", "sqeuclidean"]),
    scale=st.sampled_from([1e-300, 1e-30, 1.0, 1e30, 1e300, "float32 max"]),
    empty=st.booleans(),
)
def test_two_vs_two_parity_across_magnitudes(data, metric, scale, empty):
    """Same result or the same error at every magnitude the dtype holds."""
    y, p, chunks = data
    if scale == "float32 max":
        y, p = (
            (y / 8 * np.finfo(np.float32).max).astype(np.float32),
            (p / 8 * np.finfo(np.float32).max).astype(np.float32),
        )
    else:
        y, p = y.astype(np.float64) * scale, p.astype(np.float64) * scale
    expected = _outcome(pm.two_vs_two, y, p, metric=metric, ties="half")
    dy = _with_empty_chunks(y, chunks) if empty else da.from_array(y, chunks=(chunks, -1))
    assert _outcome(pm.two_vs_two, dy, p, metric=metric, ties="half") == expected


@st.composite
def likelihood_inputs(draw):
    n = draw(st.integers(1, 25))
    shape = (n, draw(st.integers(1, 3))) if draw(st.booleans()) else (n,)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    y = rng.integers(0, 2, shape).astype(draw(st.sampled_from([np.int8, np.int64, np.float32, np.float64, bool])))
    p = rng.choice([0.0, 1e-300, 0.3, 1.0 - 1e-16, 1.0], shape).astype(draw(st.sampled_from([np.float32, np.float64])))
    flaw = draw(st.sampled_from([None, "label 2", "nan probability", "probability 1.5"]))
    spot = int(rng.integers(0, y.size))
    if flaw == "label 2" and y.dtype != bool:
        y.ravel()[spot] = 2
    elif flaw == "nan probability":
        p.ravel()[spot] = np.nan
    elif flaw == "probability 1.5":
        p.ravel()[spot] = 1.5
    return y, p, draw(chunkings(n)), draw(st.booleans())


@settings(max_examples=20, **SETTINGS)
@given(
    data=likelihood_inputs(),
    name=st.sampled_from(["log_loss", "log_likelihood", "likelihood"]),
    per_target=st.booleans(),
    eps=st.sampled_from([None, 1e-3]),
)
def test_likelihood_family_parity(data, name, per_target, eps):
    y, p, chunks, empty = data
    func = getattr(pm, name)
    dy = _with_empty_chunks(y, chunks) if empty else da.from_array(y, chunks=(chunks,) + y.shape[1:])
    expected = _outcome(func, y, p, per_target=per_target, eps=eps)
    got = _outcome(func, dy, p, per_target=per_target, eps=eps)
    if name == "likelihood" and not isinstance(expected, tuple):
        got, expected = got.log, expected.log
    _assert_same(got, expected, rtol=1e-13)


@settings(max_examples=15, **SETTINGS)
@given(
    n=st.integers(1, 25),
    labels=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    flaw=st.booleans(),
    empty=st.booleans(),
    dtype=st.sampled_from([bool, np.int64, np.float32]),
)
def test_multilabel_counts_parity(n, labels, seed, flaw, empty, dtype):
    rng = np.random.default_rng(seed)
    t = (rng.random((n, labels)) < 0.4).astype(dtype)
    p = (rng.random((n, labels)) < 0.4).astype(dtype)
    if flaw and dtype is not bool:
        t[rng.integers(0, n), rng.integers(0, labels)] = 3
    chunks = (n,) if n < 2 else (1, n - 1)
    dt = _with_empty_chunks(t, chunks) if empty else da.from_array(t, chunks=(chunks, labels))
    assert _outcome(pm.multilabel_counts, dt, p, false_pos=2.0) == _outcome(pm.multilabel_counts, t, p, false_pos=2.0)


@pytest.mark.parametrize("values", [np.array([1 + 1j, 2]), np.array(["a", "b"]), np.array([1, 2], dtype="M8[ns]")])
def test_non_numeric_dtypes_get_the_in_memory_type_error(values):
    with pytest.raises(TypeError) as memory:
        pm.absolute_error(values, np.zeros(2))
    with pytest.raises(TypeError) as on_dask:
        pm.absolute_error(da.from_array(values, chunks=1), np.zeros(2))
    assert str(on_dask.value) == str(memory.value)
