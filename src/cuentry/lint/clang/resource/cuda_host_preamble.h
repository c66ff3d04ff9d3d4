/* cuentry lint: CUDA sources parsed on the host side without a CUDA toolkit.
 * The execution-space keywords become the attributes clang's CUDA mode knows; the
 * launch configuration call that `kernel<<<grid, block>>>(...)` needs is declared. */
#ifndef CUENTRY_CUDA_HOST_PREAMBLE_H
#define CUENTRY_CUDA_HOST_PREAMBLE_H
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __CUDACC__ 1
struct dim3 { unsigned x, y, z; dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {} };
typedef struct CUstream_st *cudaStream_t;
extern "C" int __cudaPushCallConfiguration(dim3 grid, dim3 block, __SIZE_TYPE__ shmem = 0, cudaStream_t s = 0);
extern "C" int cudaConfigureCall(dim3 grid, dim3 block, __SIZE_TYPE__ shmem = 0, cudaStream_t s = 0);
#endif
