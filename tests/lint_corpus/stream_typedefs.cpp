// The flags decide which ABI binds: only the per-thread flag gives the _ptsz typedef's ABI.
#include <cudaTypedefs.h>

PFN_cuMemcpyAsync_v7000_ptsz copy_pt;
PFN_cuMemcpyAsync_v4000 copy_legacy;

int load() {
  CUdriverProcAddressQueryResult q;
  CUresult r = cuGetProcAddress("cuMemcpyAsync", (void**)&copy_pt, 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q);
  if (r != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS) return 1;
  r = cuGetProcAddress("cuMemcpyAsync", (void**)&copy_pt, 7000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); // expect: CE002 CE008
  if (r != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS) return 1;
  return 0;
}
// Silent: the per-thread flag with the _ptsz typedef. CE002: the legacy flag binds the legacy 4000 ABI,
// not the _ptsz one; and the file mixes modes (CE008).
