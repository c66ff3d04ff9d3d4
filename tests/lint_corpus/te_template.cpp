// Shape of a training library's driver shim: a symbol getter on cudaGetDriverEntryPoint, a variadic
// template that derives the function type from the call's arguments, and a macro that stringifies names.
#include <cuda.h>
#include <cuda_runtime.h>

namespace cuda_driver {

inline void* get_symbol(const char* symbol) {
  void* entry_point = nullptr;
  cudaDriverEntryPointQueryResult driver_result;
  cudaError_t err = cudaGetDriverEntryPoint(symbol, &entry_point, cudaEnableDefault, &driver_result); // expect: CE005
  if (err != cudaSuccess || driver_result != cudaDriverEntryPointSuccess) return nullptr;
  return entry_point;
}

template <typename... ArgTs>
inline CUresult call(const char* symbol, ArgTs... args) {
  using FuncT = CUresult(ArgTs...);
  FuncT* func = reinterpret_cast<FuncT*>(get_symbol(symbol));
  return (*func)(args...);
}

}  // namespace cuda_driver

#define CALL_CHECK_CUDA_DRIVER(symbol, ...) check(cuda_driver::call(#symbol, __VA_ARGS__))

void use(CUdeviceptr* p, size_t n, CUfunction f, CUstream s) {
  CALL_CHECK_CUDA_DRIVER(cuMemAlloc_v2, p, n); // expect: CE003
  CALL_CHECK_CUDA_DRIVER(cuLaunchKernel, f, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr); // expect: CE007
  CALL_CHECK_CUDA_DRIVER(cuMemGetInfo, p, &n);
}
// CE005 once, at the getter. The cast to a function type made from the call's arguments is judged per call by
// its instantiation: each has the ABI's own signature, so it is no finding.
// Through the two layers: CE003 for the export name, CE007 for cuLaunchKernel (it has a per-thread ABI;
// cuMemGetInfo has none: silent).
