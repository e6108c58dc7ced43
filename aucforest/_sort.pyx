# cython: language_level=3
"""Sort a node's feature values, carrying the sample indices along.

Each (value, sample) pair is packed into one 64-bit key: the float32 value
mapped to an order-preserving unsigned 32-bit integer in the high half, the
sample index in the low half. Keys are then unique integers, sorted by an LSD
radix sort (three 11-bit passes, skipping passes whose digit is constant) for
large nodes and by quicksort for small ones; both move one array instead of
two and compare integers instead of floats. -0.0 sorts as +0.0 and NaN last.
"""
import numpy as np

from libc.stdint cimport uint32_t, uint64_t
from libc.string cimport memcpy, memset


cdef inline uint64_t _order_key(X_t value) noexcept nogil:
    """float32 -> uint32 preserving order (IEEE sign-magnitude to unsigned)."""
    cdef uint32_t bits
    if value != value:
        return 0xFFFFFFFFULL
    value = value + <X_t> 0.0  # -0.0 becomes +0.0
    memcpy(&bits, &value, sizeof(uint32_t))
    if bits >> 31:
        return <uint64_t> (~bits)
    return <uint64_t> (bits | 0x80000000U)


cdef inline X_t _value_of(uint64_t key) noexcept nogil:
    cdef uint32_t bits = <uint32_t> (key >> 32)
    cdef X_t value
    bits = (bits & 0x7FFFFFFFU) if bits >> 31 else ~bits
    memcpy(&value, &bits, sizeof(uint32_t))
    return value


cdef void _insertion_sort(uint64_t* keys, idx_t n) noexcept nogil:
    cdef idx_t i, j
    cdef uint64_t key
    for i in range(1, n):
        key = keys[i]
        j = i
        while j > 0 and keys[j - 1] > key:
            keys[j] = keys[j - 1]
            j -= 1
        keys[j] = key


cdef void _sift_down(uint64_t* keys, idx_t root, idx_t end) noexcept nogil:
    cdef idx_t child, largest
    while True:
        child = 2 * root + 1
        largest = root
        if child < end and keys[largest] < keys[child]:
            largest = child
        if child + 1 < end and keys[largest] < keys[child + 1]:
            largest = child + 1
        if largest == root:
            return
        keys[root], keys[largest] = keys[largest], keys[root]
        root = largest


cdef void _heapsort(uint64_t* keys, idx_t n) noexcept nogil:
    cdef idx_t start = (n - 2) // 2, end
    while True:
        _sift_down(keys, start, n)
        if start == 0:
            break
        start -= 1
    end = n - 1
    while end > 0:
        keys[0], keys[end] = keys[end], keys[0]
        _sift_down(keys, 0, end)
        end -= 1


cdef inline uint64_t _median3(uint64_t a, uint64_t b, uint64_t c) noexcept nogil:
    if a < b:
        if b < c:
            return b
        return c if a < c else a
    if b < c:
        return a if a < c else c
    return b


cdef void _quicksort(uint64_t* keys, idx_t n, int depth_limit) noexcept nogil:
    """Introsort: quicksort (Hoare partition around a median of three, which
    stops at keys equal to the pivot, so repeated keys are fine), heapsort
    past the depth limit, insertion sort for short runs."""
    cdef uint64_t pivot
    cdef idx_t i, j
    while n > 16:
        if depth_limit == 0:
            _heapsort(keys, n)
            return
        depth_limit -= 1
        pivot = _median3(keys[0], keys[n // 2], keys[n - 1])
        i = 0
        j = n - 1
        while True:  # Hoare partition
            while keys[i] < pivot:
                i += 1
            while keys[j] > pivot:
                j -= 1
            if i >= j:
                break
            keys[i], keys[j] = keys[j], keys[i]
            i += 1
            j -= 1
        _quicksort(keys, j + 1, depth_limit)
        keys += j + 1
        n -= j + 1
    _insertion_sort(keys, n)


cdef uint64_t* _radix_sort(uint64_t* keys, uint64_t* scratch, idx_t n,
                           idx_t* histogram) noexcept nogil:
    """LSD radix sort on bits 32..63; returns the buffer holding the result."""
    cdef idx_t i, d, total, count
    cdef int shift
    cdef idx_t* counts
    cdef uint64_t* source = keys
    cdef uint64_t* target = scratch
    memset(histogram, 0, 3 * RADIX_BUCKETS * sizeof(idx_t))
    for i in range(n):
        histogram[(keys[i] >> 32) & (RADIX_BUCKETS - 1)] += 1
        histogram[RADIX_BUCKETS + ((keys[i] >> (32 + RADIX_BITS)) & (RADIX_BUCKETS - 1))] += 1
        histogram[2 * RADIX_BUCKETS + (keys[i] >> (32 + 2 * RADIX_BITS))] += 1
    for d in range(3):
        shift = 32 + d * RADIX_BITS
        counts = histogram + d * RADIX_BUCKETS
        if counts[(source[0] >> shift) & (RADIX_BUCKETS - 1)] == n:
            continue  # every key has the same digit here
        total = 0
        for i in range(RADIX_BUCKETS):
            count = counts[i]
            counts[i] = total
            total += count
        for i in range(n):
            target[counts[(source[i] >> shift) & (RADIX_BUCKETS - 1)]] = source[i]
            counts[(source[i] >> shift) & (RADIX_BUCKETS - 1)] += 1
        source, target = target, source
    return source


cdef void sort_by_value(X_t* values, idx_t* samples, idx_t n, uint64_t* keys,
                        uint64_t* scratch, idx_t* histogram) noexcept nogil:
    """Sort values[:n] ascending and permute samples[:n] alike.

    keys and scratch are work buffers of n entries, histogram one of
    3 * RADIX_BUCKETS; sample indices must be below 2**32.
    """
    cdef idx_t i
    cdef uint64_t* result = keys
    if n < 2:
        return
    for i in range(n):
        keys[i] = (_order_key(values[i]) << 32) | <uint64_t> samples[i]
    if n >= RADIX_MIN_SIZE:
        result = _radix_sort(keys, scratch, n, histogram)
    else:
        _quicksort(keys, n, 2 * _floor_log2(n))
    for i in range(n):
        samples[i] = <idx_t> (result[i] & 0xFFFFFFFFULL)
        values[i] = _value_of(result[i])


cdef void sort_doubles(double* values, idx_t n) noexcept nogil:
    """Sort doubles (no NaN) ascending in place: each is mapped to an
    unsigned 64-bit key in the same order (sign-magnitude to unsigned, as
    `_order_key` does for float32), the keys go through the introsort above
    (integer compares, no comparator calls) and are mapped back."""
    cdef idx_t i
    cdef uint64_t* keys = <uint64_t*> values  # the same 8 bytes, read as a key
    cdef uint64_t bits
    if n < 2:
        return
    for i in range(n):
        memcpy(&bits, &values[i], sizeof(uint64_t))
        keys[i] = ~bits if bits >> 63 else bits | 0x8000000000000000ULL
    _quicksort(keys, n, 2 * _floor_log2(n))
    for i in range(n):
        bits = keys[i]
        bits = bits & 0x7FFFFFFFFFFFFFFFULL if bits >> 63 else ~bits
        memcpy(&values[i], &bits, sizeof(uint64_t))


cdef void sort_indices(idx_t* values, idx_t n) noexcept nogil:
    """Sort non-negative indices ascending in place (as unsigned 64-bit keys,
    whose order is theirs, through the introsort above)."""
    if n < 2:
        return
    _quicksort(<uint64_t*> values, n, 2 * _floor_log2(n))


def sort_indices_for_tests(values):
    """Sort non-negative intp values with `sort_indices`; returns the sorted copy."""
    cdef idx_t[::1] v = np.array(values, dtype=np.intp).ravel()
    if v.shape[0] > 0:
        sort_indices(&v[0], v.shape[0])
    return np.asarray(v)


def sort_doubles_for_tests(values):
    """Sort float64 values with `sort_doubles`; returns the sorted copy."""
    cdef double[::1] v = np.array(values, dtype=np.float64).ravel()
    if v.shape[0] > 0:
        sort_doubles(&v[0], v.shape[0])
    return np.asarray(v)


cdef inline int _floor_log2(idx_t n) noexcept nogil:
    cdef int bits = 0
    while n > 1:
        n >>= 1
        bits += 1
    return bits


def sort_for_tests(values, samples=None):
    """Sort float32 values with the kernel's sort; returns (values, samples)."""
    cdef X_t[::1] v = np.array(values, dtype=np.float32).ravel()
    cdef idx_t n = v.shape[0]
    cdef idx_t[::1] s = (np.arange(n, dtype=np.intp) if samples is None
                         else np.array(samples, dtype=np.intp))
    cdef uint64_t[::1] keys = np.empty(max(n, 1), dtype=np.uint64)
    cdef uint64_t[::1] scratch = np.empty(max(n, 1), dtype=np.uint64)
    cdef idx_t[::1] histogram = np.empty(3 * RADIX_BUCKETS, dtype=np.intp)
    if n > 0:
        sort_by_value(&v[0], &s[0], n, &keys[0], &scratch[0], &histogram[0])
    return np.asarray(v), np.asarray(s)
