// A toolkit test on the runtime header's macro in a file that does not include the runtime header.
#include <cuda.h>
#include <cudaTypedefs.h>
static PFN_cuMemFree_v3020 p;
int f(void) {
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12000
  return cuGetProcAddress("cuMemFree", (void **)&p, 2000, 0, 0);
#else
  return 0;
#endif
}
