# Software prefetch: ask for a cache line ahead of a read whose address the
# hardware prefetchers cannot foresee (a no-op where the compiler lacks it).

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define AF_PREFETCH(address) __builtin_prefetch(address)
    #else
    #define AF_PREFETCH(address) ((void) 0)
    #endif
    """
    void prefetch "AF_PREFETCH" (const void* address) noexcept nogil
