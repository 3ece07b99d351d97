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

Exactness. The solver is an exact min-weight *perfect* matching on int64
weights. Maximum-weight matching is reduced to it: directly on ``G`` (plus a
ghost vertex for an odd number of vertices) when a maximum-cardinality
matching is wanted and ``G`` has a (near-)perfect matching, otherwise on two
copies of ``G`` joined vertex to twin by zero-gain edges, with a per-edge
bonus that makes cardinality dominate when ``maxcardinality`` is asked for.
Weights (int, bool, float, numpy scalars, ``Fraction``, ``Decimal``) are
scaled by a power of two to the solver's integer range. When that scaling is
exact (integers, dyadic floats of a moderate range) the answer is exact at
once. Otherwise the optimal dual solution of the rounded problem bounds the
edges any exactly optimal matching can use (reduced cost below the total
rounding error); every connected group of such edges that contains a cycle is
re-solved exactly, on small integer costs built from the exact weights and
that dual solution (see ``_certify``; networkx's own algorithm in rational
arithmetic only if those would not fit int64). So the matching returned is
optimal for the exact values of the weights, never an approximation. Dense
graphs are solved from each vertex's cheapest edges, adding every edge the
duals price out as improving until none is left. Weights that are
not finite real numbers make the backend decline (``NotImplementedError`` with
the reason), and networkx then uses its own implementation when fallback is
allowed.

networkx is imported only when this module is loaded (by networkx itself);
``import pairmetrics`` never imports it.
"""

from __future__ import annotations

import decimal
from itertools import compress
import math
import numbers
from fractions import Fraction

import numpy as np

from . import _core

__all__ = ["BackendInterface", "MatchingGraph", "backend_interface", "get_info"]

BACKEND_NAME = "pairmetrics"
_FUNCTIONS = ("max_weight_matching", "min_weight_matching")

# Dense graphs (more than this many edges per vertex) are solved by pricing.
_PRICE_ABOVE = 64
# ... starting from about this many of the globally cheapest edges per vertex,
# completed so that every vertex has its _START_NEIGHBOURS cheapest edges.
_START_PER_VERTEX = 16
_START_NEIGHBOURS = 10
# Floats with an integer part up to 2**53 convert to float64 exactly.
_EXACT_FLOAT_INT = 2**53


def get_info() -> dict:
    """Backend metadata for the ``networkx.backend_info`` entry point."""
    note = (
        "Exact for any finite real weights (int, float, numpy scalars, Fraction, Decimal): "
        "the blossom solver runs on int64 weights and, when they are not exactly scaled, "
        "the edges an optimal matching could use are re-solved in rational arithmetic."
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
                "additional_docs": note
                + " Computed from the original weights (networkx transforms them first).",
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
        self._values = {}

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
    us, vs, ws = [], [], {a: [] for a in attrs}
    for i, (node, nbrs) in enumerate(G.adj.items()):
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


def convert_from_nx(G, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False, preserve_node_attrs=False,
                    preserve_graph_attrs=False, name=None, graph_name=None):  # fmt: skip
    """Convert a networkx graph; only the requested edge attributes are read."""
    if isinstance(edge_attrs, str):
        edge_attrs = {edge_attrs: 1}
    attrs = dict(edge_attrs) if edge_attrs else {}
    if G.is_directed() or G.is_multigraph():
        nodes, eu, ev, ws = _general_edges(G, attrs)
    else:
        nodes, eu, ev, ws = _simple_edges(G, attrs)
    return MatchingGraph(
        nodes, eu, ev, ws, directed=G.is_directed(), multigraph=G.is_multigraph(),
        graph=dict(G.graph) if preserve_graph_attrs else None,
    )  # fmt: skip


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
# Exact weight values


class _Weights:
    """Edge weights as float64 approximations plus exact values on demand.

    ``kind`` is "int" (every value an integer in int64; ``values`` holds them
    exactly), "float" (every value a finite float or a float-exact integer;
    ``values`` exact float64) or "exact" (rationals: ``values`` are correctly
    rounded float64); ``fraction(i)`` is the exact value of edge i.
    """

    def __init__(self, raw):
        self.raw = raw
        if raw is None:
            self.kind, self.values = "int", None
            return
        types = set(map(type, raw))
        if all(issubclass(t, (bool, np.bool_, int, np.integer)) for t in types):
            try:
                self.kind, self.values = "int", np.array(raw, dtype=np.int64)
                return
            except OverflowError:
                pass
        elif all(issubclass(t, (bool, np.bool_, int, np.integer, float, np.floating)) for t in types):
            has_int = any(issubclass(t, (int, np.integer)) and not issubclass(t, bool) for t in types)
            ints = [x for x in raw if isinstance(x, (int, np.integer)) and not isinstance(x, bool)] if has_int else []
            if all(-_EXACT_FLOAT_INT <= int(x) <= _EXACT_FLOAT_INT for x in ints) and np.longdouble not in types:
                values = np.array(raw, dtype=np.float64)
                if not np.isfinite(values).all():
                    raise NotImplementedError("edge weights must be finite (found nan or inf)")
                self.kind, self.values = "float", values
                return
        fractions = []
        for x in raw:
            fractions.append(_to_fraction(x))
        self.kind = "exact"
        self._fractions = fractions
        self.values = np.array([float(f) for f in fractions], dtype=np.float64)

    def fraction(self, i) -> Fraction:
        if self.raw is None:
            return Fraction(1)
        if self.kind == "exact":
            return self._fractions[i]
        x = self.raw[i]
        return Fraction(int(x)) if self.kind == "int" else Fraction(float(x))

    def array(self, m) -> np.ndarray:
        if self.values is None:
            return np.ones(m, dtype=np.int64)
        return self.values


def _to_fraction(x) -> Fraction:
    if isinstance(x, (bool, np.bool_)):
        return Fraction(int(x))
    if isinstance(x, (int, np.integer)):
        return Fraction(int(x))
    if isinstance(x, (float, np.floating)) and not isinstance(x, np.longdouble):
        if not math.isfinite(float(x)):
            raise NotImplementedError("edge weights must be finite (found nan or inf)")
        return Fraction(float(x))
    if isinstance(x, decimal.Decimal):
        if not x.is_finite():
            raise NotImplementedError("edge weights must be finite (found a non-finite Decimal)")
        return Fraction(x)
    if isinstance(x, numbers.Rational):
        return Fraction(x.numerator, x.denominator)
    raise NotImplementedError(
        f"edge weights of type {type(x).__name__} are not supported (int, float, numpy scalars, Fraction, Decimal)"
    )


def _weights_of(graph: MatchingGraph, weight) -> _Weights:
    if weight is None:
        key = None
    else:
        key = weight
        if key not in graph.weights:
            raise NotImplementedError(f"edge attribute {weight!r} was not converted")
    if key not in graph._values:
        graph._values[key] = _Weights(None if key is None else graph.weights[key])
    return graph._values[key]


# ---------------------------------------------------------------------------
# The solver and the exactness certificate


def _solve_perfect(nv, eu, ev, w, warm=None):
    """The exact sparse min-weight perfect matching solver (int64 weights in [0, max_weight(nv)]).

    The one call into the compiled solver: a dict with ``perfect``, ``mate``
    and the optimal duals ``y``, ``z``, ``parent`` (doubled, see
    cpp/matching.hpp); ``warm`` = (y0, mate0) of an earlier solve.
    """
    extra = {} if warm is None else {"y0": warm[0], "mate0": warm[1]}
    return _core._mwpm_sparse(
        int(nv), np.asarray(eu, dtype=np.int32), np.asarray(ev, dtype=np.int32), np.asarray(w, dtype=np.int64), **extra
    )


def _reduced_costs(r, eu, ev, w):
    """Doubled reduced costs 2 w - y_u - y_v + (z of the blossoms holding both) of edges against r's duals."""
    return _core._mwpm_reduced_costs(
        r["y"], r["parent"], r["z"], np.asarray(eu, dtype=np.int32), np.asarray(ev, dtype=np.int32),
        np.asarray(w, dtype=np.int64),
    )  # fmt: skip


def _deflated_duals(r) -> np.ndarray:
    """y_v minus half the z of the blossoms holding v: feasible without the blossoms (a warm start)."""
    y, parent, z = r["y"], r["parent"].astype(np.int64), r["z"]
    nv = y.shape[0]
    total = np.zeros(nv, dtype=np.int64)
    cur = parent[:nv].copy()
    live = np.flatnonzero(cur != -1)
    while live.size:
        total[live] += z[cur[live] - nv]
        cur[live] = parent[cur[live]]
        live = live[cur[live] != -1]
    return y - total // 2


def _solve_priced(nv, eu, ev, w):
    """Perfect matching of a dense edge list: solve on cheap edges, price the rest, add violated, repeat.

    Returns the solver result and the reduced costs of every edge. The final
    duals are feasible for every edge, so the matching is optimal for the
    whole list (the dual solution is what ``_certify`` reads).
    """
    m = eu.shape[0]
    eu32, ev32 = eu.astype(np.int32), ev.astype(np.int32)
    w = w.astype(np.int64)
    if m <= _PRICE_ABOVE * nv:
        return _solve_perfect(nv, eu32, ev32, w), None
    # Start: the globally cheapest edges, plus the k cheapest edges of every
    # vertex that has fewer than k among them (so each vertex keeps its k
    # cheapest edges: a k-nearest-neighbour graph).
    k = _START_NEIGHBOURS
    start = _START_PER_VERTEX * nv
    if start >= m:
        return _solve_perfect(nv, eu32, ev32, w), None
    sel = w <= np.partition(w, start)[start]
    deg = np.bincount(eu[sel], minlength=nv) + np.bincount(ev[sel], minlength=nv)
    low = deg < k
    if low.any():
        a = np.flatnonzero(low[eu])
        b = np.flatnonzero(low[ev])
        owner = np.concatenate([eu[a], ev[b]])
        edge = np.concatenate([a, b])
        order = np.lexsort((w[edge], owner))
        owner, edge = owner[order], edge[order]
        rank = np.arange(owner.size) - np.searchsorted(owner, owner)
        sel[edge[rank < k]] = True
    idx = np.flatnonzero(sel)
    r = _solve_perfect(nv, eu32[idx], ev32[idx], w[idx])
    if not r["perfect"]:  # the start graph has no perfect matching: solve on every edge
        return _solve_perfect(nv, eu32, ev32, w), None
    while True:
        rc = _reduced_costs(r, eu32, ev32, w)
        bad = np.flatnonzero(rc < 0)
        if bad.size == 0:
            return r, rc
        if bad.size > 8 * nv:  # the most violated first
            bad = bad[np.argpartition(rc[bad], 8 * nv)[: 8 * nv]]
        sel[bad] = True
        idx = np.flatnonzero(sel)
        r = _solve_perfect(nv, eu32[idx], ev32[idx], w[idx], warm=(_deflated_duals(r), r["mate"]))
        if not r["perfect"]:  # cannot happen (the edge set only grew); solve on every edge
            return _solve_perfect(nv, eu32, ev32, w), None


def _max_weight(nv) -> int:
    return int(_core._mwpm_max_weight(int(nv)))


def _pow2_below(x: float) -> float:
    """Largest power of two <= x (x > 0)."""
    m, e = math.frexp(x)
    return math.ldexp(1.0, e - 1)


def _blossom_sizes(r, nv) -> np.ndarray:
    parent = r["parent"].astype(np.int64)
    nb = r["z"].shape[0]
    sizes = np.zeros(nb, dtype=np.int64)
    cur = parent[:nv].copy()
    live = np.flatnonzero(cur != -1)
    while live.size:
        np.add.at(sizes, cur[live] - nv, 1)
        cur[live] = parent[cur[live]]
        live = live[cur[live] != -1]
    return sizes


def _exact_min_perfect(k, lu, lv, costs):
    """Exact min-weight perfect matching of a small graph with Fraction costs; mate array (local)."""
    import networkx as nx

    base = min(costs)
    shifted = [c - base for c in costs]
    den = 1
    for c in shifted:
        den = math.lcm(den, c.denominator)
    nums = [int(c * den) for c in shifted]
    g = 0
    for x in nums:
        g = math.gcd(g, x)
    if g > 1:
        nums = [x // g for x in nums]
    if max(nums) <= _max_weight(k):
        r = _solve_perfect(k, lu, lv, np.array(nums, dtype=np.int64))
        if not r["perfect"]:
            raise RuntimeError("exact re-solve lost the perfect matching (internal error)")
        return r["mate"].astype(np.int64)
    # Too wide for int64: networkx's blossom algorithm on Python integers (exact;
    # it would turn Fractions into floats when halving slacks).
    top = max(nums) + 1
    H = nx.Graph()
    H.add_nodes_from(range(k))
    for a, b, c in zip(lu.tolist(), lv.tolist(), nums):
        H.add_edge(a, b, weight=top - c)
    mate = np.full(k, -1, dtype=np.int64)
    for a, b in nx.max_weight_matching(H, maxcardinality=True, weight="weight", backend="networkx"):
        mate[a], mate[b] = b, a
    if (mate < 0).any():
        raise RuntimeError("exact re-solve lost the perfect matching (internal error)")
    return mate


def _certify(nv, su, sv, sw, r, exact_cost, rc=None):
    """Make a rounded-weight optimum exactly optimal; returns the final mate array.

    ``sw`` are the rounded integer costs a (each within 1 of the exact cost
    k); ``exact_cost(edge_ids)`` gives the exact costs as Fractions. With
    the optimal duals of the rounded problem (reduced costs r >= 0, blossom
    duals z >= 0), every perfect matching P satisfies the identity

        k(P) = dual + sum over P of (r_e + d_e) + sum over blossoms B of z_B (|P cut B| - 1) / 2

    with d = k - a in (-1, 1). So an exactly optimal P* only uses edges with
    r_e < gap + nv (the first filter), and crosses every blossom with z_B > 2
    (number of vertices) exactly once. Components of the remaining edges are
    closed under the matching (blossoms lie inside one component); forests
    have a single perfect matching; every other component is re-solved
    exactly with the small costs ``r_e + d_e + sum over blossoms crossed by e
    of min(z_B / 2, Lambda)`` (Lambda = component size + gap), which have the same
    optimal matchings as the exact costs and fit the integer solver.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    mate = r["mate"].astype(np.int64)
    y, z = r["y"].astype(np.int64), r["z"].astype(np.int64)
    parent = r["parent"].astype(np.int64)
    if rc is None:
        rc = _reduced_costs(r, su, sv, sw)
    if (rc < 0).any() or (z < 0).any():
        raise RuntimeError("matching: infeasible dual solution (internal error)")
    matched = mate[su] == sv
    sizes = _blossom_sizes(r, nv)
    dual2 = int(y.sum()) - int((z * ((sizes - 1) // 2)).sum())
    gap2 = 2 * int(sw[matched].sum()) - dual2
    if gap2 < 0:
        raise RuntimeError("matching: primal below dual (internal error)")
    small = np.flatnonzero(rc < gap2 + 2 * nv)  # doubled units: 2 * (gap + 2 * nv / 2)
    graph = coo_matrix((np.ones(small.size), (su[small], sv[small])), shape=(nv, nv))
    ncomp, label = connected_components(graph, directed=False)
    n_vert = np.bincount(label, minlength=ncomp)
    n_edge = np.bincount(label[su[small]], minlength=ncomp)
    cyclic = np.flatnonzero(n_edge > n_vert - 1)
    if cyclic.size == 0:
        return mate
    # Every blossom must lie inside one component (its tight edges join it).
    nb = z.shape[0]
    lo_label = np.full(nb, ncomp, dtype=np.int64)
    hi_label = np.full(nb, -1, dtype=np.int64)
    cur = parent[:nv].copy()
    live = np.flatnonzero(cur != -1)
    while live.size:
        np.minimum.at(lo_label, cur[live] - nv, label[live])
        np.maximum.at(hi_label, cur[live] - nv, label[live])
        cur[live] = parent[cur[live]]
        live = live[cur[live] != -1]
    split_blossoms = bool((z > 0).any() and (lo_label[z > 0] != hi_label[z > 0]).any())
    order = np.argsort(label[su[small]], kind="stable")
    by_comp = small[order]
    comp_of = label[su[by_comp]]
    starts = np.searchsorted(comp_of, cyclic)
    ends = np.searchsorted(comp_of, cyclic, side="right")
    chains = {}

    def chain(v):
        if v not in chains:
            out, b = [], int(parent[v])
            while b != -1:
                out.append(b)
                b = int(parent[b])
            chains[v] = out
        return chains[v]

    for c, lo, hi in zip(cyclic.tolist(), starts.tolist(), ends.tolist()):
        edges = by_comp[lo:hi]
        verts = np.flatnonzero(label == c)
        local = np.full(nv, -1, dtype=np.int64)
        local[verts] = np.arange(verts.size)
        exact = exact_cost(edges)
        if split_blossoms:  # not expected from the solver; exact costs are always valid
            costs = exact
        else:
            cap4 = 4 * int(verts.size) + 2 * gap2  # 4 * Lambda, Lambda = size + gap
            costs = []
            for e, k in zip(edges.tolist(), exact):
                cu, cv = chain(int(su[e])), chain(int(sv[e]))
                i, j = len(cu), len(cv)
                while i and j and cu[i - 1] == cv[j - 1]:
                    i, j = i - 1, j - 1
                cross = sum(min(int(z[b - nv]), cap4) for b in cu[:i]) + sum(min(int(z[b - nv]), cap4) for b in cv[:j])
                # 4 * (r_e + d_e + crossing / 4) with r_e = rc / 2 and d_e = k - a.
                costs.append(2 * int(rc[e]) + 4 * (k - int(sw[e])) + cross)
        lmate = _exact_min_perfect(verts.size, local[su[edges]], local[sv[edges]], costs)
        mate[verts] = verts[lmate]
    return mate


# ---------------------------------------------------------------------------
# Reductions


class _Problem:
    """Maximise the sum of gains over matchings of a simple graph (vertices 0..n-1).

    ``gain`` are float64 values >= 0 of the exact gains ``gain_exact(i)``
    (float64 error at most 2**-52 relative to the gain itself); ``exact``
    tells that the float64 values are the exact gains.
    """

    def __init__(self, n, eu, ev, gain, gain_exact, exact, maxcard):
        self.n, self.eu, self.ev = n, eu, ev
        self.gain, self.gain_exact, self.exact = gain, gain_exact, exact
        self.maxcard = maxcard


def _scaled(gain, limit):
    """Power-of-two scale s with round(s * max gain) <= limit, and the rounded gains."""
    top = float(gain.max()) if gain.size else 0.0
    s = _pow2_below(limit / top) if top > 0 else 1.0
    scaled = gain * s
    a = np.floor(scaled + 0.5)
    return s, a.astype(np.int64), bool(np.array_equal(a, scaled) and np.array_equal(scaled / s, gain))


def _solve_direct(p: _Problem):
    """Max-cardinality problem on G itself (+ a ghost); None when G has no (near-)perfect matching."""
    n = p.n
    ghost = n % 2
    nv = n + ghost
    s, a, exact = _scaled(p.gain, _max_weight(nv) - 1)
    top = int(a.max()) if a.size else 0
    gu, gv = p.eu, p.ev
    cost = top - a
    if ghost:
        gu = np.concatenate([gu, np.arange(n)])
        gv = np.concatenate([gv, np.full(n, n)])
        cost = np.concatenate([cost, np.zeros(n, dtype=np.int64)])
    r, rc = _solve_priced(nv, gu, gv, cost)
    if not r["perfect"]:
        return None
    m = p.eu.shape[0]
    if exact and p.exact:
        mate = r["mate"].astype(np.int64)
    else:
        fs = Fraction(s)

        def exact_cost(ids):
            return [top - fs * p.gain_exact(int(i)) if i < m else Fraction(0) for i in ids]

        mate = _certify(nv, gu, gv, cost, r, exact_cost, rc)
    return mate[:n]


def _solve_doubled(p: _Problem):
    """Two copies of G joined vertex to twin: any max-weight (or max-cardinality) matching."""
    n, m = p.n, p.eu.shape[0]
    nv = 2 * n
    limit = _max_weight(nv) - 1
    pairs = n // 2
    if p.maxcard:
        limit = limit // (pairs + 1) - 3
    s, a, exact = _scaled(p.gain, limit)
    top_gain = int(a.max()) if a.size else 0
    bonus = pairs * (top_gain + 2) + 1 if p.maxcard else 0
    top = top_gain + bonus
    cost = top - (a + bonus)
    su = np.concatenate([p.eu, p.eu + n, np.arange(n)])
    sv = np.concatenate([p.ev, p.ev + n, np.arange(n) + n])
    sw = np.concatenate([cost, cost, np.full(n, top, dtype=np.int64)])
    r, rc = _solve_priced(nv, su, sv, sw)
    if not r["perfect"]:
        raise RuntimeError("matching: the doubled graph has no perfect matching (internal error)")
    if exact and p.exact:
        mate = r["mate"].astype(np.int64)
    else:
        fs = Fraction(s)

        def exact_cost(ids):
            out = []
            for i in ids.tolist():
                if i < 2 * m:
                    out.append(top - bonus - fs * p.gain_exact(i % m))
                else:
                    out.append(Fraction(top))
            return out

        mate = _certify(nv, su, sv, sw, r, exact_cost, rc)
    mate = mate[:n].copy()
    mate[mate >= n] = -1
    return mate


def _run(graph: MatchingGraph, weight, mode: str):
    """mode: 'max' (any cardinality), 'maxcard' or 'min' (both maximum cardinality)."""
    W = _weights_of(graph, weight)
    eu, ev = graph.eu, graph.ev
    m_all = eu.shape[0]
    values = W.array(m_all)
    loops = eu == ev  # self-loops never match
    if loops.any():
        ids = np.flatnonzero(~loops)
        w = values[ids]
    else:
        ids, w = np.arange(m_all), values
    if mode == "max":
        pos = w >= 0  # a negative edge never helps; zero-gain edges may be used, as networkx may
        ids, w = ids[pos], w[pos]
    if ids.size == 0:
        return set()
    u, v = (eu, ev) if ids.size == m_all else (eu[ids], ev[ids])
    present = np.zeros(len(graph.nodes), dtype=bool)
    present[u] = True
    present[v] = True
    n = int(present.sum())
    if n == present.size:
        lu, lv = u, v
    else:
        relabel = np.cumsum(present) - 1
        lu, lv = relabel[u], relabel[v]

    # Gains >= 0 and their exact values.
    if mode == "max":
        ref, sign = None, 1
    elif mode == "maxcard":
        ref, sign = int(np.argmin(w)), 1
    else:
        ref, sign = int(np.argmax(w)), -1
    if W.kind == "int":
        wi = w.astype(np.int64) if W.values is not None else np.ones(ids.size, dtype=np.int64)
        base = 0 if ref is None else int(wi[ref])
        spread = int(wi.max()) - int(wi.min())
        if spread < 2**62 and abs(base) < 2**62 and abs(int(wi.max())) < 2**62 and abs(int(wi.min())) < 2**62:
            gi = (wi - base) * sign
            gain = gi.astype(np.float64)
            exact = int(np.abs(gi).max()) <= _EXACT_FLOAT_INT
        else:
            gain, exact = None, False
    elif W.kind == "float":
        base = 0.0 if ref is None else float(w[ref])
        diff = w - base
        # TwoSum error of the subtraction: zero iff the float64 difference is exact.
        bb = diff - w
        err = (w - (diff - bb)) + (-base - bb)
        gain = diff * sign
        exact = not err.any()
        gain = np.maximum(gain, 0.0)
    else:
        gain, exact = None, False
    base_exact = None if ref is None else W.fraction(int(ids[ref]))

    def gain_exact(k):
        f = W.fraction(int(ids[k]))
        return f if base_exact is None else (f - base_exact) * sign

    if gain is None:  # exact rationals or huge integers: correctly rounded differences
        gain = np.array([float(gain_exact(k)) for k in range(ids.size)], dtype=np.float64)
        exact = False
    p = _Problem(n, lu, lv, gain, gain_exact, exact, mode != "max")
    mate = None
    if mode != "max":
        mate = _solve_direct(p)
    if mate is None:
        mate = _solve_doubled(p)
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
    import networkx as nx
    from importlib.metadata import EntryPoint

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
