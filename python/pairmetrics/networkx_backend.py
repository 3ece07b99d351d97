"""networkx backend ``pairmetrics``: exact weighted matching through the blossom solver.

Once pairmetrics is installed, networkx finds this backend through the
``networkx.backends`` / ``networkx.backend_info`` entry points::

    nx.max_weight_matching(G, maxcardinality=False, weight="weight", backend="pairmetrics")
    nx.min_weight_matching(G, weight="weight", backend="pairmetrics")

or, for every call, ``nx.config.backend_priority.algos = ["pairmetrics"]``
(environment: ``NETWORKX_BACKEND_PRIORITY=pairmetrics``).

Semantics are networkx's: undirected graphs, self-loops ignored, a missing
weight attribute counts as 1 (``weight=None``: every edge weighs 1),
``min_weight_matching`` is the minimum-weight matching among the
maximum-cardinality matchings (computed from the original weights, exactly;
networkx itself transforms them to ``1 + max weight - weight`` first), and
directed and multi-graphs raise ``NetworkXNotImplemented`` as in networkx. The
result is a set of 2-tuples oriented as the edges of ``G``.

Exactness. Every weight (int, bool, float, numpy scalars, ``Fraction``,
``Decimal``) is turned into an exact integer: all of them times the least
common denominator (a power of two for floats). The reductions below only
add, subtract and divide by the gcd, so the C++ solve sees the exact problem:
int64 duals when the integer costs fit, 128-bit duals otherwise, and
networkx's own algorithm on the exact Python integers beyond 128 bits (that
fallback is exact too, only slower). Ties are resolved by integers, never by
float64. Maximum-weight matching is reduced to a minimum-weight perfect
matching: directly on ``G`` (plus a ghost vertex for an odd number of
vertices) when a maximum-cardinality matching is wanted and ``G`` has a
(near-)perfect matching, otherwise on two copies of ``G`` joined vertex to
twin, with a per-edge bonus that makes cardinality dominate when it is asked
for. The C++ call prices dense graphs (it starts on each vertex's cheapest
edges and adds every edge the duals price out) and certifies its answer in
its integers (every reduced cost >= 0, matched edges tight, full blossoms).
Weights that are not finite real numbers make the backend decline
(``NotImplementedError`` with the reason), and networkx then uses its own
implementation when fallback is allowed.

networkx is imported only when this module is loaded (by networkx itself);
``import pairmetrics`` never imports it.
"""

from __future__ import annotations

import decimal
import math
import numbers
from fractions import Fraction
from itertools import compress
from typing import Any

import numpy as np

from . import _core

__all__ = ["BackendInterface", "MatchingGraph", "backend_interface", "get_info"]

BACKEND_NAME = "pairmetrics"
_FUNCTIONS = ("max_weight_matching", "min_weight_matching")

# Dense graphs (more than this many edges per vertex) are solved by pricing,
# starting from each vertex's _START_NEIGHBOURS cheapest edges.
_PRICE_ABOVE = 64
_START_NEIGHBOURS = 10


def get_info() -> dict[str, Any]:
    """Backend metadata for the ``networkx.backend_info`` entry point."""
    note = (
        "Exact for any finite real weights (int, float, numpy scalars, Fraction, Decimal): "
        "they are scaled to exact integers and solved with int64 or 128-bit duals "
        "(networkx's own algorithm on those integers beyond 128 bits)."
    )
    return {
        "backend_name": BACKEND_NAME,
        "project": "pairmetrics",
        "package": "pairmetrics",
        "url": "https://github.com/pairmetrics/pairmetrics",
        "short_summary": "Exact C++ blossom matching (min/max weight matching).",
        "functions": {
            "max_weight_matching": {
                "url": "https://github.com/pairmetrics/pairmetrics#drop-in-backends",
                "additional_docs": note,
            },
            "min_weight_matching": {
                "url": "https://github.com/pairmetrics/pairmetrics#drop-in-backends",
                "additional_docs": note + " Computed from the original weights (networkx transforms them first).",
            },
        },
        "default_config": {},
    }


class MatchingGraph:
    """A networkx graph converted for this backend: node list, edge index arrays, raw weights.

    ``eu``, ``ev`` index ``nodes`` and list the edges in ``G.edges`` order and
    orientation (self-loops included; every parallel or antiparallel edge of a
    multi- or directed graph included); ``weights[attr]`` holds the raw
    attribute values (the default where missing).
    """

    __networkx_backend__ = BACKEND_NAME

    def __init__(self, nodes, eu, ev, weights, *, directed, multigraph, graph=None):
        self.nodes = nodes
        self.eu = eu
        self.ev = ev
        self.weights = weights
        self.directed = directed
        self.multigraph = multigraph
        self.graph = {} if graph is None else graph

    def is_directed(self) -> bool:
        return self.directed

    def is_multigraph(self) -> bool:
        return self.multigraph

    def number_of_nodes(self) -> int:
        return len(self.nodes)

    def number_of_edges(self) -> int:
        return int(self.eu.shape[0])

    def __len__(self) -> int:
        return len(self.nodes)

    def __repr__(self) -> str:
        return f"<MatchingGraph: {len(self.nodes)} nodes, {self.number_of_edges()} edges>"


def _simple_edges(G, attrs):
    """Edges of a simple undirected graph by adjacency rows, in ``G.edges`` order."""
    nodes = list(G)
    index = {node: i for i, node in enumerate(nodes)}
    plain = all(type(x) is int for x in nodes) and nodes == list(range(len(nodes)))
    us: list[Any] = []
    vs: list[Any] = []
    ws: dict[Any, list[Any]] = {a: [] for a in attrs}
    for i, (_node, nbrs) in enumerate(G.adj.items()):
        if not nbrs:
            continue
        keys = nbrs.keys()
        if plain:
            j = np.fromiter(keys, dtype=np.int64, count=len(nbrs))
        else:
            j = np.fromiter(map(index.__getitem__, keys), dtype=np.int64, count=len(nbrs))
        keep = j >= i  # each edge once, from its first-listed end (as G.edges does)
        if not keep.any():
            continue
        all_kept = bool(keep.all())
        us.append(np.full(int(keep.sum()), i, dtype=np.int64))
        vs.append(j if all_kept else j[keep])
        kept = nbrs.values() if all_kept else list(compress(nbrs.values(), keep.tolist()))
        for attr, default in attrs.items():
            ws[attr].extend([dd.get(attr, default) for dd in kept])
    eu = np.concatenate(us) if us else np.empty(0, dtype=np.int64)
    ev = np.concatenate(vs) if vs else np.empty(0, dtype=np.int64)
    return nodes, eu, ev, ws


def _general_edges(G, attrs):
    """Edges of any graph through ``G.edges`` (directed and multi-graphs)."""
    nodes = list(G)
    index = {node: i for i, node in enumerate(nodes)}
    edges = list(G.edges(data=True))
    m = len(edges)
    eu = np.fromiter((index[e[0]] for e in edges), dtype=np.int64, count=m)
    ev = np.fromiter((index[e[1]] for e in edges), dtype=np.int64, count=m)
    ws = {a: [e[2].get(a, d) for e in edges] for a, d in attrs.items()}
    return nodes, eu, ev, ws


def convert_from_nx(
    G,
    edge_attrs=None,
    node_attrs=None,
    preserve_edge_attrs=False,
    preserve_node_attrs=False,
    preserve_graph_attrs=False,
    name=None,
    graph_name=None,
):
    """Convert a networkx graph; only the requested edge attributes are read."""
    if isinstance(edge_attrs, str):
        edge_attrs = {edge_attrs: 1}
    attrs = dict(edge_attrs) if edge_attrs else {}
    if G.is_directed() or G.is_multigraph():
        nodes, eu, ev, ws = _general_edges(G, attrs)
    else:
        nodes, eu, ev, ws = _simple_edges(G, attrs)
    return MatchingGraph(
        nodes,
        eu,
        ev,
        ws,
        directed=G.is_directed(),
        multigraph=G.is_multigraph(),
        graph=dict(G.graph) if preserve_graph_attrs else None,
    )


def convert_to_nx(obj, *, name=None):
    """Results are already networkx types (sets of tuples); graphs are not produced."""
    if isinstance(obj, MatchingGraph):
        import networkx as nx

        H = nx.MultiGraph() if obj.multigraph else nx.Graph()
        if obj.directed:
            H = nx.MultiDiGraph() if obj.multigraph else nx.DiGraph()
        H.add_nodes_from(obj.nodes)
        nodes = obj.nodes
        for k, (i, j) in enumerate(zip(obj.eu.tolist(), obj.ev.tolist())):
            data = {a: w[k] for a, w in obj.weights.items()}
            H.add_edge(nodes[i], nodes[j], **data)
        H.graph.update(obj.graph)
        return H
    return obj


def _argument(name, args, kwargs, key, position, default):
    if key in kwargs:
        return kwargs[key]
    return args[position] if len(args) > position else default


def can_run(name, args, kwargs):
    """Argument-level checks (weight values are inspected when the call runs)."""
    if name not in _FUNCTIONS:
        return False
    weight = _argument(name, args, kwargs, "weight", 2 if name == "max_weight_matching" else 1, "weight")
    if callable(weight):
        return "weight must be an edge attribute name (networkx's matching reads G[u][v].get(weight, 1))"
    try:
        hash(weight)
    except TypeError:
        return "weight must be a hashable edge attribute name"
    return True


def should_run(name, args, kwargs):
    return True


# ---------------------------------------------------------------------------
# Exact integer weights


def _fraction(x) -> Fraction:
    """The exact value of one weight; NotImplementedError (the backend declines) for what is not a finite real."""
    if isinstance(x, (bool, np.bool_, int, np.integer)):
        return Fraction(int(x))
    if isinstance(x, (float, np.floating, decimal.Decimal)):
        if not (x.is_finite() if isinstance(x, decimal.Decimal) else math.isfinite(x)):
            raise NotImplementedError("edge weights must be finite (found nan or inf)")
        return Fraction(*x.as_integer_ratio())
    if isinstance(x, numbers.Rational):
        return Fraction(int(x.numerator), int(x.denominator))
    raise NotImplementedError(
        f"edge weights of type {type(x).__name__} are not supported (int, float, numpy scalars, Fraction, Decimal)"
    )


def _exact_integers(raw) -> np.ndarray:
    """The weights times one common denominator: int64 when every value fits far inside it, else Python ints."""
    types = set(map(type, raw))
    if types <= {bool, int, np.bool_} | {t for t in types if issubclass(t, np.integer)}:
        values = [int(x) for x in raw]
    elif types <= {float, np.float64, np.float32, np.float16}:
        a = np.array(raw, dtype=np.float64)
        if not np.isfinite(a).all():
            raise NotImplementedError("edge weights must be finite (found nan or inf)")
        mant, exp = np.frexp(a)
        mant = (mant * 2.0**53).astype(np.int64)  # exact: a = mant * 2**(exp - 53)
        exp = exp.astype(np.int64) - 53
        low = int(exp[mant != 0].min()) if (mant != 0).any() else 0
        shift = np.where(mant != 0, exp - low, 0)
        if int(shift.max()) <= 8:
            return mant << shift
        values = [m << s for m, s in zip(mant.tolist(), shift.tolist())]
    else:
        fractions = [_fraction(x) for x in raw]
        den = math.lcm(*(f.denominator for f in fractions)) if fractions else 1
        values = [f.numerator * (den // f.denominator) for f in fractions]
    return _compact(values)


def _compact(values) -> np.ndarray:
    """Python ints as an int64 array when all are below 2**62 in magnitude, else an object array."""
    if all(-(2**62) < x < 2**62 for x in values):
        return np.array(values, dtype=np.int64)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _solve_min_perfect(nv, eu, ev, cost):
    """Exact min-weight perfect matching in C++ on integer costs >= 0: mate, or None when there is none.

    The costs are divided by their gcd; int64 duals when they fit, else 128-bit; beyond 128 bits the
    caller falls back to networkx's own algorithm (raises _TooWide).
    """
    cost = np.asarray(cost)
    g = int(np.gcd.reduce(cost)) if cost.size else 0
    if g > 1:
        cost = cost // g
    top = int(cost.max()) if cost.size else 0
    args: dict[str, Any] = {
        "n": int(nv),
        "eu": np.asarray(eu, dtype=np.int32),
        "ev": np.asarray(ev, dtype=np.int32),
        "price_above": _PRICE_ABOVE,
        "start_edges": _START_NEIGHBOURS,
    }
    if top <= _core._mwpm_max_weight(int(nv)):
        r = _core._mwpm_sparse_exact(w_hi=cost.astype(np.int64), w_lo=np.zeros(0, np.uint64), wide=False, **args)
    else:
        hi, lo = _core._mwpm_max_weight_128(int(nv))
        if top > (hi << 64) + lo:
            raise _TooWide
        big = cost.astype(object)
        r = _core._mwpm_sparse_exact(
            w_hi=(big >> 64).astype(np.int64), w_lo=(big & (2**64 - 1)).astype(np.uint64), wide=True, **args
        )
    return r["mate"].astype(np.int64) if r["perfect"] else None


class _TooWide(Exception):
    """Integer costs beyond the 128-bit solver's range."""


# ---------------------------------------------------------------------------
# Reductions to a perfect matching


def _direct(n, lu, lv, cost):
    """Maximum-cardinality matching of least cost on G (+ a ghost when n is odd); None without a near-perfect one."""
    if n % 2:
        lu = np.concatenate([lu, np.arange(n)])
        lv = np.concatenate([lv, np.full(n, n)])
        cost = np.concatenate([cost, np.zeros(n, dtype=cost.dtype)])
    mate = _solve_min_perfect(n + n % 2, lu, lv, cost)
    return None if mate is None else mate[:n]


def _doubled(n, lu, lv, gain, maxcard):
    """Two copies of G joined vertex to twin: a matching of greatest gain (of greatest cardinality first).

    A matching M used in both copies costs n (T + B) - 2 (g(M) + B |M|) with edge costs T - g and
    twin edges T + B: B = 0 maximises the gain; B > n T / 2 makes cardinality dominate.
    """
    top = int(gain.max())
    bonus = (n // 2) * top + 1 if maxcard else 0
    wide = (top + bonus) >= 2**62
    gain = gain.astype(object) if wide else gain
    cost = top - gain
    twin = np.full(n, top + bonus, dtype=object if wide else np.int64)
    su = np.concatenate([lu, lu + n, np.arange(n)])
    sv = np.concatenate([lv, lv + n, np.arange(n) + n])
    mate = _solve_min_perfect(2 * n, su, sv, np.concatenate([cost, cost, twin]))
    if mate is None:
        raise RuntimeError("matching: the doubled graph has no perfect matching (internal error)")
    mate = mate[:n].copy()
    mate[mate >= n] = -1
    return mate


def _networkx_on_integers(n, lu, lv, gain, maxcard):
    """networkx's own blossom algorithm on the exact integer gains (exact in Python integers)."""
    import networkx as nx

    H = nx.Graph()
    H.add_nodes_from(range(n))
    H.add_weighted_edges_from(zip(lu.tolist(), lv.tolist(), (int(x) for x in gain)))
    mate = np.full(n, -1, dtype=np.int64)
    for a, b in nx.max_weight_matching(H, maxcardinality=maxcard, backend="networkx"):
        mate[a], mate[b] = b, a
    return mate


def _run(graph: MatchingGraph, weight, mode: str):
    """mode: 'max' (any cardinality), 'maxcard' or 'min' (both maximum cardinality)."""
    eu, ev = graph.eu, graph.ev
    raw = graph.weights[weight] if weight is not None else None
    if weight is not None and weight not in graph.weights:
        raise NotImplementedError(f"edge attribute {weight!r} was not converted")
    keep = eu != ev  # self-loops never match
    q = _exact_integers(raw) if raw is not None else np.ones(eu.shape[0], dtype=np.int64)
    if mode == "max":
        keep &= np.asarray(q > 0, dtype=bool)  # an edge without gain never helps
    ids = np.flatnonzero(keep)
    if ids.size == 0:
        return set()
    u, v, q = eu[ids], ev[ids], q[ids]
    if q.dtype != object and int(q.max()) - int(q.min()) >= 2**62:
        q = q.astype(object)  # differences would overflow int64
    present = np.zeros(len(graph.nodes), dtype=bool)
    present[u] = present[v] = True
    relabel = np.cumsum(present) - 1
    lu, lv, n = relabel[u], relabel[v], int(present.sum())
    # Gains >= 0 (exact integers); for 'min' the gain of an edge is how much lighter it is than the heaviest.
    gain = q if mode == "max" else (q - q.min() if mode == "maxcard" else q.max() - q)
    try:
        mate = None
        if mode != "max":
            mate = _direct(n, lu, lv, gain.max() - gain)
        if mate is None:
            mate = _doubled(n, lu, lv, gain, mode != "max")
    except _TooWide:
        mate = _networkx_on_integers(n, lu, lv, gain, mode != "max")
    return _result(graph, u, v, lu, lv, mate)


def _result(graph, u, v, lu, lv, mate):
    """Matched edges as node tuples in the orientation of G's edges."""
    matched = np.flatnonzero(mate[lu] == lv)
    nodes = graph.nodes
    return {(nodes[a], nodes[b]) for a, b in zip(u[matched].tolist(), v[matched].tolist())}


def _not_implemented_for(graph):
    import networkx as nx

    if graph.multigraph:
        raise nx.NetworkXNotImplemented("not implemented for multigraph type")
    if graph.directed:
        raise nx.NetworkXNotImplemented("not implemented for directed type")


def max_weight_matching(G, maxcardinality=False, weight="weight"):
    """networkx's ``max_weight_matching``, exact (see the module documentation)."""
    _not_implemented_for(G)
    return _run(G, weight, "maxcard" if maxcardinality else "max")


def min_weight_matching(G, weight="weight"):
    """networkx's ``min_weight_matching``: minimum weight among the maximum-cardinality matchings."""
    _not_implemented_for(G)
    return _run(G, weight, "min")


class BackendInterface:
    """The object named by the ``networkx.backends`` entry point."""

    convert_from_nx = staticmethod(convert_from_nx)
    convert_to_nx = staticmethod(convert_to_nx)
    can_run = staticmethod(can_run)
    should_run = staticmethod(should_run)
    max_weight_matching = staticmethod(max_weight_matching)
    min_weight_matching = staticmethod(min_weight_matching)


backend_interface = BackendInterface()


def _register_without_entry_points() -> bool:
    """Make networkx see this backend when pairmetrics runs from a source tree.

    An installed pairmetrics registers through entry points; a checkout used
    via ``PYTHONPATH`` has none, so tests and benchmarks call this. Returns
    True when it had to register.
    """
    from importlib.metadata import EntryPoint

    import networkx as nx

    backends = nx.utils.backends
    if BACKEND_NAME in backends.backends:
        return False
    backends.backends[BACKEND_NAME] = EntryPoint(
        name=BACKEND_NAME, value=f"{__name__}:backend_interface", group="networkx.backends"
    )
    backends.backend_info[BACKEND_NAME] = get_info()
    nx.config.backends = nx.utils.Config(**{BACKEND_NAME: nx.utils.Config()}, **nx.config.backends)
    backends._dispatchable.__call__ = backends._dispatchable._call_if_any_backends_installed
    return True
