// Severity by consequence: a pin above every driver (a typo of 11040) never resolves: an error; a pin of
// cudaGetDriverEntryPointByVersion at or below the 12.0 driver the API implies costs nothing: a note.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>
void f() {
  PFN_cuMemAlloc_v3020 a; PFN_cuCtxCreate_v3020 c;
  CUdriverProcAddressQueryResult q; cudaDriverEntryPointQueryResult rq;
  if (cuGetProcAddress("cuMemAlloc", (void**)&a, 110400, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return; // expect: CE009/error
  if (cudaGetDriverEntryPointByVersion("cuCtxCreate", (void**)&c, 12000, cudaEnableLegacyStream, &rq) || rq) return; // expect: CE002/error CE010/note
  if (cudaGetDriverEntryPointByVersion("cuCtxCreate", (void**)&c, 12080, cudaEnableLegacyStream, &rq) || rq) return; // expect: CE002/error CE010/warning
}
