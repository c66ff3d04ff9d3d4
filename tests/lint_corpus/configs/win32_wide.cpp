// A C++ loader split on WIN32 (no underscore), with <Windows.h> spelled as some projects do and the
// wide LoadLibrary of UNICODE builds.
#include <cuda.h>
#include <cudaTypedefs.h>
#if defined(WIN32)
#include <Windows.h>
static HINSTANCE lib;
#else
#include <dlfcn.h>
static void *lib;
#endif
static PFN_cuMemAlloc_v3020 p;
bool load() {
#if defined(WIN32)
  lib = LoadLibrary(L"nvcuda.dll");
  if (lib == NULL) return false;
  p = (PFN_cuMemAlloc_v3020)GetProcAddress(lib, "cuMemAlloc");
  return FreeLibrary(lib) == TRUE;
#else
  lib = dlopen("libcuda.so.1", RTLD_NOW);
  p = (PFN_cuMemAlloc_v3020)dlsym(lib, "cuMemAlloc_v2");
  return p != nullptr;
#endif
}
