"""Numba kernels of the BRANCHES search (best-first value iteration over branches).

Everything is in *minimisation* form and in units of sample weight: a leaf costs the weight it
misclassifies, a split costs ``lam_w = penalty * total_weight``. The paper's return ``R(l)`` (an
upper bound on regularised accuracy) becomes ``lb(l)``, a lower bound on the optimal subtree cost
of branch ``l``; the purification bound ``R(l) = max(H(l), P(l) - lambda)`` becomes
``lb(l) = min(leaf(l), lam_w)``; it is strengthened with the equivalent-points bound (as in
GOSDT) to ``min(leaf(l), lam_w + EQ(l))``, since splits cannot separate identical rows.

The one-step look-ahead (``_lookahead``) bounds a new child branch by its best split, each
grandchild counted at its leaf cost where a leaf is optimal and at ``lam_w + EQ`` elsewhere, and
solves the child outright (nothing stored) when its best subtree of depth <= 1 meets that bound.
It runs when an action is first selected, and for every split at expansions near the root.
Optionally it adds the similar-support bound (a sibling's bound minus the weight it does not
share with the child). Stored branches never expanded count at their best depth-1 subtree as
upper bound; the tree extraction rebuilds exactly that subtree for them.

The search state lives in flat arrays so that a call can stop at any iteration (iteration budget
for the anytime time limit, or full arrays) and the Python driver can grow them and resume:

``nd_i[node]``  int32 fields ``LS`` (start of its sorted literals in ``lit_store``), ``DEP``
                (number of literals), ``UBA`` (action of the incumbent subtree, -1 = leaf,
                ``UBA_DEPTH2`` = its best subtree of depth <= 2, ``UBA_GIVEN`` = at the
                root, a tree given from outside),
                ``FLG`` (``COMPLETE`` | ``EXPANDED``), ``AS``/``NA`` (its action records);
``nd_f[node]``  ``LEAF`` (leaf cost), ``LB``, ``UB``, ``EQ`` (weight no tree can classify:
                rows outvoted inside their group of identical feature vectors), ``REST`` (lower
                bound on the actions not stored, see below), then the class weights;
``nd_h[node]``  Zobrist hash of the literal set (XOR of per-literal random words), or with
                ``memo_rows`` the key of its rows (:func:`rows_key`);
``nd_c[node]``  with ``dedup`` and few features (else no columns), a bitset of the features
                :func:`._classes.distinct` keeps on its rows, valid under flag ``CLASSES``
                (found when it was stored or first expanded; every expansion reuses it);
``ac_i[a]``     ``FEAT``, ``CS`` (start of its incomplete children in ``ch``), ``NINC``, ``MAT``
                (1 once every child is a stored node: children are stored lazily, when the
                action is first selected, as ``-1 - literal`` until then);
``ac_f[a]``     ``Q`` (lower bound on the action's cost) and ``RET`` (lam_w plus the exact cost of
                its complete children, the paper's "return_complete"); ``CL0``/``CL1``: with
                ``ordered`` thresholds, lower bounds on its two children lifted along the
                feature's chain (see :mod:`._chains`), 0 otherwise, for its children stored
                later.

An expansion stores only the ``keep`` actions with the lowest bounds (plus the incumbent's) and
remembers the least bound of the others in ``REST``; when ``REST`` becomes the lowest bound of
the branch, the branch is expanded again from the memo's current knowledge. This bounds the
memory per expansion on data with many features.

A split whose lower bound reaches the best cost known achievable at the branch (the leaf, or
an incumbent split) can never be strictly better and is not stored at all.

Children that are complete when created (empty, pure enough that ``leaf <= lam_w + EQ``, or at
the depth limit) are leaves of every optimal subtree and are never stored; only incomplete children
get a node, and a memo (open addressing on the hash, full literal comparison on a hit) makes a
branch reached by different split orders one node. With ``memo_rows`` the memo is keyed by the
branch's rows instead (:func:`rows_key`; the rows recomputed from the stored node's literals and
compared on a hit; the depth as well under a depth limit): the features a branch's literals fix
are constant on its rows, so its optimal subtree depends on its rows (and remaining depth) only,
and every set of literals selecting the same rows shares one node.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from llvmlite import ir

from .._bits import popcount
from .._clock import now
from ._codes import code
from ._chains import lift, lift_all, members
from ._classes import _GOLD, _mix, mark_duplicates
from ._pairs import (_row_binary, _row_binary2, branch_bounds, pair_row, prepare, row_leaf,
                     set_chains, workspace)



def _prefetch_codegen(context, builder, signature, args):
    """Prefetch the element of a C-contiguous array at the given leading index (row)."""
    aty, ity = signature.args
    ary = context.make_array(aty)(context, builder, args[0])
    idx = [context.cast(builder, args[1], ity, types.intp)]
    idx += [context.get_constant(types.intp, 0)] * (aty.ndim - 1)
    ptr = cgutils.get_item_pointer(context, builder, aty, ary, idx, wraparound=False)
    i8p = ir.IntType(8).as_pointer()
    i32 = ir.IntType(32)
    fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
    builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3),
                      ir.Constant(i32, 1)])
    return context.get_dummy_value()


@intrinsic
def _prefetch(typingctx, arr, idx):
    """Hint the CPU to load ``arr[idx]`` into the cache (a 1-d array; no effect on results)."""
    if isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(idx, types.Integer):
        return types.void(arr, idx), _prefetch_codegen
    return None


@intrinsic
def _prefetch2(typingctx, arr, idx):
    """Hint the CPU to load row ``idx`` of a 2-d array (its first element's cache line)."""
    if isinstance(arr, types.Array) and arr.ndim == 2 and isinstance(idx, types.Integer):
        return types.void(arr, idx), _prefetch_codegen
    return None


# nd_i columns
LS, DEP, UBA, FLG, AS, NA = 0, 1, 2, 3, 4, 5
N_INT_FIELDS = 6
# nd_f columns (class weights follow)
LEAF, LB, UB, EQ, REST = 0, 1, 2, 3, 4
N_FLOAT_FIELDS = 5
# ac_i / ac_f columns
FEAT, CS, NINC, MAT = 0, 1, 2, 3
N_ACT_FIELDS = 4
Q, RET, CL0, CL1 = 0, 1, 2, 3
N_ACT_FLOATS = 4
# flags
COMPLETE, EXPANDED, CLASSES = 1, 2, 4
# nd_i[node, UBA] of an expanded branch whose incumbent is its best subtree of depth <= 2 (at
# most the upper bound it was stored with), rebuilt by the tree extraction
UBA_DEPTH2 = -2
# nd_i[0, UBA] when the root's incumbent is a tree given from outside (see search.solve)
UBA_GIVEN = -3
# ctr entries
(C_NODES, C_LITS, C_ACTS, C_CH, C_ITERS, C_EXPANSIONS, C_HITS, C_PRUNED, C_MAXDEP, C_REEXP,
 C_LOOKAHEADS, C_SOLVED, C_SIMILAR, C_D2, C_D2SOLVED, C_D2ROWS, C_DEDUP, C_LIFTED,
 C_REFRESHED) = range(19)
N_COUNTERS = 19
# return codes of run()
DONE, BUDGET, GROW, NODE_LIMIT = 0, 1, 2, 3


@njit(cache=True, inline="always")
def _child_rows(S, nzw, nnz, lit_bits, g, Sj, jw):
    """The rows of a branch (its non-zero words ``S[:nnz]`` at word indices ``nzw``) that
    literal ``g`` keeps (bit rows ``lit_bits[g]``), as non-zero words ``Sj`` at indices ``jw``;
    returns their number."""
    m = 0
    for i in range(nnz):
        s = S[i] & lit_bits[g, nzw[i]]
        if s != 0:
            Sj[m] = s
            jw[m] = nzw[i]
            m += 1
    return m


@njit(cache=True)
def _find(h, l, g, nd_i, lit_store, ht_key, ht_val):
    """Node holding the branch ``literals(l) + {g}`` (hash ``h``), or -1."""
    mask = np.uint64(ht_key.shape[0] - 1)
    idx = np.int64(h & mask)
    ls, dl = nd_i[l, LS], nd_i[l, DEP]
    while ht_val[idx] >= 0:
        if ht_key[idx] == h:
            c = ht_val[idx]
            if nd_i[c, DEP] == dl + 1:
                cs = nd_i[c, LS]
                i = 0
                gdone = False
                ok = True
                for t in range(dl + 1):
                    if not gdone and (i >= dl or g < lit_store[ls + i]):
                        e = g
                        gdone = True
                    else:
                        e = lit_store[ls + i]
                        i += 1
                    if lit_store[cs + t] != e:
                        ok = False
                        break
                if ok:
                    return c
        idx = np.int64((np.uint64(idx) + np.uint64(1)) & mask)
    return -1


@njit(cache=True)
def rows_key(S, nzw, nnz, lit_bits, g, dep, depth_keyed):
    """Memo key of the rows ``S & lit_bits[g]`` (``S``: non-zero words ``S[:nnz]`` at word
    indices ``nzw``; ``g`` a literal, or -1 for ``S`` itself) at ``dep`` literals: a hash of the
    row set (a sum of mixed words, so any representation of the rows gives it), with the depth
    mixed in when ``depth_keyed`` (under a depth limit). The literal is indexed, not sliced: a
    view per call would cost reference counting in the hot loops."""
    h = np.uint64(0)
    whole = g < 0
    for i in range(nnz):
        x = S[i] if whole else S[i] & lit_bits[g, nzw[i]]
        if x != 0:
            h += _mix(x ^ (np.uint64(nzw[i]) * _GOLD))
    if depth_keyed:
        h = _mix(h ^ (np.uint64(dep) * _GOLD))
    return h


@njit(cache=True, inline="always")
def _same_rows(c, S, nzw, nnz, g, allmask, lit_bits, nd_i, lit_store):
    """Whether branch ``c`` holds exactly the rows ``S & lit_bits[g]`` (see :func:`rows_key`)."""
    ls, d = nd_i[c, LS], nd_i[c, DEP]
    whole = g < 0
    t = 0
    for wi in range(allmask.shape[0]):
        x = allmask[wi]
        for u in range(d):
            x &= lit_bits[lit_store[ls + u], wi]
        v = np.uint64(0)
        if t < nnz and nzw[t] == wi:
            v = S[t] if whole else S[t] & lit_bits[g, wi]
            t += 1
        if x != v:
            return False
    return True


@njit(cache=True)
def find_rows(h, S, nzw, nnz, g, dep, depth_keyed, allmask, lit_bits, nd_i, lit_store,
              ht_key, ht_val):
    """Node holding the rows ``S & lit_bits[g]`` (key ``h``, see :func:`rows_key`; at ``dep``
    literals when ``depth_keyed``), or -1."""
    mask = np.uint64(ht_key.shape[0] - 1)
    idx = np.int64(h & mask)
    while ht_val[idx] >= 0:
        if ht_key[idx] == h:
            c = ht_val[idx]
            if (not depth_keyed or nd_i[c, DEP] == dep) and \
                    _same_rows(c, S, nzw, nnz, g, allmask, lit_bits, nd_i, lit_store):
                return c
        idx = np.int64((np.uint64(idx) + np.uint64(1)) & mask)
    return -1


@njit(cache=True)
def _child_node(l, g, zob, S, nzw, nnz, allmask, lit_bits, nd_i, nd_h, lit_store, ht_key,
                ht_val, memo_rows, depth_keyed):
    """Memo key of the child ``l & g`` (``S``: the rows of ``l``) and its node (-1: none):
    keyed by its literals (Zobrist hash), or with ``memo_rows`` by its rows."""
    if memo_rows:
        dep = nd_i[l, DEP] + 1
        h = rows_key(S, nzw, nnz, lit_bits, g, dep, depth_keyed)
        return h, find_rows(h, S, nzw, nnz, g, dep, depth_keyed, allmask, lit_bits, nd_i,
                            lit_store, ht_key, ht_val)
    h = nd_h[l] ^ zob[g]
    return h, _find(h, l, g, nd_i, lit_store, ht_key, ht_val)


@njit(cache=True)
def _insert(h, c, ht_key, ht_val):
    mask = np.uint64(ht_key.shape[0] - 1)
    idx = np.int64(h & mask)
    while ht_val[idx] >= 0:
        idx = np.int64((np.uint64(idx) + np.uint64(1)) & mask)
    ht_key[idx] = h
    ht_val[idx] = c


@njit(cache=True)
def rehash(nd_h, n_nodes, ht_key, ht_val):
    """Fill a fresh (all ``-1``) table with the first ``n_nodes`` nodes."""
    for c in range(n_nodes):
        _insert(nd_h[c], c, ht_key, ht_val)


@njit(cache=True)
def _support(l, allmask, lit_bits, nd_i, lit_store, S, nzw):
    """Nonzero words of the bitset of rows in branch ``l``: values in ``S``, indices in ``nzw``."""
    ls, dep = nd_i[l, LS], nd_i[l, DEP]
    nnz = 0
    for wi in range(lit_bits.shape[1]):
        s = allmask[wi]
        for t in range(dep):
            s &= lit_bits[lit_store[ls + t], wi]
        if s != 0:
            S[nnz] = s
            nzw[nnz] = wi
            nnz += 1
    return nnz


@njit(cache=True)
def _sibling_bounds(l, skip_f, used, lit_off, cnt, zob, lam_w, tol, children_are_leaves, nd_i,
                    nd_f, nd_h, lit_store, ht_key, ht_val, B, W, lnode, S, nzw, nnz, allmask,
                    lit_bits, memo_rows, depth_keyed, hk):
    """For every child ``l & g`` of an unused feature other than ``skip_f``: its weight ``W[g]``,
    a lower bound ``B[g]`` on its optimal subtree (exact when a leaf is optimal there or the
    memo holds it complete, else the memo's bound or ``lam_w + EQ``) and ``lnode[g]``: -2 when
    a leaf is optimal or it is empty, else its memo node or -1.

    With ``memo_rows`` the look-ups run in passes over all children (``hk``: scratch of one key
    per literal): keys and table slots first, then the nodes of matching keys, then their
    literals, then the exact look-ups, each pass prefetching what the next one reads, so that
    the memory latencies of the children overlap (one look-up at a time waits on several
    dependent cache misses into the large memo arrays)."""
    K = cnt.shape[1] - 1
    dep = nd_i[l, DEP] + 1
    mask = np.uint64(ht_key.shape[0] - 1)
    for f in range(used.shape[0]):
        if used[f] or f == skip_f:
            continue
        for g in range(lit_off[f], lit_off[f + 1]):
            tot = 0.0
            mx = 0.0
            for k in range(K):
                tot += cnt[g, k]
                mx = max(mx, cnt[g, k])
            W[g] = tot
            lc = tot - mx
            eq = cnt[g, K]
            if tot <= 0.0 or children_are_leaves or lc <= lam_w + eq + tol:
                B[g] = lc
                lnode[g] = -2
            elif memo_rows:
                h = rows_key(S, nzw, nnz, lit_bits, g, dep, depth_keyed)
                hk[g] = h
                lnode[g] = -1
                idx = np.int64(h & mask)
                _prefetch(ht_val, idx)
                _prefetch(ht_key, idx)
            else:
                c = _child_node(l, g, zob, S, nzw, nnz, allmask, lit_bits, nd_i, nd_h, lit_store,
                                ht_key, ht_val, memo_rows, depth_keyed)[1]
                lnode[g] = c
                B[g] = nd_f[c, LB] if c >= 0 else lam_w + eq
    if not memo_rows:
        return
    # the first node of a matching key (-1: none, the child is not in the memo), kept in lnode
    # as -3 - node until its exact look-up
    for f in range(used.shape[0]):
        if used[f] or f == skip_f:
            continue
        for g in range(lit_off[f], lit_off[f + 1]):
            if lnode[g] != -1:
                continue
            h = hk[g]
            idx = np.int64(h & mask)
            while ht_val[idx] >= 0:
                if ht_key[idx] == h:
                    c = ht_val[idx]
                    lnode[g] = -3 - c
                    _prefetch2(nd_i, c)
                    _prefetch2(nd_f, c)
                    break
                idx = np.int64((np.uint64(idx) + np.uint64(1)) & mask)
    for f in range(used.shape[0]):
        if used[f] or f == skip_f:
            continue
        for g in range(lit_off[f], lit_off[f + 1]):
            if lnode[g] <= -3:
                _prefetch(lit_store, nd_i[-3 - lnode[g], LS])
    for f in range(used.shape[0]):
        if used[f] or f == skip_f:
            continue
        for g in range(lit_off[f], lit_off[f + 1]):
            if lnode[g] == -1:
                B[g] = lam_w + cnt[g, K]
            elif lnode[g] <= -3:
                c = find_rows(hk[g], S, nzw, nnz, g, dep, depth_keyed, allmask,
                              lit_bits, nd_i, lit_store, ht_key, ht_val)
                lnode[g] = c
                B[g] = nd_f[c, LB] if c >= 0 else lam_w + cnt[g, K]


@njit(cache=True)
def _lookahead(f, dep, S, nzw, nnz, lit_bits, cls_bits, mis_bits, lit_off, card, used, Z, y, w,
               weighted, w0, lam_w, tol, max_depth, cc, need, Sj, jw, SjK, P, ci, lb_out, ub_out,
               similar, B, W, ctr):
    """One-step look-ahead bounds of the children ``l & (x_f = j)`` with ``need[j]`` set.

    ``S``/``nzw``/``nnz`` is the support of ``l`` (``dep`` literals), ``cc[j]`` the class weights
    and EQ of child ``j`` (``w0``: the common row weight when not ``weighted``). For every
    further split ``f2`` of the child, its grandchildren are bounded by their leaf cost when a
    leaf is optimal there (pure enough, or at the depth limit) and by ``lam_w + EQ`` otherwise;
    ``lb_out[j]`` is the least of the child's leaf and those split bounds, a lower bound on the
    child's optimal subtree. ``ub_out[j]`` is the cost of the best subtree of depth <= 1 (the
    leaf unless a split beats it by more than ``tol``), an achievable cost. ``lb_out[j] >=
    ub_out[j] - tol`` means ``ub_out[j]`` is the child's exact optimum, found without storing
    anything. The child itself must be allowed to split (not at the depth limit).

    With ``similar``, the similar-support bound also applies: a sibling ``l & g2`` (weight
    ``W[g2]``, optimum at least ``B[g2]``) shares all but ``W[g2] - w(child & g2)`` of its weight
    with the child, and any tree for the child, its splits on ``f2`` collapsed, is a tree for the
    sibling misclassifying at most that much more; so the child's optimum is at least
    ``B[g2] - (W[g2] - w(child & g2))``. Both branches have the same depth, hence the same room
    under a depth limit.
    """
    q = card.shape[0]
    K = cls_bits.shape[0]
    gc_leaves = dep + 2 >= q or (max_depth >= 0 and dep + 2 >= max_depth)
    for j in range(card[f]):
        if not need[j]:
            continue
        g = lit_off[f] + j
        m = _child_rows(S, nzw, nnz, lit_bits, g, Sj, jw)
        # P[g2] = class weights (then EQ) of the grandchild  child & g2, for every unused g2
        was_used = used[f]
        used[f] = True  # the child's own feature splits it no further
        _count_children(Sj, SjK, jw, m, used, lit_bits, cls_bits, mis_bits, lit_off, Z, y, w,
                        weighted, w0, cc[j, :K], cc[j, K], P, ci)
        used[f] = was_used
        tot = 0.0
        mx = 0.0
        for k in range(K):
            tot += cc[j, k]
            mx = max(mx, cc[j, k])
        lc = tot - mx
        best_lb = lc
        best_ub = np.inf
        ss = 0.0
        for f2 in range(q):
            if used[f2] or f2 == f:
                continue
            nonempty = 0
            lbs = lam_w
            ubs = lam_w
            for g2 in range(lit_off[f2], lit_off[f2 + 1]):
                t2 = 0.0
                m2 = 0.0
                for k in range(K):
                    t2 += P[g2, k]
                    m2 = max(m2, P[g2, k])
                if similar:
                    ss = max(ss, B[g2] - (W[g2] - t2))
                if t2 <= 0.0:
                    continue
                nonempty += 1
                lcc = t2 - m2
                ubs += lcc
                if gc_leaves or lcc <= lam_w + P[g2, K] + tol:
                    lbs += lcc
                else:
                    lbs += lam_w + P[g2, K]
            if nonempty < 2:  # same rows one feature fewer: never strictly better
                continue
            best_lb = min(best_lb, lbs)
            best_ub = min(best_ub, ubs)
        ub_out[j] = best_ub if best_ub < lc - tol else lc
        if ss > best_lb + tol:
            ctr[C_SIMILAR] += 1
        lb_out[j] = min(max(best_lb, ss), ub_out[j])  # both are lower bounds; never past ub


@njit(cache=True)
def _materialize(l, a, lit_bits, cls_bits, mis_bits, allmask, lit_off, lit_feat, card, zob, Z, y,
                 w, weighted, w0, lam_w, tol, max_depth, lookahead, nd_i, nd_f, nd_h, lit_store,
                 ac_i, ac_f, ch, ht_key, ht_val, ctr, S, nzw, icnt, used, cc, need, Sj, jw, SjK, P,
                 lb_out, ub_out, similar, cnt, B, W, lnode, depth2, ws, UF, dedup, memo_rows,
                 budget, nd_c, cm):
    """Store (or find in the memo) every child branch of action ``a`` of ``l``. New children
    start from their depth-2 bounds with ``depth2`` (see :mod:`._pairs`), else from their
    look-ahead bounds when ``lookahead`` is on (the same values the expansion of ``l`` used),
    else from the purification bound ``lam_w + EQ`` and the leaf."""
    K = cls_bits.shape[0]
    nnz = _support(l, allmask, lit_bits, nd_i, lit_store, S, nzw)
    ls, dep = nd_i[l, LS], nd_i[l, DEP]
    hl = nd_h[l]
    f = ac_i[a, FEAT]
    base_f = lit_off[f]
    any_new = False
    for j in range(card[f]):
        need[j] = False
    # Phase 1: memo look-ups, class weights (and EQ) of the children to store.
    for t in range(ac_i[a, CS], ac_i[a, CS] + ac_i[a, NINC]):
        if ch[t] >= 0:
            continue
        g = -1 - ch[t]
        c = _child_node(l, g, zob, S, nzw, nnz, allmask, lit_bits, nd_i, nd_h, lit_store, ht_key,
                        ht_val, memo_rows, max_depth >= 0)[1]
        j = g - base_f
        if c >= 0:
            ch[t] = c
            if j < 2 and ac_f[a, CL0 + j] > nd_f[c, LB] and not (nd_i[c, FLG] & COMPLETE):
                _raise_lb(c, ac_f[a, CL0 + j], tol, nd_i, nd_f)
                ctr[C_LIFTED] += 1
            continue
        need[j] = True
        any_new = True
        for k in range(K + 1):
            cc[j, k] = 0.0
        if weighted:
            for i in range(nnz):
                word = S[i] & lit_bits[g, nzw[i]]
                mis = mis_bits[nzw[i]]
                while word != 0:
                    low = word & (~word + np.uint64(1))
                    r = nzw[i] * 64 + np.int64(popcount(low - np.uint64(1)))
                    word ^= low
                    cc[j, y[r]] += w[r]
                    if mis & low:
                        cc[j, K] += w[r]
        else:
            for k in range(K + 1):
                icnt[k] = 0
            for i in range(nnz):
                word = S[i] & lit_bits[g, nzw[i]]
                for k in range(K):
                    icnt[k] += np.int64(popcount(word & cls_bits[k, nzw[i]]))
                icnt[K] += np.int64(popcount(word & mis_bits[nzw[i]]))
            for k in range(K + 1):
                cc[j, k] = icnt[k] * w0
    if any_new and depth2:
        o3, UFd = ws[12], ws[18]
        for u in range(card.shape[0]):
            used[u] = False
        for u in range(dep):
            used[lit_feat[lit_store[ls + u]]] = True
        # with l's classes known, only the features l keeps: features splitting l alike split
        # its children alike, so distinct keeps the same ones there (the first of each class)
        known = dedup and (nd_i[l, FLG] & CLASSES) != 0
        nu = 0
        skipped = 0  # counted as left out by distinct
        for u in range(card.shape[0]):
            if used[u] or u == f:
                continue
            if not known or (nd_c[l, u >> 6] >> np.uint64(u & 63)) & np.uint64(1) != 0:
                UF[nu] = u
                nu += 1
            else:
                skipped += 1
        for j in range(card[f]):
            if not need[j]:
                continue
            g = lit_off[f] + j
            m = _child_rows(S, nzw, nnz, lit_bits, g, Sj, jw)
            ctr[C_D2ROWS] += branch_bounds(Sj, jw, m, dep + 1, UF, nu, Z, y, w, weighted, w0,
                                           lit_bits, cls_bits, mis_bits, lit_off, card, K,
                                           lam_w, tol, max_depth, False, depth2, dedup,
                                           budget, ws)
            ctr[C_DEDUP] += np.int64(o3[3]) + skipped
            if dedup and nd_c.shape[1] > 0:  # the features distinct kept: UFd[:nu - o3[3]]
                for wi in range(nd_c.shape[1]):
                    cm[j, wi] = np.uint64(0)
                for i in range(nu - np.int64(o3[3])):
                    cm[j, UFd[i] >> 6] |= np.uint64(1) << np.uint64(UFd[i] & 63)
            lb_out[j] = o3[0]
            ub_out[j] = o3[1]
            ctr[C_D2] += 1
            if o3[0] >= o3[1] - tol:
                ctr[C_D2SOLVED] += 1
    elif any_new and lookahead > 0:
        for u in range(card.shape[0]):
            used[u] = False
        for u in range(dep):
            used[lit_feat[lit_store[ls + u]]] = True
        if dedup:
            ctr[C_DEDUP] += mark_duplicates(S, nzw, nnz, used, lit_bits, lit_off, UF, ws[19],
                                            ws[20])
        if similar:  # the siblings' bounds: the memo may know them well by now
            _count_children(S, SjK, nzw, nnz, used, lit_bits, cls_bits, mis_bits, lit_off, Z,
                            y, w, weighted, w0, nd_f[l, N_FLOAT_FIELDS:], nd_f[l, EQ], cnt, icnt)
            child_dep = dep + 1
            leaves = child_dep >= card.shape[0] or (max_depth >= 0 and child_dep >= max_depth)
            _sibling_bounds(l, f, used, lit_off, cnt, zob, lam_w, tol, leaves,
                            nd_i, nd_f, nd_h, lit_store, ht_key, ht_val, B, W, lnode, S, nzw, nnz,
                            allmask, lit_bits, memo_rows, max_depth >= 0, ws[30])
        _lookahead(f, dep, S, nzw, nnz, lit_bits, cls_bits, mis_bits, lit_off, card, used, Z, y,
                   w, weighted, w0, lam_w, tol, max_depth, cc, need, Sj, jw, SjK, P, icnt,
                   lb_out, ub_out, similar, B, W, ctr)
    # Phase 2: store them.
    for t in range(ac_i[a, CS], ac_i[a, CS] + ac_i[a, NINC]):
        if ch[t] >= 0:
            continue
        g = -1 - ch[t]
        j = g - base_f
        if memo_rows:
            h = rows_key(S, nzw, nnz, lit_bits, g, dep + 1, max_depth >= 0)
        else:
            h = hl ^ zob[g]
        c = ctr[C_NODES]
        ctr[C_NODES] += 1
        # literals of the child: those of l with g inserted in order
        start = ctr[C_LITS]
        i = 0
        gdone = False
        for u in range(dep + 1):
            if not gdone and (i >= dep or g < lit_store[ls + i]):
                lit_store[start + u] = g
                gdone = True
            else:
                lit_store[start + u] = lit_store[ls + i]
                i += 1
        ctr[C_LITS] += dep + 1
        nd_i[c, LS] = start
        nd_i[c, DEP] = dep + 1
        nd_i[c, UBA] = -1
        nd_i[c, FLG] = 0
        nd_i[c, AS] = 0
        nd_i[c, NA] = 0
        base = N_FLOAT_FIELDS
        tot = 0.0
        mx = 0.0
        for k in range(K):
            v = cc[j, k]
            nd_f[c, base + k] = v
            tot += v
            if v > mx:
                mx = v
        eq = cc[j, K]
        nd_f[c, LEAF] = tot - mx
        nd_f[c, EQ] = eq
        nd_f[c, REST] = np.inf
        if lookahead > 0 or depth2:
            # UB is realised by the best depth-1 (depth-2) subtree; the tree extraction rebuilds
            # the best depth-2 subtree, no worse, for a branch never expanded. A child the
            # bounds solve is complete.
            lbj = lb_out[j]
            if j < 2 and ac_f[a, CL0 + j] > lbj:  # lifted along the chain at the expansion
                lbj = ac_f[a, CL0 + j]
                ctr[C_LIFTED] += 1
            nd_f[c, LB] = max(lbj, lam_w + eq)
            nd_f[c, UB] = ub_out[j]
            if lbj >= ub_out[j] - tol:
                nd_f[c, LB] = ub_out[j]
                nd_i[c, FLG] = COMPLETE
        else:
            nd_f[c, LB] = lam_w + eq  # purification (+ equivalent points): leaf > lam_w + eq
            nd_f[c, UB] = tot - mx
        if depth2 and dedup and nd_c.shape[1] > 0:  # its classes, from its depth-2 bounds
            for wi in range(nd_c.shape[1]):
                nd_c[c, wi] = cm[j, wi]
            nd_i[c, FLG] |= CLASSES
        nd_h[c] = h
        _insert(h, c, ht_key, ht_val)
        if dep + 1 > ctr[C_MAXDEP]:
            ctr[C_MAXDEP] = dep + 1
        ch[t] = c
    ac_i[a, MAT] = 1


@njit(cache=True)
def _count_children(S, SK, nzw, nnz, used, lit_bits, cls_bits, mis_bits, lit_off, Z, y, w,
                    weighted, w0, parent_w, parent_eq, cnt, icnt):
    """Class weights (then EQ) of every child branch ``l & (x_f = j)`` of every unused feature
    ``f`` into ``cnt``; ``S``/``nzw``/``nnz`` is the support of ``l``, ``parent_w`` and
    ``parent_eq`` its class weights and EQ (used without row weights)."""
    q = used.shape[0]
    K = cls_bits.shape[0]
    if weighted:
        for f in range(q):
            if used[f]:
                continue
            for g in range(lit_off[f], lit_off[f + 1]):
                for k in range(K + 1):
                    cnt[g, k] = 0.0
        for i in range(nnz):
            word = S[i]
            mis = mis_bits[nzw[i]]
            while word != 0:
                low = word & (~word + np.uint64(1))
                r = nzw[i] * 64 + np.int64(popcount(low - np.uint64(1)))
                word ^= low
                yr, wr = y[r], w[r]
                minority = (mis & low) != 0
                for f in range(q):
                    if not used[f]:
                        g = lit_off[f] + code(Z, r, f)
                        cnt[g, yr] += wr
                        if minority:
                            cnt[g, K] += wr
    else:
        # Popcounts of (support & class & literal); category 0 by subtraction from the parent.
        for i in range(nnz):
            for k in range(K - 1):
                SK[k, i] = S[i] & cls_bits[k, nzw[i]]
            SK[K - 1, i] = S[i] & mis_bits[nzw[i]]
        parent = np.empty(K + 1, np.int64)
        for k in range(K):
            parent[k] = np.int64(np.round(parent_w[k] / w0))
        parent[K] = np.int64(np.round(parent_eq / w0))
        for f in range(q):
            if used[f]:
                continue
            base = lit_off[f]
            # icnt[0..K]: what is left for category 0 (classes, then EQ); icnt[K+1..2K+1]:
            # this literal's counts (classes 0..K-2, then EQ)
            for k in range(K + 1):
                icnt[k] = parent[k]
            for g in range(base + 1, lit_off[f + 1]):
                tot = 0
                for k in range(K):
                    icnt[K + 1 + k] = 0
                for i in range(nnz):
                    lw = lit_bits[g, nzw[i]]
                    tot += np.int64(popcount(S[i] & lw))
                    for k in range(K):
                        icnt[K + 1 + k] += np.int64(popcount(SK[k, i] & lw))
                acc = 0
                for k in range(K - 1):
                    cnt[g, k] = icnt[K + 1 + k] * w0
                    icnt[k] -= icnt[K + 1 + k]
                    acc += icnt[K + 1 + k]
                cnt[g, K - 1] = (tot - acc) * w0
                icnt[K - 1] -= tot - acc
                cnt[g, K] = icnt[2 * K] * w0
                icnt[K] -= icnt[2 * K]
            for k in range(K + 1):
                cnt[base, k] = icnt[k] * w0


@njit(cache=True)
def _expand(l, lit_bits, cls_bits, mis_bits, allmask, lit_off, lit_feat, card, zob, Z, y, w,
            weighted, w0, lam_w, tol, max_depth, lookahead, nd_i, nd_f, nd_h, lit_store, ac_i,
            ac_f, ch, ht_key, ht_val, ctr, S, SK, nzw, used, cnt, icnt, tmpc, cand_i, cand_f,
            keep, cc, need, Sj, jw, P, lb_out, ub_out, similar, B, W, lnode, depth2, ws, UF, dedup,
            memo_rows, budget, refine_kept, nd_c):
    """Evaluate every split of branch ``l`` (the paper's EXPANSION step). With ``depth2``, the
    splits are refined in increasing order of their bound until the least refined bound (with
    ``refine_kept`` the ``keep + 1`` least) is no more than the others: a refined split's
    children not in the memo are bounded by their best split (:mod:`._pairs`: ``bl``), and
    solved when their best subtree of depth <= 1 meets it."""
    q = card.shape[0]
    K = cls_bits.shape[0]
    ls, dep = nd_i[l, LS], nd_i[l, DEP]
    ctr[C_EXPANSIONS] += 1
    was_expanded = (nd_i[l, FLG] & EXPANDED) != 0
    for f in range(q):
        used[f] = False
    for t in range(dep):
        used[lit_feat[lit_store[ls + t]]] = True
    nnz = _support(l, allmask, lit_bits, nd_i, lit_store, S, nzw)
    if dedup and nd_i[l, FLG] & CLASSES:  # the classes known (see nd_c)
        for f in range(q):
            if not used[f] and not (nd_c[l, f >> 6] >> np.uint64(f & 63)) & np.uint64(1):
                used[f] = True
                ctr[C_DEDUP] += 1
    elif dedup:  # one feature of every class splitting the rows alike (see _classes)
        ctr[C_DEDUP] += mark_duplicates(S, nzw, nnz, used, lit_bits, lit_off, UF, ws[19], ws[20])
        if nd_c.shape[1] > 0:
            for wi in range(nd_c.shape[1]):
                nd_c[l, wi] = np.uint64(0)
            for f in range(q):
                if not used[f]:
                    nd_c[l, f >> 6] |= np.uint64(1) << np.uint64(f & 63)
            nd_i[l, FLG] |= CLASSES
    leaf_l = nd_f[l, LEAF]
    child_dep = dep + 1
    children_are_leaves = child_dep >= q or (max_depth >= 0 and child_dep >= max_depth)
    R, cb, ck, T, cls, raw, own, bl, bu, bf, q1b, done, o3, BW, R1, T11, CT, pos = ws[:18]
    pairs = depth2 and not children_are_leaves
    nS = 0
    nw = 0
    nu = 0
    binary = False
    if pairs:
        for f in range(q):
            if not used[f]:
                UF[nu] = f
                nu += 1
        nS, nw, binary = prepare(S, nzw, nnz, UF, nu, Z, y, w, weighted, lit_bits, cls_bits,
                                 mis_bits, lit_off, card, K, R, cb, ck, raw, own, BW, R1, pos)
        sc = 1.0 if weighted else w0
        for i in range(nu):
            for g in range(lit_off[UF[i]], lit_off[UF[i] + 1]):
                for k in range(K + 1):
                    cnt[g, k] = raw[g, k] * sc
    else:
        _count_children(S, SK, nzw, nnz, used, lit_bits, cls_bits, mis_bits, lit_off, Z, y, w,
                        weighted, w0, nd_f[l, N_FLOAT_FIELDS:], nd_f[l, EQ], cnt, icnt)
    _sibling_bounds(l, -1, used, lit_off, cnt, zob, lam_w, tol, children_are_leaves, nd_i, nd_f,
                    nd_h, lit_store, ht_key, ht_val, B, W, lnode, S, nzw, nnz, allmask, lit_bits,
                    memo_rows, max_depth >= 0, ws[30])
    # Ordered thresholds (see _chains): the children's bounds B lifted along every chain into
    # CBl; candix[f]: the candidate of feature f (q: none), -1 for features not split here.
    nxt, prv, mem, pre, CBl, candix = ws[21], ws[22], ws[24], ws[25], ws[27], ws[28]
    lifting = False
    if pairs:
        for f in range(q):
            if nxt[f] >= 0:
                lifting = True
                break
    if lifting:
        for f in range(q):
            if used[f]:
                continue
            nonempty = 0
            for g in range(lit_off[f], lit_off[f + 1]):
                if row_leaf(cnt, g, K)[0] > 0.0:
                    nonempty += 1
            if nonempty >= 2:
                candix[f] = q
        lift_all(q, nxt, prv, candix, lit_off, B, CBl, mem, pre, cnt, K, 1.0, ws[29][0] != 0)
    # Pass 1: bound every split. ub_best is the best cost known achievable at l (the leaf, or a
    # split whose children are kept as leaves or at their incumbents); an action whose lower
    # bound reaches it can never be strictly better, so it is dropped (ties keep the incumbent).
    ub_best = leaf_l
    ub_cand = -1
    n_cand = 0
    tpos = 0
    for f in range(q):
        if used[f]:
            continue
        base, top = lit_off[f], lit_off[f + 1]
        nonempty = 0
        for g in range(base, top):
            tot = 0.0
            for k in range(K):
                tot += cnt[g, k]
            if tot > 0.0:
                nonempty += 1
        if nonempty < 2:  # every row takes one branch: same data, one feature fewer, +lam_w
            continue
        # ret: lam_w + exact cost of the complete children; qinc/uinc: bounds of the others
        ret = lam_w
        qinc = 0.0
        uinc = 0.0
        ninc = 0
        n_need = 0
        pruned = False
        for g in range(base, top):
            j = g - base
            need[j] = False
            tot, lc = row_leaf(cnt, g, K)
            if tot <= 0.0:
                continue
            eq = cnt[g, K]
            if lnode[g] == -2:  # a leaf is optimal there
                ret += lc
            else:
                c = lnode[g]
                if c >= 0:
                    ctr[C_HITS] += 1
                    if lifting and not (nd_i[c, FLG] & COMPLETE) and CBl[g] > nd_f[c, LB]:
                        # a chain neighbour's bound raises the stored branch's
                        ctr[C_LIFTED] += 1
                        _raise_lb(c, CBl[g], tol, nd_i, nd_f)
                    if nd_i[c, FLG] & COMPLETE:
                        ret += nd_f[c, LB]
                    else:
                        qinc += nd_f[c, LB]
                        uinc += nd_f[c, UB]
                        tmpc[tpos + ninc] = c
                        ninc += 1
                elif lifting and CBl[g] >= lc - tol:  # a leaf is optimal there after all
                    ctr[C_LIFTED] += 1
                    ret += lc
                elif lifting:
                    qinc += max(lam_w + eq, CBl[g])
                    uinc += lc
                    tmpc[tpos + ninc] = -1 - g  # stored lazily, on first selection
                    ninc += 1
                else:
                    qinc += lam_w + eq  # the look-ahead below may raise it
                    uinc += lc
                    if lookahead > dep + 1 and not depth2:
                        need[j] = True
                        n_need += 1
                        for k in range(K + 1):
                            cc[j, k] = cnt[g, k]
                    else:
                        tmpc[tpos + ninc] = -1 - g  # stored lazily, on first selection
                        ninc += 1
            if ret + qinc >= ub_best - tol:
                pruned = True
                break
        if not pruned and n_need > 0:
            # Children new to the memo: bound them by their best split (and solve those whose
            # best subtree of depth <= 1 is provably optimal) before comparing actions.
            _lookahead(f, dep, S, nzw, nnz, lit_bits, cls_bits, mis_bits, lit_off, card, used, Z,
                       y, w, weighted, w0, lam_w, tol, max_depth, cc, need, Sj, jw, SK, P, icnt,
                       lb_out, ub_out, similar, B, W, ctr)
            ctr[C_LOOKAHEADS] += n_need
            qinc = 0.0
            uinc = 0.0
            for t in range(ninc):
                c = tmpc[tpos + t]
                qinc += nd_f[c, LB]
                uinc += nd_f[c, UB]
            for j in range(top - base):
                if not need[j]:
                    continue
                B[base + j] = max(B[base + j], lb_out[j])  # for the siblings evaluated next
                if lb_out[j] >= ub_out[j] - tol:
                    ret += ub_out[j]
                    ctr[C_SOLVED] += 1
                else:
                    qinc += max(lb_out[j], lam_w + cnt[base + j, K])
                    uinc += ub_out[j]
                    tmpc[tpos + ninc] = -1 - (base + j)  # stored lazily, on first selection
                    ninc += 1
            pruned = ret + qinc >= ub_best - tol
        qv = ret + qinc
        ubv = ret + uinc
        if pruned:
            ctr[C_PRUNED] += 1
            continue
        cand_i[n_cand, 0] = f
        cand_i[n_cand, 1] = tpos
        cand_i[n_cand, 2] = ninc
        cand_f[n_cand, 0] = qv
        cand_f[n_cand, 1] = ret
        cand_f[n_cand, 2] = ubv
        if lifting:
            candix[f] = n_cand
        if ubv < ub_best:
            ub_best = ubv
            ub_cand = n_cand
        n_cand += 1
        tpos += ninc
    if pairs:
        # Pass 1b: refine the splits with the least bounds (children new to the memo bounded
        # by their best split) until the least unrefined bound is no less than a refined one.
        gc_leaves = dep + 2 >= q or (max_depth >= 0 and dep + 2 >= max_depth)
        sc = 1.0 if weighted else w0
        for i in range(n_cand):
            done[i] = False
        # q1b[:kk]: the least bounds of the splits refined so far, in order
        kk = min(keep + 1, q + 1) if refine_kept else 1
        n_ref = 0
        watch = nu * max(nw, 1) >= 2048  # a row's word operations (see _pairs.branch_bounds)
        while True:
            i = -1
            v = np.inf
            for o in range(n_cand):
                if not done[o] and cand_f[o, 0] < v:
                    v = cand_f[o, 0]
                    i = o
            if i < 0 or (n_ref >= kk and v >= q1b[kk - 1]) or v >= ub_best - tol:
                break
            if (watch or (n_ref & 15) == 15) and now() >= ws[31][0]:
                break  # the search is out of time: the other splits keep their bounds
            done[i] = True
            tpos = cand_i[i, 1]
            ninc = cand_i[i, 2]
            fresh = False
            for t in range(ninc):
                if tmpc[tpos + t] < 0:
                    fresh = True
            if fresh:
                f = cand_i[i, 0]
                if binary and K == 2:  # directly (see _pairs._row_binary)
                    _row_binary2(f, nu, nw, sc, lam_w, tol, gc_leaves, ck, BW, R1, T11, own, pos,
                                 lit_off, raw, bl, bu, budget)
                elif binary:
                    _row_binary(f, nu, nw, K, sc, lam_w, tol, gc_leaves, ck, BW, R1, T11, CT, own,
                                pos, lit_off, raw, bl, bu, budget)
                else:
                    pair_row(f, UF, nu, nS, nw, binary, Z, y, w, weighted, mis_bits, lit_off, card,
                             K, sc, lam_w, tol, gc_leaves, False, R, cb, ck, T, cls, raw, own, bl,
                             bu, bf, BW, R1, T11, CT, pos, budget)
                ctr[C_D2ROWS] += 1
                ret = cand_f[i, 1]
                qinc = 0.0
                uinc = 0.0
                t = 0
                while t < ninc:
                    c = tmpc[tpos + t]
                    if c >= 0:
                        qinc += nd_f[c, LB]
                        uinc += nd_f[c, UB]
                    else:
                        g = -1 - c
                        lbg = max(bl[g], CBl[g]) if lifting else bl[g]
                        if lbg >= bu[g] - tol:  # solved by its best split: never stored
                            ret += bu[g]
                            ctr[C_SOLVED] += 1
                            ninc -= 1
                            tmpc[tpos + t] = tmpc[tpos + ninc]
                            continue
                        qinc += lbg
                        uinc += bu[g]
                    t += 1
                if lifting and (nxt[f] >= 0 or prv[f] >= 0):
                    ctr[C_LIFTED] += _lift_refined(f, i, n_cand, lam_w, lit_off, lnode, bl, B,
                                                   CBl, candix, nxt, prv, mem, pre, cand_f,
                                                   done, cnt, K, ws[29][0] != 0)
                cand_i[i, 2] = ninc
                cand_f[i, 0] = ret + qinc
                cand_f[i, 1] = ret
                cand_f[i, 2] = ret + uinc
                if ret + uinc < ub_best:
                    ub_best = ret + uinc
                    ub_cand = i
            val = cand_f[i, 0]
            j = n_ref if n_ref < kk else (kk - 1 if val < q1b[kk - 1] else -1)
            if j >= 0:
                while j > 0 and q1b[j - 1] > val:
                    q1b[j] = q1b[j - 1]
                    j -= 1
                q1b[j] = val
            n_ref += 1
    # Pass 2: store the `keep` survivors with the lowest bounds (and the incumbent's action).
    order = np.argsort(cand_f[:n_cand, 0], kind="mergesort")
    astart = ctr[C_ACTS]
    na = 0
    minq = np.inf
    rest = np.inf
    best = -1
    uba = -1
    n_kept = 0
    for o in range(n_cand):
        i = order[o]
        qv = cand_f[i, 0]
        if qv >= ub_best - tol and i != ub_cand:
            ctr[C_PRUNED] += 1
            continue
        if n_kept >= keep and i != ub_cand:
            if qv < rest:
                rest = qv
            continue
        n_kept += 1
        a = ctr[C_ACTS]
        ctr[C_ACTS] += 1
        cs = ctr[C_CH]
        tpos = cand_i[i, 1]
        ninc = cand_i[i, 2]
        mat = 1
        for t in range(ninc):
            ch[cs + t] = tmpc[tpos + t]  # node id, or -1 - literal for a branch not stored yet
            if tmpc[tpos + t] < 0:
                mat = 0
        ctr[C_CH] += ninc
        ac_i[a, FEAT] = cand_i[i, 0]
        ac_i[a, CS] = cs
        ac_i[a, NINC] = ninc
        ac_i[a, MAT] = mat
        ac_f[a, Q] = qv
        ac_f[a, RET] = cand_f[i, 1]
        ac_f[a, CL0] = 0.0
        ac_f[a, CL1] = 0.0
        if lifting and card[cand_i[i, 0]] == 2:
            ac_f[a, CL0] = CBl[lit_off[cand_i[i, 0]]]
            ac_f[a, CL1] = CBl[lit_off[cand_i[i, 0]] + 1]
        na += 1
        if qv < minq:
            minq = qv
            best = a
        if i == ub_cand:
            uba = a
    if lifting:
        for f in range(q):
            candix[f] = -1
    nd_i[l, AS] = astart
    nd_i[l, NA] = na
    nd_i[l, FLG] |= EXPANDED
    nd_f[l, REST] = rest
    # An upper bound never rises: this expansion may know less about an earlier incumbent (its
    # children's look-ahead bounds, or the branch's depth-2 subtree) than the branch's bound
    # records; then keep the bound and its subtree (an action of an earlier expansion, or
    # UBA_DEPTH2: the best subtree of depth <= 2, which the tree extraction rebuilds).
    if uba >= 0 and ub_best < nd_f[l, UB]:
        nd_f[l, UB] = ub_best
        nd_i[l, UBA] = uba
    elif not was_expanded:
        nd_i[l, UBA] = UBA_DEPTH2 if nd_f[l, UB] < leaf_l - tol else -1
    if not _settle(l, best, minq, rest, leaf_l, tol, nd_i, nd_f, ac_i):
        # keep a stronger bound from before (the similar-support bound may give one)
        nd_f[l, LB] = max(nd_f[l, LB], min(minq, rest))


@njit(cache=True)
def _raise_lb(c, v, tol, nd_i, nd_f):
    """Raise the lower bound of the stored, incomplete branch ``c`` to ``v`` (a lower bound on
    its optimum, see :mod:`._chains`); complete when it meets the incumbent's cost."""
    if v >= nd_f[c, UB] - tol:  # its incumbent is optimal
        nd_f[c, LB] = nd_f[c, UB]
        nd_i[c, FLG] |= COMPLETE
    elif v > nd_f[c, LB]:
        nd_f[c, LB] = v


@njit(cache=True)
def _lift_refined(f, i, n_cand, lam_w, lit_off, lnode, bl, B, CBl, candix, nxt, prv, mem, pre,
                  cand_f, done, cnt, K, back):
    """After the depth-2 bounds ``bl`` of the children of candidate ``i`` (feature ``f``) of an
    expansion: lift them along ``f``'s chain (see :mod:`._chains`) and raise the bounds of the
    chain's candidates not refined yet; returns how many were raised."""
    for g in range(lit_off[f], lit_off[f] + 2):
        if lnode[g] == -1 and bl[g] > B[g]:
            B[g] = bl[g]
    m = members(f, nxt, prv, candix, mem)
    lift(mem, m, lit_off, B, CBl, pre, cnt, K, 1.0, back)
    raised = 0
    for k in range(m):
        o = candix[mem[k]]
        if o >= n_cand or done[o]:
            continue
        v = lam_w
        for g in range(lit_off[mem[k]], lit_off[mem[k]] + 2):
            if row_leaf(cnt, g, K)[0] > 0.0:
                v += CBl[g]
        if v > cand_f[o, 0]:
            cand_f[o, 0] = v
            raised += 1
    return raised


@njit(cache=True, inline="always")
def _settle(l, best, minq, rest, leaf, tol, nd_i, nd_f, ac_i):
    """Mark branch ``l`` complete when its leaf, its incumbent (``UB``, ``UBA``), or its best
    split whose children are all complete, is proven optimal; return whether it was.
    ``min(minq, rest)`` bounds every split not pruned, and pruned splits cost at least the
    best cost known at the time (the leaf or a split's upper bound, minus ``tol``)."""
    lo = min(minq, rest)
    ub = nd_f[l, UB]
    if leaf <= lo + tol and leaf <= ub + tol:
        nd_f[l, LB] = leaf
        nd_f[l, UB] = leaf
        nd_i[l, UBA] = -1
    elif lo >= ub - tol:
        nd_f[l, LB] = ub
    elif best >= 0 and ac_i[best, NINC] == 0 and minq <= rest:
        nd_f[l, LB] = minq
        nd_f[l, UB] = minq
        nd_i[l, UBA] = best
    else:
        return False
    nd_i[l, FLG] |= COMPLETE
    return True


@njit(cache=True)
def _update(p, a, tol, nd_i, nd_f, ac_i, ac_f, ch, mono=False):
    """Bellman update of action ``a`` of branch ``p`` and of ``p`` itself (BACKPROPAGATION).
    With ``mono``, the action's bound never falls while it has incomplete children: a bound
    from its expansion (lifted along a chain, see :mod:`._chains`) can exceed the sum of its
    children's stored bounds, and both are lower bounds on its cost."""
    if nd_i[p, FLG] & COMPLETE:
        return
    cs, ninc = ac_i[a, CS], ac_i[a, NINC]
    ret = ac_f[a, RET]
    t = 0
    while t < ninc:  # fold children that became complete into the exact part
        c = ch[cs + t]
        if nd_i[c, FLG] & COMPLETE:
            ret += nd_f[c, LB]
            ch[cs + t] = ch[cs + ninc - 1]
            ch[cs + ninc - 1] = c
            ninc -= 1
        else:
            t += 1
    qv = ret
    ubv = ret
    for t in range(ninc):
        c = ch[cs + t]
        qv += nd_f[c, LB]
        ubv += nd_f[c, UB]
    ac_i[a, NINC] = ninc
    ac_f[a, RET] = ret
    if mono and ninc > 0 and qv < ac_f[a, Q] + tol:  # no rise past rounding
        qv = ac_f[a, Q]
    ac_f[a, Q] = qv
    if ubv < nd_f[p, UB]:
        nd_f[p, UB] = ubv
        nd_i[p, UBA] = a
    minq = np.inf
    best = -1
    for b in range(nd_i[p, AS], nd_i[p, AS] + nd_i[p, NA]):
        if ac_f[b, Q] < minq:
            minq = ac_f[b, Q]
            best = b
    leaf_p = nd_f[p, LEAF]
    rest = nd_f[p, REST]
    if not _settle(p, best, minq, rest, leaf_p, tol, nd_i, nd_f, ac_i) and \
            min(minq, rest) > nd_f[p, LB]:
        nd_f[p, LB] = min(minq, rest)


@njit(cache=True, inline="always")
def _least_action(l, nd_i, ac_f):
    """``(action, its bound)``: the stored action of branch ``l`` with the least bound (the
    first on a tie; -1 and inf when none is stored)."""
    best = -1
    minq = np.inf
    for b in range(nd_i[l, AS], nd_i[l, AS] + nd_i[l, NA]):
        if ac_f[b, Q] < minq:
            minq = ac_f[b, Q]
            best = b
    return best, minq


@njit(cache=True, nogil=True)  # the progress lines' thread runs while it does
def run(lit_bits, cls_bits, mis_bits, allmask, lit_off, lit_feat, card, zob, Z, y, w, weighted,
        w0, lam_w, tol, max_depth, child_rule, keep, max_iter, max_nodes, lookahead, similar,
        depth2, dedup, memo_rows, budget, nxt, prv, chain_back, refresh, refine_kept, nd_i, nd_f,
        nd_h, lit_store, ac_i, ac_f, ch, ht_key, ht_val, ctr, nd_c, board):
    """Run BRANCHES iterations from the stored state until the root is complete (``DONE``),
    ``max_iter`` iterations were made or the clock passed ``board[DEADLINE]`` (``BUDGET``),
    the arrays may overflow (``GROW``) or the next expansion could pass ``max_nodes`` stored
    branches (``NODE_LIMIT``).

    ``board`` (:mod:`exactree.progress`): its deadline is read before every iteration and in
    the long loops of an expansion (which stop refining bounds past it: weaker bounds, never
    wrong ones, and only once the search stops anyway), so a call ends soon after it even when
    one expansion takes seconds; the iterations of this call, the best cost found and the
    root's bound are written there before every iteration (the progress lines read them while
    the kernel runs).

    ``child_rule`` picks the incomplete child to descend into: 0 the one with the least
    correctly classified weight (the paper's lowest ``H``), 1 the largest bound gap
    ``ub - lb``, 2 the largest support. ``lookahead`` (see ``_lookahead``): 0 off (plain
    purification + equivalent-points bounds), 1 when an action's children are stored, ``d + 1``
    also for every split evaluated by an expansion of a branch with fewer than ``d`` literals.
    ``similar`` adds the similar-support bound to the look-ahead (see ``_lookahead``).
    ``depth2`` replaces the look-ahead by the exact depth-2 bounds of :mod:`._pairs`: every
    child of every split evaluated is bounded by its best split, and every branch stored by its
    best depth-2 subtree (solved outright when that meets the bound). ``nxt``/``prv``: the
    chains of ordered thresholds (all -1: none), see :mod:`._chains`. ``refresh``: before
    descending through a branch's best action, bring that action's bound up to date from its
    children (shared through the memo, their bounds may have risen through other branches)
    and choose again while it rose; action bounds then never fall (see :func:`_update`).
    ``refine_kept``: an expansion refines its splits' bounds (pass 1b of :func:`_expand`) until
    the ``keep + 1`` least refined ones are no more than every bound not refined, not only the
    least one.
    """
    q = card.shape[0]
    K = cls_bits.shape[0]
    n_words = lit_bits.shape[1]
    G = lit_feat.shape[0]
    S = np.empty(n_words, np.uint64)
    SK = np.empty((K, n_words), np.uint64)
    nzw = np.empty(n_words, np.int64)
    used = np.empty(q, np.bool_)
    cnt = np.zeros((G, K + 1), np.float64)
    icnt = np.empty(2 * K + 2, np.int64)
    tmpc = np.empty(G + 1, np.int64)
    cand_i = np.empty((q + 1, 3), np.int64)
    cand_f = np.empty((q + 1, 3), np.float64)
    pn = np.empty(q + 2, np.int64)
    pa = np.empty(q + 2, np.int64)
    cmax = 0
    for f in range(q):
        cmax = max(cmax, card[f])
    # look-ahead buffers
    cc = np.zeros((cmax + 1, K + 1), np.float64)
    need = np.zeros(cmax + 1, np.bool_)
    Sj = np.empty(n_words, np.uint64)
    jw = np.empty(n_words, np.int64)
    P = np.zeros((G, K + 1), np.float64)
    lb_out = np.empty(cmax + 1, np.float64)
    ub_out = np.empty(cmax + 1, np.float64)
    B = np.zeros(G, np.float64)
    W = np.zeros(G, np.float64)
    lnode = np.zeros(G, np.int64)
    # depth-2 buffers (see _pairs)
    ws = workspace(Z[0].shape[0], n_words if depth2 else 1, q, G, K, cmax, board)  # see _pairs
    set_chains(ws, nxt, prv, chain_back)
    UF = np.empty(q + 1, np.int64)
    cm = np.zeros((cmax + 1, nd_c.shape[1]), np.uint64)
    it = 0
    it0 = ctr[C_ITERS]
    while it < max_iter:
        board[1] = ctr[C_ITERS] - it0  # NODES, BEST, LOWER (see exactree.progress)
        board[2] = nd_f[0, UB]
        board[3] = nd_f[0, LB]
        if nd_i[0, FLG] & COMPLETE:
            return DONE
        if now() >= board[0]:  # DEADLINE
            return BUDGET
        n_nodes = ctr[C_NODES]
        if (n_nodes + G + 1 > nd_i.shape[0] or 2 * (n_nodes + G + 1) > ht_key.shape[0]
                or ctr[C_LITS] + G * (ctr[C_MAXDEP] + 2) > lit_store.shape[0]
                or ctr[C_ACTS] + q + 1 > ac_i.shape[0] or ctr[C_CH] + G + 1 > ch.shape[0]):
            return GROW
        if max_nodes > 0 and n_nodes + G + 1 > max_nodes:
            return NODE_LIMIT
        it += 1
        ctr[C_ITERS] += 1
        # SELECTION: best action (lowest lower bound) at every level, then one incomplete child.
        l = 0
        plen = 0
        while True:
            if not (nd_i[l, FLG] & EXPANDED):
                _expand(l, lit_bits, cls_bits, mis_bits, allmask, lit_off, lit_feat, card, zob,
                        Z, y, w, weighted, w0, lam_w, tol, max_depth, lookahead, nd_i, nd_f, nd_h,
                        lit_store, ac_i, ac_f, ch, ht_key, ht_val, ctr, S, SK, nzw, used, cnt,
                        icnt, tmpc, cand_i, cand_f, keep, cc, need, Sj, jw, P, lb_out, ub_out,
                        similar, B, W, lnode, depth2, ws, UF, dedup, memo_rows, budget,
                        refine_kept, nd_c)
                break
            best, minq = _least_action(l, nd_i, ac_f)
            if refresh and best >= 0 and ac_i[best, MAT] != 0:
                # The bound of the chosen action may be stale: its children are shared with
                # other branches (the memo) and their bounds rose through those. Refresh it
                # from its children (a Bellman update) until the least bound is current.
                while True:
                    qold = ac_f[best, Q]
                    _update(l, best, tol, nd_i, nd_f, ac_i, ac_f, ch, refresh)
                    if nd_i[l, FLG] & COMPLETE or ac_f[best, Q] <= qold + tol:
                        break
                    ctr[C_REFRESHED] += 1
                    best, minq = _least_action(l, nd_i, ac_f)
                    if ac_i[best, MAT] == 0:
                        break
                if nd_i[l, FLG] & COMPLETE:
                    break
            if nd_f[l, REST] < minq:  # an action not stored is now the most promising
                ctr[C_REEXP] += 1
                _expand(l, lit_bits, cls_bits, mis_bits, allmask, lit_off, lit_feat, card, zob,
                        Z, y, w, weighted, w0, lam_w, tol, max_depth, lookahead, nd_i, nd_f, nd_h,
                        lit_store, ac_i, ac_f, ch, ht_key, ht_val, ctr, S, SK, nzw, used, cnt,
                        icnt, tmpc, cand_i, cand_f, keep, cc, need, Sj, jw, P, lb_out, ub_out,
                        similar, B, W, lnode, depth2, ws, UF, dedup, memo_rows, budget,
                        refine_kept, nd_c)
                break
            if ac_i[best, MAT] == 0:
                # First selection of this action: store its children, refresh its bound (the
                # memo may know more about them now) and choose again at the same branch.
                # Only materialisation stores branches, possibly several times per iteration:
                # stop the iteration when a next one might not fit (the next call grows).
                room = ctr[C_NODES] + cmax + 1
                if (room > nd_i.shape[0] or 2 * room > ht_key.shape[0]
                        or ctr[C_LITS] + cmax * (ctr[C_MAXDEP] + 2) > lit_store.shape[0]
                        or (max_nodes > 0 and room > max_nodes)):
                    break
                _materialize(l, best, lit_bits, cls_bits, mis_bits, allmask, lit_off, lit_feat,
                             card, zob, Z, y, w, weighted, w0, lam_w, tol, max_depth, lookahead,
                             nd_i, nd_f, nd_h, lit_store, ac_i, ac_f, ch, ht_key, ht_val, ctr, S,
                             nzw,
                             icnt, used, cc, need, Sj, jw, SK, P, lb_out, ub_out, similar, cnt,
                             B, W, lnode, depth2, ws, UF, dedup, memo_rows, budget, nd_c, cm)
                _update(l, best, tol, nd_i, nd_f, ac_i, ac_f, ch, refresh)
                if nd_i[l, FLG] & COMPLETE:
                    break
                continue
            pn[plen] = l
            pa[plen] = best
            plen += 1
            pick = -1
            score = -np.inf
            for t in range(ac_i[best, CS], ac_i[best, CS] + ac_i[best, NINC]):
                c = ch[t]
                if nd_i[c, FLG] & COMPLETE:
                    continue
                if child_rule == 0:
                    tot = 0.0
                    for k in range(K):
                        tot += nd_f[c, N_FLOAT_FIELDS + k]
                    s = -(tot - nd_f[c, LEAF])
                elif child_rule == 1:
                    s = nd_f[c, UB] - nd_f[c, LB]
                else:
                    s = 0.0
                    for k in range(K):
                        s += nd_f[c, N_FLOAT_FIELDS + k]
                if s > score:
                    score = s
                    pick = c
            if pick < 0:  # children completed through another parent: just refresh
                break
            l = pick
        # BACKPROPAGATION along the path, deepest first.
        for d in range(plen - 1, -1, -1):
            _update(pn[d], pa[d], tol, nd_i, nd_f, ac_i, ac_f, ch, refresh)
    board[1] = ctr[C_ITERS] - it0
    board[2] = nd_f[0, UB]
    board[3] = nd_f[0, LB]
    if nd_i[0, FLG] & COMPLETE:
        return DONE
    return BUDGET
