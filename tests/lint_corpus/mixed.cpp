// One file asking for both stream modes.
#include <cuda.h>

void *a, *b;
void mixed() {
  CUdriverProcAddressQueryResult q;
  CUresult r = cuGetProcAddress("cuStreamQuery", &a, 7000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);
  r = cuGetProcAddress("cuStreamQuery", &b, 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q); // expect: CE008
  check(r, q);
}
