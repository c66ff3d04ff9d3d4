// A header that defines the loader macro; the source next to it only invokes it.
#pragma once
#include <cudaTypedefs.h>

#define RESOLVE(fn, sym, ver)                                                                  \
  do {                                                                                         \
    CUdriverProcAddressQueryResult q_;                                                         \
    CUresult r_ = cuGetProcAddress(sym, (void**)&(fn), ver, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q_); \
    if (r_ != CUDA_SUCCESS || q_ != CU_GET_PROC_ADDRESS_SUCCESS) return false;                 \
  } while (0)
