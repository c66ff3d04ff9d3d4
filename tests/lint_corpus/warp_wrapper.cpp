// Shape of a simulation framework's loader: a helper that asks the getter (itself taken with dlsym) for a
// name at a version, called once per function pointer.
#include <dlfcn.h>
#include <cudaTypedefs.h>

static PFN_cuGetProcAddress_v11030 pfn_cuGetProcAddress;
static PFN_cuCtxCreate_v3020 pfn_cuCtxCreate;
static PFN_cuMemAlloc_v3020 pfn_cuMemAlloc;
static PFN_cuStreamBeginCaptureToGraph_v12030 pfn_cuStreamBeginCaptureToGraph;
static PFN_cuDeviceGetUuid_v11040 pfn_cuDeviceGetUuid;
static PFN_cuEventRecord_v2000 pfn_cuEventRecord;

static bool get_driver_entry_point(const char* name, int version, void** pfn) {
  if (!pfn_cuGetProcAddress)
    return false;
  CUresult r = pfn_cuGetProcAddress(name, pfn, version, CU_GET_PROC_ADDRESS_DEFAULT);
  return r == CUDA_SUCCESS && *pfn != nullptr;
}

bool init_cuda_driver(void* lib) {
  pfn_cuGetProcAddress = (PFN_cuGetProcAddress_v11030)dlsym(lib, "cuGetProcAddress");
  get_driver_entry_point("cuCtxCreate", 3020, &(void*&)pfn_cuCtxCreate);
  get_driver_entry_point("cuMemAlloc_v2", 3020, &(void*&)pfn_cuMemAlloc); // expect: CE003
  get_driver_entry_point("cuStreamBeginCaptureToGraph", 12000, &(void*&)pfn_cuStreamBeginCaptureToGraph); // expect: CE007 CE009
  get_driver_entry_point("cuDeviceGetUuid", 9020, &(void*&)pfn_cuDeviceGetUuid); // expect: CE002
  get_driver_entry_point("cuEventRecord", 2000, &(void*&)pfn_cuEventRecord); // expect: CE007
  return pfn_cuCtxCreate != nullptr;
}
// Silent: cuCtxCreate at 3020 into a PFN_cuCtxCreate_v3020, and the dlsym bootstrap of the 11030 getter.
