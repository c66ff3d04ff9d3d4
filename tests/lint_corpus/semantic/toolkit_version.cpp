// The version from the compiling toolkit, directly, through a constant and through a macro of the file.
#include <cudaTypedefs.h>

#define MY_VERSION CUDA_VERSION
static const int kBuilt = CUDA_VERSION;

int load() {
  PFN_cuMemAlloc_v3020 p = nullptr;
  CUdriverProcAddressQueryResult q;
  if (cuGetProcAddress("cuMemAlloc", (void**)&p, CUDA_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1; // expect: CE001
  if (cuGetProcAddress("cuMemAlloc", (void**)&p, kBuilt, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1; // expect: CE001
  if (cuGetProcAddress("cuMemAlloc", (void**)&p, MY_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1; // expect: CE001
  int drv = 0;
  if (cuDriverGetVersion(&drv)) return 1;
  if (cuGetProcAddress("cuMemAlloc", (void**)&p, drv, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1; // expect: CE001
  return 0;
}
