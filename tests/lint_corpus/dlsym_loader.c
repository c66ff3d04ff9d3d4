/* Shape of loaders that take driver functions by exported name (dlsym / GetProcAddress). */
#include <dlfcn.h>
#include <cudaTypedefs.h>

static void *lib;
static void *sym(const char *name) { return dlsym(lib, name); }

PFN_cuMemAlloc_v3020 p_alloc;
PFN_cuMemFree_v2000 p_free;
PFN_cuCtxCreate_v3020 p_ctx;
PFN_cuMemGetInfo_v3020 p_info;

void load(void) {
  lib = dlopen("libcuda.so.1", RTLD_NOW);
  p_alloc = (PFN_cuMemAlloc_v3020)dlsym(lib, "cuMemAlloc"); /* expect: CE011 */
  p_ctx = (PFN_cuCtxCreate_v3020)dlsym(lib, "cuCtxCreate_v2");
  p_free = (PFN_cuMemFree_v2000)sym("cuMemFree_v2"); /* expect: CE011 */
  p_info = (PFN_cuMemGetInfo_v3020)sym("cuMemGetInfo_v2");
  *(void **)(&p_alloc) = dlsym(lib, "cuMemAlloc_v2");
  void *nvml = dlsym(lib, "nvmlInit_v2");
  (void)nvml;
}
/* CE011: the export "cuMemAlloc" is the 2000 ABI, the pointer is the 3020 one; "cuMemFree_v2" is the 3020
   ABI through the sym() wrapper. Silent: matching exports, and names that are not driver functions. */
