// The getter fetched through itself, then used by pointer.
#include <cudaTypedefs.h>

PFN_cuMemcpyAsync_v4000 p_copy;
PFN_cuMemAlloc_v3020 p_alloc;

int load() {
  void* gpa_raw = nullptr;
  CUdriverProcAddressQueryResult q;
  CUresult r = cuGetProcAddress("cuGetProcAddress", &gpa_raw, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);
  if (r != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS) return 1;
  PFN_cuGetProcAddress_v12000 gpa = (PFN_cuGetProcAddress_v12000)gpa_raw;
  r = gpa("cuMemAlloc", (void**)&p_alloc, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);
  if (r != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS) return 1;
  r = gpa("cuMemcpyAsync", (void**)&p_copy, 4000, CU_GET_PROC_ADDRESS_DEFAULT, &q); // expect: CE007
  if (r != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS) return 1;
  gpa("cuMemFree", (void**)&p_alloc, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, nullptr); // expect: CE002 CE006
  return 0;
}
