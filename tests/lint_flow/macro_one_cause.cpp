// Shape of a communication library's LOAD_SYM macro on cudaGetDriverEntryPoint: one finding at the macro (the cause),
// naming its expansions, not one per expansion.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>
static PFN_cuMemAlloc_v3020 p_alloc;
static PFN_cuMemFree_v3020 p_free;
#define LOAD_SYM(sym, pfn)                                                              \
  do {                                                                                  \
    cudaDriverEntryPointQueryResult qr;                                                 \
    if (cudaGetDriverEntryPoint(#sym, (void**)&pfn, cudaEnableLegacyStream, &qr) || qr) /* expect: CE005/warning */ \
      return false;                                                                     \
  } while (0)
bool load() {
  LOAD_SYM(cuMemAlloc, p_alloc);
  LOAD_SYM(cuMemFree, p_free);
  return true;
}
