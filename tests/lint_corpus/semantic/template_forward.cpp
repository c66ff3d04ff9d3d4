// Templates that forward the version and the flags as template arguments (one with a default).
#include <cudaTypedefs.h>

template <int Version, unsigned long long Flags = CU_GET_PROC_ADDRESS_LEGACY_STREAM>
CUresult resolve(const char* name, void** out) {
  CUdriverProcAddressQueryResult q;
  CUresult r = cuGetProcAddress(name, out, Version, Flags, &q);
  return r != CUDA_SUCCESS ? r : (q == CU_GET_PROC_ADDRESS_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND);
}

int load() {
  PFN_cuMemAlloc_v3020 alloc = nullptr;
  PFN_cuCtxCreate_v3020 create = nullptr;
  PFN_cuMemcpyAsync_v4000 copy = nullptr;
  if (resolve<3020>("cuMemAlloc", (void**)&alloc)) return 1;
  if (resolve<11040>("cuCtxCreate", (void**)&create)) return 1; // expect: CE002
  if (resolve<4000, CU_GET_PROC_ADDRESS_DEFAULT>("cuMemcpyAsync", (void**)&copy)) return 1; // expect: CE007
  return 0;
}
