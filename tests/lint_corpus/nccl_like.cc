// Modelled on a communication library's loader: the old bug passed the driver's version.
#include <cuda.h>
#include <cudaTypedefs.h>

#define CU_PIN_MEMALLOC 3020
static PFN_cuMemAlloc_v3020 pfn_cuMemAlloc;
static PFN_cuCtxCreate_v3020 pfn_cuCtxCreate;

int load() {
  int driverVersion = 0;
  CUresult res = cuDriverGetVersion(&driverVersion);
  CUdriverProcAddressQueryResult st;
  res = cuGetProcAddress("cuMemAlloc", (void **)&pfn_cuMemAlloc, driverVersion, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st); // expect: CE001
  res = cuGetProcAddress("cuMemAlloc", (void **)&pfn_cuMemAlloc, CU_PIN_MEMALLOC, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st);
  res = cuGetProcAddress("cuCtxCreate_v2", (void **)&pfn_cuCtxCreate, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st); // expect: CE003  (not CE002 too: the suffixed name of the typedef's own symbol)
  return res == CUDA_SUCCESS && st == CU_GET_PROC_ADDRESS_SUCCESS;
}
