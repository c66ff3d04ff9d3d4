// Correct use: fixed ABI pins that match the typedefs, explicit stream mode, both layers checked.
#include <cuda.h>
#include <cudaTypedefs.h>

static PFN_cuMemAlloc_v3020 p_alloc = nullptr;
static PFN_cuStreamBeginCapture_v10010 p_capture = nullptr;

bool load_table() {
  CUdriverProcAddressQueryResult q{};
  CUresult rc = cuGetProcAddress("cuMemAlloc", reinterpret_cast<void **>(&p_alloc), 3020,
                                 CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);
  if (rc != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS || !p_alloc) return false;
  rc = cuGetProcAddress("cuStreamBeginCapture", (void **)&p_capture, 10010, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);
  int driver = 0;
  cuDriverGetVersion(&driver);  // used only to decide whether to try: fine
  return rc == CUDA_SUCCESS && q == CU_GET_PROC_ADDRESS_SUCCESS && p_capture && driver >= 10010;
}

template <typename T> __global__ void fill(T *p, T v) { p[threadIdx.x] = v; }
void launch(float *d) { fill<<<1, 32>>>(d, 1.0f); }
