// Version 0 and versions below the first ABI: the request never resolves.
#include <cudaTypedefs.h>

int load() {
  PFN_cuMemAlloc_v3020 p = nullptr;
  CUdriverProcAddressQueryResult q;
  if (cuGetProcAddress("cuMemAlloc", (void**)&p, 0, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1; // expect: CE009
  if (cuGetProcAddress("cuMemAlloc", (void**)&p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1;
  return 0;
}
