// Shape of a codec loader's own prototypes: a project typedef of the wait parameters as the (layout-compatible)
// signal parameters struct. A pointer to another struct is passed alike: a warning, not a wrong ABI.
#include <cuda.h>
#include <dlfcn.h>

typedef CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS MY_WAIT_PARAMS;
typedef CUresult tcuWaitExternalSemaphoresAsync(const CUexternalSemaphore*, const MY_WAIT_PARAMS*, unsigned int, CUstream);
typedef CUresult tcuModuleGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUmodule hmod, const char* name);

static tcuWaitExternalSemaphoresAsync* wait_sems;
static tcuModuleGetGlobal* get_global;

void load(void* lib) {
  wait_sems = (tcuWaitExternalSemaphoresAsync*)dlsym(lib, "cuWaitExternalSemaphoresAsync"); // expect: CE011/warning
  get_global = (tcuModuleGetGlobal*)dlsym(lib, "cuModuleGetGlobal"); // expect: CE011/error
}
