// A lambda that returns what dlsym returned is a lookup at each of its calls, whatever its name: each call's result
// is judged by the cast it lands in. Hand-written types that are the export's ABI (or differ only in what a pointer
// points to) are notes, one per row; an export of another ABI is an error; a PFN typedef of the export is silent.
#include <cudaTypedefs.h>
#include <dlfcn.h>

struct Driver {
  CUresult (*get_name)(CUresult, const char**);
  CUresult (*htod)(CUdeviceptr, void*, size_t);
  CUresult (*dtoh)(void*, CUdeviceptr, size_t);
  PFN_cuLaunchKernel_v4000 launch;

  explicit Driver(void* h) {
    auto find = [](void* lib, const char* name) {
      void* got = dlsym(lib, name);
      return got;
    };
    get_name = reinterpret_cast<CUresult (*)(CUresult, const char**)>(find(h, "cuGetErrorName")); // expect: CE004/note
    htod = reinterpret_cast<CUresult (*)(CUdeviceptr, void*, size_t)>(find(h, "cuMemcpyHtoD_v2")); // expect: CE004/note
    dtoh = reinterpret_cast<CUresult (*)(void*, CUdeviceptr, size_t)>(find(h, "cuMemcpyDtoH")); // expect: CE011/error
    launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(find(h, "cuLaunchKernel"));
  }
};
// htod drops the const of the source pointer (passed alike: a hand-written type, not another ABI). "cuMemcpyDtoH"
// is the 2000 export (a 32-bit device pointer and count) taken into the 3020 type: the wrong ABI.
