// A loader macro defined once per `#if CUDART_VERSION` branch and expanded outside the branches: the requests of a
// branch the flags skip are judged in a configuration that enters it (its runtime's version). cudaGetDriverEntryPoint
// asks at the version of the runtime the program runs with: a 12.5+ runtime gives cuCtxCreate's 12050 ABI.
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

PFN_cuCtxCreate_v11040 pfn_cuCtxCreate;
PFN_cuMemAlloc_v3020 pfn_cuMemAlloc;

#if CUDART_VERSION >= 13000
#define LOAD(sym, ver) \
  if (cudaGetDriverEntryPointByVersion(#sym, (void**)&pfn_##sym, ver, cudaEnableLegacyStream, &q) || q) return 1;
#elif CUDART_VERSION >= 12000
#define LOAD(sym, ver) \
  if (cudaGetDriverEntryPoint(#sym, (void**)&pfn_##sym, cudaEnableLegacyStream, &q) || q) return 1; // expect: CE005
#endif

int load() {
  cudaDriverEntryPointQueryResult q;
  LOAD(cuCtxCreate, 11040) // expect: CE002/error
  LOAD(cuMemAlloc, 3020)
  return 0;
}
// Expected (clang): CE002, an error, at LOAD(cuCtxCreate, ...) (the 12.x branch binds 12050 with a 12.5+ runtime, another
// signature than the pointer's 11040); CE005 once, at the #define of the 12.x branch that calls cudaGetDriverEntryPoint.
// cuMemAlloc's newest ABI is its typedef's.
