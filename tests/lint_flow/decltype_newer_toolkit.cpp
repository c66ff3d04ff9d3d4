// decltype(&cuX) follows the compiling toolkit's cuda.h. No release's cuda.h renames cuMulticastBindMem (13.1+
// declares cuMulticastBindMem_v2 as a name of its own: the catalog's per-release facts, read from the real
// headers), so decltype(&cuMulticastBindMem) is the 12010 ABI in every build: a note, no warning that a toolkit
// renames it. cuLaunchHostFunc has a per-thread twin decltype names under CUDA_API_PER_THREAD_DEFAULT_STREAM.
#include <cuda.h>
#include <dlfcn.h>

#define DRIVER_FNS(X) X(cuMulticastBindMem, 13000) X(cuMemMap, 10020)
#define DECLARE(name, ver) static decltype(&::name) p_##name;
DRIVER_FNS(DECLARE)

bool load(void* lib) {
  CUdriverProcAddressQueryResult q;
#define LOAD(name, ver) \
  if (cuGetProcAddress(#name, (void**)&p_##name, ver, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return false;
  DRIVER_FNS(LOAD) // expect: CE004/note CE010/warning
  static auto host_fn = reinterpret_cast<decltype(&::cuLaunchHostFunc)>(dlsym(lib, "cuLaunchHostFunc")); // expect: CE011/warning
  static auto mem_map = reinterpret_cast<decltype(&::cuMemMap)>(dlsym(lib, "cuMemMap")); // expect: CE004/note
  return host_fn && mem_map;
}
