/* Modelled on a compiler runtime's launcher: bare dlsym for new functions, then entry points. */
#include <dlfcn.h>
#include <cuda.h>
#include <cudaTypedefs.h>

typedef CUresult (*cuTensorMapEncodeTiled_t)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                             const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                             const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                             CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
static cuTensorMapEncodeTiled_t encode;
static PFN_cuOccupancyMaxActiveClusters_v11070 max_clusters;

int load(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  void *raw = dlsym(lib, "cuTensorMapEncodeTiled");
  CUdriverProcAddressQueryResult q;
  CUresult rc = cuGetProcAddress("cuTensorMapEncodeTiled", (void **)&encode, CUDA_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); /* expect: CE001 CE004 CE006 */
  CUresult rc2 = cuGetProcAddress("cuOccupancyMaxActiveClusters", (void **)&max_clusters, 11070, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); /* expect: CE006 */
  return rc == CUDA_SUCCESS && raw != 0;
}
