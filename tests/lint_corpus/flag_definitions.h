// A copy of cuda.h's flag enum and its inline per-thread helper: definitions and masks are not uses.
typedef enum CUdriverProcAddress_flags_enum {
    CU_GET_PROC_ADDRESS_DEFAULT = 0,
    CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1 << 0,             // silent: an enumerator
    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 1 << 1  // silent: an enumerator
} CUdriverProcAddress_flags;

static inline int has_mode(unsigned long long flags) {
    const int mask = (CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);  // silent
    return (flags & mask) != 0;
}
