// A branch under a condition no -D or toolkit sets (a function-like macro, as cccl's _CCCL_CTK_AT_LEAST),
// whose request is written through a loader macro whose name starts with an underscore: entered by
// rewriting its #if, judged, and named by its branch. The include guard around it is never forced.
#ifndef MACRO_CONDITION_H
#define MACRO_CONDITION_H
#include <cuda.h>

#define _TK_AT_LEAST(major, minor) (CUDA_VERSION >= (major) * 1000 + (minor) * 10)

void* _get_driver_fn(const char* name, int version);

#define _GET_DRIVER_FN(name) _get_driver_fn(#name, 12000)

inline void* _get_driver_fn(const char* name, int version) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult q;
  if (cuGetProcAddress(name, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) != CUDA_SUCCESS ||
      q != CU_GET_PROC_ADDRESS_SUCCESS) return nullptr;
  return fn;
}

#if _TK_AT_LEAST(99, 0)
inline void* split() {
  return _GET_DRIVER_FN(cuDevSmResourceSplit);
}
#endif
#endif
