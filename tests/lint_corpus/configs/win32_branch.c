/* The platform split of a C loader: dlsym on POSIX, GetProcAddress on Windows. */
#include <cuda.h>
#include <cudaTypedefs.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

static PFN_cuMemcpyHtoD_v3020 p_memcpy;

int open_driver(void) {
#ifdef _WIN32
    HMODULE lib = LoadLibraryA("nvcuda.dll");
    if (!lib) return -1;
    /* the unversioned export is the 32-bit-pointer ABI of 2.0 */
    p_memcpy = (PFN_cuMemcpyHtoD_v3020)GetProcAddress(lib, "cuMemcpyHtoD");
#else
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return -1;
    p_memcpy = (PFN_cuMemcpyHtoD_v3020)dlsym(lib, "cuMemcpyHtoD_v2");
#endif
    return p_memcpy ? 0 : -1;
}
