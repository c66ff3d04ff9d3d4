// decltype(&cuX) follows the compiling toolkit's cuda.h: a name a newer toolkit renames to another ABI
// (`#define cuMulticastBindMem cuMulticastBindMem_v2` in 13.1+) binds the wrong ABI in that build: a warning, as
// the catalog does not record which toolkit renames the name (and which declares `_v2` as a name of its own).
#include <cuda.h>
#include <dlfcn.h>

#define DRIVER_FNS(X) X(cuMulticastBindMem, 13000) X(cuMemMap, 10020)
#define DECLARE(name, ver) static decltype(&::name) p_##name;
DRIVER_FNS(DECLARE)

bool load(void* lib) {
  CUdriverProcAddressQueryResult q;
#define LOAD(name, ver) \
  if (cuGetProcAddress(#name, (void**)&p_##name, ver, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return false;
  DRIVER_FNS(LOAD) // expect: CE002/warning CE004/note CE010/warning
  static auto host_fn = reinterpret_cast<decltype(&::cuLaunchHostFunc)>(dlsym(lib, "cuLaunchHostFunc")); // expect: CE011/warning
  static auto mem_map = reinterpret_cast<decltype(&::cuMemMap)>(dlsym(lib, "cuMemMap")); // expect: CE011/note
  return host_fn && mem_map;
}
