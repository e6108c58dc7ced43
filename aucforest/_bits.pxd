# Bit tricks shared by the splitters.

cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    static inline int aucforest_lowest_bit(unsigned long long x) {
        unsigned long i; _BitScanForward64(&i, x); return (int) i; }
    static inline int aucforest_bit_count(unsigned long long x) { return (int) __popcnt64(x); }
    #else
    static inline int aucforest_lowest_bit(unsigned long long x) { return __builtin_ctzll(x); }
    static inline int aucforest_bit_count(unsigned long long x) { return __builtin_popcountll(x); }
    #endif
    """
    # index of the lowest set bit of a non-zero x
    int lowest_bit "aucforest_lowest_bit"(unsigned long long x) noexcept nogil
    # number of set bits of x
    int bit_count "aucforest_bit_count"(unsigned long long x) noexcept nogil
