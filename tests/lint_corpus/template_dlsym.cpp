// A templated dlsym helper whose template argument is the pointer type.
#include <dlfcn.h>
#include <cudaTypedefs.h>

template <typename FuncPtr>
FuncPtr lookup(void* handle, const char* name) {
  return reinterpret_cast<FuncPtr>(dlsym(handle, name));
}

void load(void* h) {
  auto init = lookup<decltype(&cuInit)>(h, "cuInit"); // expect: CE004
  auto alloc = lookup<PFN_cuMemAlloc_v3020>(h, "cuMemAlloc_v2");
  auto ctx = lookup<PFN_cuCtxCreate_v3020>(h, "cuCtxCreate"); // expect: CE011
  auto nvml = lookup<void (*)(void)>(h, "nvmlInit_v2");
  (void)init; (void)alloc; (void)ctx; (void)nvml;
}
// Silent: the export whose ABI is the typedef's, and a name that is not a driver function.
