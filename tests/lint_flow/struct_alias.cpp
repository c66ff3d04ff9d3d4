// Shape of a codec loader's own prototypes: a project typedef of the wait parameters as the (layout-compatible)
// signal parameters struct; an `int *` for a `void *` handle. A pointer to another struct or for void is passed
// alike: the export's own ABI in a hand-written type (a CE004 note), not a wrong ABI; 64-bit outputs where the 2000
// ABI writes 32 bits are an error.
#include <cuda.h>
#include <dlfcn.h>

typedef CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS MY_WAIT_PARAMS;
typedef CUresult tcuWaitExternalSemaphoresAsync(const CUexternalSemaphore*, const MY_WAIT_PARAMS*, unsigned int, CUstream);
typedef CUresult tcuModuleGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUmodule hmod, const char* name);

typedef CUresult (*handle_t)(int* handle, CUdeviceptr dptr, size_t size, CUmemRangeHandleType type, unsigned long long f);

static tcuWaitExternalSemaphoresAsync* wait_sems;
static handle_t get_handle;
static tcuModuleGetGlobal* get_global;

void load(void* lib) {
  wait_sems = (tcuWaitExternalSemaphoresAsync*)dlsym(lib, "cuWaitExternalSemaphoresAsync"); // expect: CE004/note
  get_global = (tcuModuleGetGlobal*)dlsym(lib, "cuModuleGetGlobal"); // expect: CE011/error
  get_handle = (handle_t)dlsym(lib, "cuMemGetHandleForAddressRange"); // expect: CE004/note
}
