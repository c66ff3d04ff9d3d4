// Shape of an X-macro driver table asked at one release number for every entry.
#include <cuda.h>
#include <cudaTypedefs.h>

#define DRIVER_TABLE(X) \
  X(cuMemAlloc, PFN_cuMemAlloc_v3020) \
  X(cuMemFree, PFN_cuMemFree_v3020) \
  X(cuCtxCreate, PFN_cuCtxCreate_v3020) \
  X(cuStreamCreate, PFN_cuStreamCreate_v2000) \
  X(cuModuleLoadData, PFN_cuModuleLoadData_v2000) \
  X(cuLaunchKernel, PFN_cuLaunchKernel_v4000) \
  X(cuMemGetInfo, PFN_cuMemGetInfo_v3020)

#define DECLARE(name, type) static type p_##name;
DRIVER_TABLE(DECLARE)

bool load_all() {
  CUdriverProcAddressQueryResult q;
#define LOAD(name, type) \
  if (cuGetProcAddress(#name, (void**)&p_##name, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return false;
  DRIVER_TABLE(LOAD) // expect: CE002/error
  return true;
}
