// Suppression comments: a whole line, or listed rules only.
#include <cuda.h>

void s() {
  void *p;
  CUdriverProcAddressQueryResult q;
  CUresult r = cuGetProcAddress("cuMemAlloc", &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); // cuentry: ignore
  r = cuGetProcAddress("cuStreamSynchronize", &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &q); // cuentry: ignore[CE001]  expect: CE007
  check(r, q);
}
