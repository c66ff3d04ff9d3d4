// Pins outside the symbol's ABI range, between ABIs, and wrong case.
#include <cuda.h>
#include <cudaTypedefs.h>

void pins() {
  void *p = nullptr;
  CUdriverProcAddressQueryResult q;
  CUresult r;
  r = cuGetProcAddress("cuMemAlloc", &p, 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); // expect: CE010
  r = cuGetProcAddress("cuMemAlloc", &p, 1000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); // expect: CE009
  r = cuGetProcAddress("cuCtxCreate", &p, 12040, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); // expect: CE010
  r = cuGetProcAddress("CUMemAlloc", &p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); // expect: CE003
  r = cuGetProcAddress("cuMemcpy_ptds", &p, 7000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); // expect: CE003
  r = cuGetProcAddress("cuMemcpyAsync", &p, 4000, 0, &q); // expect: CE007
  r = cuGetProcAddress("cuMemAlloc", &p, 3020, 0, &q); // silent: cuMemAlloc has no per-thread ABI, so flags 0 changes nothing
  cuGetProcAddress("cuMemFree", &p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); // expect: CE006
  r = cuGetProcAddress("cuMemAlloc", &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); // expect: CE001
  check(r, q);
}
