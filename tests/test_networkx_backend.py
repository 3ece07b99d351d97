"""The networkx backend: exact max_weight_matching / min_weight_matching against networkx."""

import json
import math
import os
import subprocess
import sys
import textwrap
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

nx = pytest.importorskip("networkx", minversion="3.4")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from pairmetrics import networkx_backend as nb  # noqa: E402

nb._register_without_entry_points()


@pytest.fixture(autouse=True)
def _quiet_conversion_cache():
    """The tests call several functions on one graph: networkx notes each reuse of its conversion cache."""
    nx.config.warnings_to_ignore.add("cache")
    yield
    nx.config.warnings_to_ignore.discard("cache")


SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)
HERE = Path(__file__).resolve().parent


def exact(x):
    if isinstance(x, np.floating):
        return Fraction(float(x))
    if isinstance(x, np.integer):
        return Fraction(int(x))
    return Fraction(x)


def exact_weight(G, matching, weight="weight"):
    if weight is None:
        return Fraction(len(matching))
    return sum((exact(G[u][v].get(weight, 1)) for u, v in matching), Fraction(0))


def integer_copy(G):
    """G with every weight times one power of two: exact Python ints, on which networkx computes exactly.

    (On Fractions networkx is not exact: it halves slacks with ``/ 2.0``.)
    """
    values = {(u, v): exact(w) for u, v, w in G.edges(data="weight", default=1)}
    den = 1
    for q in values.values():
        den = math.lcm(den, q.denominator)
    Q = nx.Graph()
    Q.add_nodes_from(G)
    Q.add_weighted_edges_from((u, v, int(q * den)) for (u, v), q in values.items())
    return Q, den


def all_matchings(G):
    """Every matching of a small graph (self-loops excluded)."""
    edges = [(u, v) for u, v in G.edges() if u != v]

    def rec(i, used):
        if i == len(edges):
            yield []
            return
        yield from rec(i + 1, used)
        u, v = edges[i]
        if u not in used and v not in used:
            for rest in rec(i + 1, used | {u, v}):
                yield [(u, v), *rest]

    return list(rec(0, frozenset()))


def brute_force(G, mode, weight="weight"):
    """Exact optimum (cardinality, weight) by enumeration: mode 'max', 'maxcard' or 'min'."""
    best = None
    for M in all_matchings(G):
        w = exact_weight(G, M, weight)
        key = (0, w) if mode == "max" else (len(M), w if mode == "maxcard" else -w)
        if best is None or key > best:
            best = key
    return best


def check_matching(G, M):
    assert isinstance(M, set)
    seen = set()
    for e in M:
        assert isinstance(e, tuple) and len(e) == 2
        u, v = e
        assert G.has_edge(u, v) and u != v
        assert u not in seen and v not in seen
        seen.update(e)
    assert nx.is_matching(G, M)


def check_against_brute_force(G, weight="weight"):
    for mode in ("max", "maxcard", "min"):
        if mode == "min":
            M = nx.min_weight_matching(G, weight=weight, backend="pairmetrics")
        else:
            M = nx.max_weight_matching(G, maxcardinality=mode == "maxcard", weight=weight, backend="pairmetrics")
        check_matching(G, M)
        card, best = brute_force(G, mode, weight)
        w = exact_weight(G, M, weight)
        if mode == "max":
            assert w == best
        else:
            assert len(M) == card
            assert w == (best if mode == "maxcard" else -best)


weights_int = st.integers(-20, 40)
weights_float = st.floats(-3, 10, allow_nan=False, width=64) | st.sampled_from([5e-324, 1e-300, -1e-310, 1 + 2**-52])
weights_few = st.sampled_from([0.1, 0.2, 0.3, 0.7, 1.0, 1e-9, 2.5])


@st.composite
def small_graphs(draw, weights):
    n = draw(st.integers(0, 8))
    G = nx.Graph()
    G.add_nodes_from(range(n))
    pairs = [(i, j) for i in range(n) for j in range(i, n)]
    chosen = draw(st.lists(st.sampled_from(pairs), max_size=14, unique=True)) if pairs else []
    for u, v in chosen:
        if draw(st.integers(0, 9)) == 0:
            G.add_edge(u, v)  # missing weight: counts as 1
        else:
            G.add_edge(u, v, weight=draw(weights))
    return G


@SETTINGS
@given(small_graphs(weights_int))
def test_integer_weights_match_brute_force(G):
    check_against_brute_force(G)


@SETTINGS
@given(small_graphs(weights_float))
def test_float_weights_match_brute_force(G):
    check_against_brute_force(G)


@SETTINGS
@given(small_graphs(weights_few))
def test_tied_decimal_floats_match_brute_force(G):
    check_against_brute_force(G)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    st.integers(10, 40),
    st.floats(0.05, 0.6),
    st.sampled_from(["int", "float", "few", "fraction"]),
    st.integers(0, 2**32 - 1),
)
def test_random_graphs_against_networkx(n, p, kind, seed):
    """Larger (also disconnected) graphs: same total weight and cardinality as networkx."""
    rng = np.random.default_rng(seed)
    G = nx.gnp_random_graph(n, p, seed=seed)
    G.add_nodes_from(range(n, n + 3))  # isolated vertices
    for u, v in G.edges():
        if kind == "int":
            G[u][v]["weight"] = int(rng.integers(-5, 100))
        elif kind == "float":
            G[u][v]["weight"] = float(rng.normal(3, 2))
        elif kind == "few":
            G[u][v]["weight"] = float(rng.choice([0.1, 0.3, 0.7]))
        else:
            G[u][v]["weight"] = Fraction(int(rng.integers(1, 50)), int(rng.integers(1, 7)))
    for maxcard in (False, True):
        ours = nx.max_weight_matching(G, maxcardinality=maxcard, backend="pairmetrics")
        theirs = nx.max_weight_matching(G, maxcardinality=maxcard)
        check_matching(G, ours)
        if maxcard:
            assert len(ours) == len(theirs)
        # Ours is exact; networkx's float arithmetic may only lose.
        assert exact_weight(G, ours) >= exact_weight(G, theirs) - Fraction(1, 10**9)
        assert math.isclose(float(exact_weight(G, ours)), float(exact_weight(G, theirs)), rel_tol=1e-9, abs_tol=1e-9)
    ours = nx.min_weight_matching(G, backend="pairmetrics")
    theirs = nx.min_weight_matching(G)
    check_matching(G, ours)
    assert len(ours) == len(theirs)
    assert math.isclose(float(exact_weight(G, ours)), float(exact_weight(G, theirs)), rel_tol=1e-9, abs_tol=1e-9)


def test_trivial_graphs():
    for G in (nx.Graph(), nx.empty_graph(5)):
        assert nx.max_weight_matching(G, backend="pairmetrics") == set()
        assert nx.max_weight_matching(G, maxcardinality=True, backend="pairmetrics") == set()
        assert nx.min_weight_matching(G, backend="pairmetrics") == set()
    G = nx.Graph()
    G.add_edge(0, 0, weight=100)
    assert nx.max_weight_matching(G, backend="pairmetrics") == set()
    assert nx.min_weight_matching(G, backend="pairmetrics") == set()
    G = nx.Graph()
    G.add_edge("b", "a")
    assert nx.max_weight_matching(G, backend="pairmetrics") == {("b", "a")}  # G's orientation
    assert nx.min_weight_matching(G, backend="pairmetrics") == {("b", "a")}


def test_negative_and_zero_weights():
    G = nx.Graph()
    G.add_weighted_edges_from([(1, 2, 2), (1, 3, -2), (2, 3, 1), (2, 4, -1), (3, 4, -6)])
    assert nx.max_weight_matching(G, backend="pairmetrics") == {(1, 2)}
    M = nx.max_weight_matching(G, maxcardinality=True, backend="pairmetrics")
    assert {frozenset(e) for e in M} == {frozenset((1, 3)), frozenset((2, 4))}
    G = nx.Graph()
    G.add_weighted_edges_from([(0, 1, -1), (2, 3, -5)])
    assert nx.max_weight_matching(G, backend="pairmetrics") == set()
    assert len(nx.max_weight_matching(G, maxcardinality=True, backend="pairmetrics")) == 2


def test_weight_none_and_attribute_name():
    G = nx.Graph()
    G.add_edge(1, 2, weight=5, cost=4)
    G.add_edge(2, 3, weight=11, cost=5)
    G.add_edge(3, 4, weight=5, cost=4)
    assert {frozenset(e) for e in nx.max_weight_matching(G, backend="pairmetrics")} == {frozenset((2, 3))}
    assert len(nx.max_weight_matching(G, weight=None, backend="pairmetrics")) == 2
    assert {frozenset(e) for e in nx.max_weight_matching(G, weight="cost", backend="pairmetrics")} == {
        frozenset((1, 2)),
        frozenset((3, 4)),
    }
    check_against_brute_force(G, weight="cost")
    check_against_brute_force(G, weight=None)


def test_mixed_numeric_types_are_exact():
    G = nx.Graph()
    G.add_edge("a", "b", weight=Decimal("0.1"))
    G.add_edge("b", "c", weight=Fraction(1, 3))
    G.add_edge("c", "d", weight=np.float32(0.25))
    G.add_edge("d", "a", weight=np.int64(2))
    G.add_edge("a", "c", weight=True)
    G.add_edge("b", "d", weight=2**70)  # beyond int64 and float64's exact integers
    G.add_edge("d", "e", weight=Fraction(-7, 3))
    check_against_brute_force(G)


def test_weights_closer_than_the_largest_weight_can_resolve():
    """One huge edge and a 4-cycle whose two perfect matchings differ by 2**-44: exact integers, no rounding."""
    tiny = 2.0**-45
    G = nx.Graph()
    G.add_edge(10, 11, weight=1e9)
    G.add_weighted_edges_from([(0, 1, 1 + tiny), (2, 3, 1 + tiny), (1, 2, 1 + 3 * tiny), (3, 0, 1 - tiny)])
    M = nx.min_weight_matching(G, backend="pairmetrics")
    assert {frozenset(e) for e in M} == {frozenset((10, 11)), frozenset((1, 2)), frozenset((3, 0))}
    check_against_brute_force(G)


def test_decline_reasons():
    G = nx.Graph()
    G.add_edge(0, 1, weight=float("nan"))
    with pytest.raises(NotImplementedError) as info:
        nx.max_weight_matching(G, backend="pairmetrics")
    assert "finite" in str(info.value.__cause__)  # networkx chains the backend's reason
    G = nx.Graph()
    G.add_edge(0, 1, weight="heavy")
    with pytest.raises(NotImplementedError) as info:
        nx.min_weight_matching(G, backend="pairmetrics")
    assert "type str" in str(info.value.__cause__)
    reason = nb.can_run("max_weight_matching", (G,), {"weight": lambda u, v, d: 1})
    assert isinstance(reason, str) and "attribute name" in reason
    assert nb.can_run("max_weight_matching", (G, False, "weight"), {}) is True
    assert nb.can_run("pagerank", (G,), {}) is False


def test_automatic_dispatch_and_fallback():
    """With backend_priority the backend runs by default; what it declines networkx runs."""
    G = nx.Graph()
    G.add_weighted_edges_from([(1, 2, 6), (1, 3, 2), (2, 3, 1), (2, 4, 7), (3, 5, 9), (4, 5, 3)])
    H = nx.Graph()
    H.add_edge(0, 1, weight=float("inf"))
    H.add_edge(1, 2, weight=1.0)
    saved = list(nx.config.backend_priority.algos)
    seen = []
    original = nb.BackendInterface.max_weight_matching

    def spy(*args, **kwargs):
        seen.append(args[0])
        return original(*args, **kwargs)

    try:
        nb.BackendInterface.max_weight_matching = staticmethod(spy)
        nx.config.backend_priority.algos = ["pairmetrics"]
        assert {frozenset(e) for e in nx.max_weight_matching(G)} == {frozenset((2, 4)), frozenset((3, 5))}
        assert len(seen) == 1 and isinstance(seen[0], nb.MatchingGraph)
        # The backend declines infinite weights; networkx runs its own code on them.
        assert nx.max_weight_matching(H) == nx.max_weight_matching(H, backend="networkx")
        assert len(seen) == 2
    finally:
        nx.config.backend_priority.algos = saved
        nb.BackendInterface.max_weight_matching = staticmethod(original)


def test_wrong_graph_types():
    for cls in (nx.DiGraph, nx.MultiGraph, nx.MultiDiGraph):
        G = cls()
        G.add_edge(0, 1)
        for fn in (nx.max_weight_matching, nx.min_weight_matching):
            with pytest.raises(nx.NetworkXNotImplemented):
                fn(G, backend="pairmetrics")
        converted = nb.convert_from_nx(G, edge_attrs={"weight": 1})
        with pytest.raises(nx.NetworkXNotImplemented):
            nb.max_weight_matching(converted)


def test_conversion_round_trip():
    G = nx.Graph()
    G.add_edge("x", 3, weight=2.5)
    G.add_edge(3, 3, weight=1)
    G.add_edge(3, "y")
    G.add_node("lonely")
    B = nb.convert_from_nx(G, edge_attrs={"weight": 1})
    assert B.number_of_nodes() == 4 and B.number_of_edges() == 3
    H = nb.convert_to_nx(B)
    assert set(H.nodes) == set(G.nodes)
    assert sorted(map(sorted, map(lambda e: map(str, e), H.edges()))) == sorted(
        map(sorted, map(lambda e: map(str, e), G.edges()))
    )
    assert H[3]["y"]["weight"] == 1 and H["x"][3]["weight"] == 2.5
    assert nb.convert_to_nx({(1, 2)}) == {(1, 2)}


def test_backend_info():
    info = nb.get_info()
    assert info["backend_name"] == "pairmetrics"
    assert set(info["functions"]) == {"max_weight_matching", "min_weight_matching"}
    assert "pairmetrics" in nx.utils.backends.backend_info


def test_import_does_not_load_networkx():
    code = "import sys, pairmetrics; assert 'networkx' not in sys.modules, 'networkx imported'"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def _dev_entry_points(tmp_path):
    """A dist-info with this backend's entry points, for a source checkout (nothing installed)."""
    from importlib.metadata import entry_points

    if entry_points(group="networkx.backends", name="pairmetrics"):
        return None
    info = tmp_path / "pairmetrics_source_tree-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pairmetrics-source-tree\nVersion: 0\n")
    (info / "entry_points.txt").write_text(
        textwrap.dedent(
            """\
            [networkx.backends]
            pairmetrics = pairmetrics.networkx_backend:backend_interface

            [networkx.backend_info]
            pairmetrics = pairmetrics.networkx_backend:get_info
            """
        )
    )
    return str(tmp_path)


def test_networkx_own_matching_tests_on_the_backend(tmp_path):
    """networkx's test_matching.py in its backend test mode, every call dispatched to pairmetrics."""
    report = tmp_path / "report.json"
    paths = [str(HERE), *sys.path]
    extra = _dev_entry_points(tmp_path)
    if extra:
        paths.insert(0, extra)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(p for p in paths if p),
        NETWORKX_TEST_BACKEND="pairmetrics",
        NETWORKX_FALLBACK_TO_NX="True",
        PAIRMETRICS_NX_SUITE_REPORT=str(report),
    )
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "--pyargs",
        "networkx.algorithms.tests.test_matching",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "_networkx_suite_plugin",
    ]
    out = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    tally = json.loads(report.read_text())
    on_backend = {k: v for k, v in tally.items() if v["ran"]}
    declined = [k for k, v in tally.items() if v["declined"]]
    failed = [k for k, v in tally.items() if v.get("outcome") != "passed"]
    print(
        f"\nnetworkx test_matching on the backend: {len(tally)} tests, {len(on_backend)} call "
        f"max/min_weight_matching on pairmetrics, {len(declined)} fell back, {len(failed)} not passed"
    )
    assert not failed
    assert not declined
    # Every max/min weight matching test of networkx's module runs on the backend.
    assert len(on_backend) >= 20
    assert all("TestMaxWeightMatching" in k for k in on_backend)


@settings(max_examples=6, deadline=None, derandomize=True)
@given(st.integers(12, 28), st.sampled_from([2, 5]), st.integers(0, 2**32 - 1))
def test_euclidean_complete_graphs_exact_against_rational_networkx(n, d, seed):
    """Float distances (not exactly scalable): equal, as exact rationals, to networkx run on exact integers."""
    X = np.random.default_rng(seed).normal(size=(n, d))
    G = nx.Graph()
    for i in range(n):
        for j in range(i + 1, n):
            G.add_edge(i, j, weight=float(np.sqrt(((X[i] - X[j]) ** 2).sum())))
    check_against_networkx_on_exact_integers(G)
    assert len(nx.min_weight_matching(G, backend="pairmetrics")) == n // 2


def test_pricing_on_dense_graphs_is_exact(monkeypatch):
    """Dense graphs start on their cheapest edges and add the ones the duals price out (in the C++ call)."""
    monkeypatch.setattr(nb, "_PRICE_ABOVE", 0)
    monkeypatch.setattr(nb, "_START_NEIGHBOURS", 2)
    rounds = []
    original = nb._core._mwpm_sparse_exact

    def spy(*args, **kwargs):
        r = original(*args, **kwargs)
        rounds.append(r["rounds"])
        return r

    monkeypatch.setattr(nb._core, "_mwpm_sparse_exact", spy)
    for seed, (n, d) in enumerate([(40, 2), (41, 3), (60, 2)]):
        X = np.random.default_rng(seed).normal(size=(n, d))
        G = nx.Graph()
        for i in range(n):
            for j in range(i + 1, n):
                G.add_edge(i, j, weight=float(np.sqrt(((X[i] - X[j]) ** 2).sum())))
        Q, den = integer_copy(G)
        ours = nx.min_weight_matching(G, backend="pairmetrics")
        best = nx.min_weight_matching(Q, backend="networkx")
        assert len(ours) == n // 2
        assert exact_weight(G, ours) * den == exact_weight(Q, best)
        G2 = nx.Graph()
        G2.add_weighted_edges_from((u, v, int(1000 * w)) for u, v, w in G.edges(data="weight"))
        check_against_networkx_integer(G2)
    assert max(rounds) > 1, "no pricing round added edges"


def check_against_networkx_integer(G):
    for maxcard in (False, True):
        ours = nx.max_weight_matching(G, maxcardinality=maxcard, backend="pairmetrics")
        theirs = nx.max_weight_matching(G, maxcardinality=maxcard, backend="networkx")
        assert exact_weight(G, ours) == exact_weight(G, theirs) and len(ours) >= len(theirs) * maxcard
    assert exact_weight(G, nx.min_weight_matching(G, backend="pairmetrics")) == exact_weight(
        G, nx.min_weight_matching(G, backend="networkx")
    )


# --------------------------------------------------- exact beyond float64


def test_huge_integers_that_tie_in_float64():
    """Weights 2**64 + small: float64 cannot tell them apart; cardinality and weight must still be exact."""
    big = 2**64
    G = nx.Graph()
    G.add_weighted_edges_from(
        [(0, 3, big + 914), (0, 4, big + 839), (1, 2, big + 354), (1, 3, big + 143), (1, 5, big + 353)]
    )
    M = nx.max_weight_matching(G, maxcardinality=True, backend="pairmetrics")
    assert len(M) == len(nx.max_weight_matching(G, maxcardinality=True, backend="networkx")) == 2
    check_against_brute_force(G)


def test_triangle_with_one_huge_weight():
    G = nx.Graph()
    G.add_weighted_edges_from([(0, 1, 2**63 + 85), (1, 2, 888), (0, 2, 17)])
    assert nx.min_weight_matching(G, backend="pairmetrics") in ({(0, 2)}, {(2, 0)})
    check_against_brute_force(G)


def test_fractions_closer_than_float64_resolves():
    eps = Fraction(1, 2**80)
    G = nx.Graph()
    G.add_weighted_edges_from([(0, 1, 1 + eps), (2, 3, 1 + eps), (1, 2, 1 + 3 * eps), (3, 0, 1 - eps)])
    check_against_brute_force(G)
    M = nx.min_weight_matching(G, backend="pairmetrics")
    assert {frozenset(e) for e in M} == {frozenset((1, 2)), frozenset((3, 0))}


@pytest.mark.parametrize("scale", [2**1100, Decimal("1e400")])
def test_weights_beyond_the_float64_range(scale):
    G = nx.Graph()
    G.add_weighted_edges_from([(0, 1, 3 * scale), (1, 2, 5 * scale), (2, 3, 3 * scale), (3, 0, 1)])
    check_against_brute_force(G)


huge_ints = st.integers(0, 3000).map(lambda x: 2**64 + x) | st.integers(-(2**70), 2**70)
close_fractions = st.integers(-50, 50).map(lambda k: 1 + Fraction(k, 2**70)) | st.fractions(-10, 10, max_denominator=97)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(small_graphs(huge_ints | close_fractions))
def test_huge_and_rational_weights_match_brute_force(G):
    check_against_brute_force(G)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(st.integers(8, 30), st.floats(0.2, 0.9), st.sampled_from(["huge", "fraction"]), st.integers(0, 2**32 - 1))
def test_huge_and_rational_weights_against_networkx_on_integers(n, p, kind, seed):
    """Differential: the same exact weight and cardinality as networkx run on the exact integers."""
    rng = np.random.default_rng(seed)
    G = nx.gnp_random_graph(n, p, seed=seed)
    for u, v in G.edges():
        if kind == "huge":
            G[u][v]["weight"] = 2**64 + int(rng.integers(0, 1000))
        else:
            G[u][v]["weight"] = 1 + Fraction(int(rng.integers(-40, 40)), 2**70 + int(rng.integers(1, 5)))
    check_against_networkx_on_exact_integers(G)


def check_against_networkx_on_exact_integers(G):
    """The same exact weight (and cardinality where it is maximised) as networkx run on G's exact integers."""
    Q, den = integer_copy(G)
    for maxcard in (False, True):
        ours = nx.max_weight_matching(G, maxcardinality=maxcard, backend="pairmetrics")
        best = nx.max_weight_matching(Q, maxcardinality=maxcard, backend="networkx")
        check_matching(G, ours)
        assert exact_weight(G, ours) * den == exact_weight(Q, best)
        assert not maxcard or len(ours) == len(best)
    ours = nx.min_weight_matching(G, backend="pairmetrics")
    best = nx.min_weight_matching(Q, backend="networkx")
    assert len(ours) == len(best)
    assert exact_weight(G, ours) * den == exact_weight(Q, best)
