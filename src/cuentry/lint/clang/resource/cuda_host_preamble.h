/* cuentry lint: CUDA sources parsed on the host side without a CUDA toolkit.
 * The execution-space keywords become the attributes clang's CUDA mode knows; the
 * launch configuration call that `kernel<<<grid, block>>>(...)` needs is declared. As with nvcc, which
 * includes cuda_runtime.h first, the vector types are always there: a copy of vector_types.h that a
 * project carries finds its guard defined. `__noinline__` is left to clang (a keyword in CUDA mode:
 * a macro would break the C++ library's `__attribute__((__noinline__))`). */
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
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __CUDACC__ 1
#if defined(CUENTRY_REAL_CUDA_TOOLKIT)
/* a real toolkit: its own vector types and dim3, as nvcc has them */
#include <vector_types.h>
#else
#define __VECTOR_TYPES_H__
#define CUENTRY_VEC_(t, n) struct n##1 { t x; }; struct n##2 { t x, y; }; struct n##3 { t x, y, z; }; \
    struct n##4 { t x, y, z, w; }; typedef struct n##1 n##1; typedef struct n##2 n##2; typedef struct n##3 n##3; \
    typedef struct n##4 n##4;
CUENTRY_VEC_(signed char, char) CUENTRY_VEC_(unsigned char, uchar) CUENTRY_VEC_(short, short)
CUENTRY_VEC_(unsigned short, ushort) CUENTRY_VEC_(int, int) CUENTRY_VEC_(unsigned, uint) CUENTRY_VEC_(long, long)
CUENTRY_VEC_(unsigned long, ulong) CUENTRY_VEC_(long long, longlong) CUENTRY_VEC_(unsigned long long, ulonglong)
CUENTRY_VEC_(float, float) CUENTRY_VEC_(double, double)
#undef CUENTRY_VEC_
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
    dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    operator uint3() const { return uint3{x, y, z}; }
};
typedef struct dim3 dim3;
#endif
/* the built-in variables of device code (nvcc declares them in device_launch_parameters.h) */
extern "C" __attribute__((device)) const uint3 threadIdx, blockIdx;
extern "C" __attribute__((device)) const dim3 blockDim, gridDim;
extern "C" __attribute__((device)) const int warpSize;
typedef struct CUstream_st *cudaStream_t;
extern "C" int __cudaPushCallConfiguration(dim3 grid, dim3 block, __SIZE_TYPE__ shmem = 0, cudaStream_t s = 0);
extern "C" int cudaConfigureCall(dim3 grid, dim3 block, __SIZE_TYPE__ shmem = 0, cudaStream_t s = 0);
#endif
