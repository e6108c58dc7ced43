# cython: language_level=3
"""Isotonic values at a new case for every place it can take, in one sweep.

The kernel of the inductive Venn-Abers predictor
(`aucforest._calibration_maps.VennAbersCalibration`), after Vovk, Petej &
Fedorova (2015, section 3, Algorithms 1-2): blocks 0..n-1 (distinct scores,
ascending) of weight w_j > 0 and label total y_j (0 <= y_j <= w_j), and a new
case of weight 1 and label 1 placed in gap g (after blocks 0..g-1). Its
isotonic value is the slope of the greatest convex minorant (GCM) of the
cumulative sum diagram (CSD) over the new case's step (Barlow et al. 1972).
With C_j = (sum_{i<j} w_i, sum_{i<j} y_i), the diagram of gap g is, the part
before the new case moved down by its step (1, 1):

    D_g = A_0, ..., A_g, C_g, ..., C_n,    A_j = C_j - (1, 1),

and the value is the slope of the GCM edge over [A_g, C_g], the bridge from a
vertex A_a to a vertex C_b. One stack holds the GCM of D_g from A_a on
(leftmost on top); the sweep moves the new case right one block at a time:

* D_{g+1} has A_{g+1} in place of C_g, and C_g lies on or above D_{g+1}'s
  polyline (it goes A_g -> A_{g+1} -> C_{g+1} by (w, y) then (1, 1), the
  lower of the two orders since y / w <= 1), so the GCM of D_{g+1} is that of
  D_g with the point A_{g+1} added;
* the bridge's left end never moves left (a point left of A_a stays above
  every later bridge) and is A_a or A_{g+1} (a bridge from A_j, a < j <= g,
  would have slope > 1, which no bridge has), so each step inserts A_{g+1}:
  above the GCM it changes nothing, otherwise it becomes the top and the
  vertices on its right that it hides are popped.

Every point is pushed and popped at most once: O(n) after the sort. The
values for a new case of label 0 are those of label 1 on the blocks reversed
with the labels flipped (y -> w - y), read backwards as one minus the value.
Coordinates are long doubles, so the slopes, differences of cumulative sums,
carry about the rounding of the sums of a single pooled block.
"""
import numpy as np

ctypedef Py_ssize_t idx_t


cdef inline long double _height_above(long double ax, long double ay, long double bx,
                                      long double by, long double px,
                                      long double py) noexcept nogil:
    """(px - ax)(by - ay) subtracted from (py - ay)(bx - ax): > 0 when p lies
    above the line through a and b (bx > ax), 0 on it, < 0 below."""
    return (py - ay) * (bx - ax) - (by - ay) * (px - ax)


def upper_gap_values(const double[::1] weight, const double[::1] total):
    """Isotonic value of a new case of weight 1 and label 1 in every gap.

    Parameters
    ----------
    weight : float64 array (n,)
        Weight of each block (distinct score, ascending), all > 0.
    total : float64 array (n,)
        Label total of each block, in [0, weight].

    Returns
    -------
    float64 array (n + 1,)
        Entry g: the new case's isotonic value when placed after blocks
        0..g-1 (g = n: after all of them, the value 1).
    """
    cdef idx_t n = weight.shape[0], j, g, i, top
    if total.shape[0] != n:
        raise ValueError(f"weight has {n} blocks, total {total.shape[0]}")
    values = np.empty(n + 1)
    cdef double[::1] out = values
    cdef long double[::1] cx = np.empty(n + 1, dtype=np.longdouble)
    cdef long double[::1] cy = np.empty(n + 1, dtype=np.longdouble)
    # the stack: index 0 holds C_n (never popped), `top` the leftmost vertex
    cdef long double[::1] sx = np.empty(n + 2, dtype=np.longdouble)
    cdef long double[::1] sy = np.empty(n + 2, dtype=np.longdouble)
    cdef long double px, py
    with nogil:
        cx[0] = 0.0
        cy[0] = 0.0
        for j in range(n):
            cx[j + 1] = cx[j] + weight[j]
            cy[j + 1] = cy[j] + total[j]
        # Algorithm 1: the GCM of D_0 = A_0, C_0, ..., C_n, built right to left
        top = -1
        for j in range(n, -2, -1):
            if j >= 0:
                px, py = cx[j], cy[j]
            else:
                px, py = -1.0, -1.0  # A_0
            while top >= 1 and _height_above(px, py, sx[top - 1], sy[top - 1],
                                             sx[top], sy[top]) >= 0:
                top -= 1  # the top is on or above the chord from the new point on
            top += 1
            sx[top], sy[top] = px, py
        # Algorithm 2: the value at gap g, then insert A_{g+1}
        for g in range(n):
            out[g] = <double>((sy[top - 1] - sy[top]) / (sx[top - 1] - sx[top]))
            px, py = cx[g + 1] - 1.0, cy[g + 1] - 1.0
            # vertices left of A_{g+1} besides the top: points C_j of D_g gone from D_{g+1}
            i = top
            while sx[i - 1] <= px:  # stops at C_n, right of A_{g+1}
                i -= 1
            if _height_above(sx[i], sy[i], sx[i - 1], sy[i - 1], px, py) <= 0:
                top = i - 1  # A_{g+1} on or below the GCM: the new left end
                while top >= 1 and _height_above(px, py, sx[top - 1], sy[top - 1],
                                                 sx[top], sy[top]) >= 0:
                    top -= 1
                top += 1
                sx[top], sy[top] = px, py
            elif i < top:  # the left end stays; drop the points gone between
                sx[i], sy[i] = sx[top], sy[top]
                top = i
        out[n] = 1.0
    return values


def venn_abers_gap_values(const double[::1] weight, const double[::1] total):
    """Venn-Abers pair (p0, p1) of a new case of weight 1 in every gap.

    Parameters
    ----------
    weight : float64 array (n,)
        Weight of each block (distinct score, ascending), all > 0.
    total : float64 array (n,)
        Label total of each block, in [0, weight].

    Returns
    -------
    float64 array (n + 1, 2)
        Row g: the isotonic values of the new case with label 0 and with
        label 1, placed after blocks 0..g-1.
    """
    cdef idx_t n = weight.shape[0]
    bounds = np.empty((n + 1, 2))
    bounds[:, 1] = upper_gap_values(weight, total)
    flipped_weight = np.ascontiguousarray(np.asarray(weight)[::-1])
    flipped_total = np.ascontiguousarray(flipped_weight - np.asarray(total)[::-1])
    bounds[:, 0] = 1.0 - upper_gap_values(flipped_weight, flipped_total)[::-1]
    bounds[0, 0] = 0.0
    return bounds
