// A loader macro defined once per #if branch and expanded after the #endif (shaped like NCCL's LOAD_SYM):
// the definition the flags skip writes requests of its own, judged in its configuration at each expansion.
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#if USE_BY_VERSION
#define LOAD_SYM(symbol, version) \
  cudaGetDriverEntryPointByVersion(#symbol, (void**)&pfn_##symbol, version, cudaEnableDefault, &q)
#else
#define LOAD_SYM(symbol, version) \
  cudaGetDriverEntryPointByVersion(#symbol, (void**)&pfn_##symbol, version, cudaEnableLegacyStream, &q)
#endif

static PFN_cuMemcpyAsync_v4000 pfn_cuMemcpyAsync;

int load() {
  cudaDriverEntryPointQueryResult q;
  if (LOAD_SYM(cuMemcpyAsync, 4000) != cudaSuccess || q != cudaDriverEntryPointSuccess) return 1;
  return 0;
}
