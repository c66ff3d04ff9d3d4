// Call sites written for this test in the shape of a GPU miner's CUDA use (enumerate devices, a context, a
// module from PTX with JIT options, one kernel launch over device buffers): every entry of freycoin.toml,
// called through the generated table with the types of the cuda.h the file is compiled against.
#include <cuda.h>
#include <cstdint>
#include "frey.h"

int frey_sites(const frey_table *t, bool run_all) {
    if (t->pfn_cuInit(0) != CUDA_SUCCESS) return 1;
    int count = 0, major = 0;
    CUdevice dev = 0;
    size_t total = 0;
    char name[256];
    if (t->pfn_cuDeviceGetCount(&count) != CUDA_SUCCESS || count < 1) return 2;
    if (t->pfn_cuDeviceGet(&dev, 0) != CUDA_SUCCESS) return 3;
    t->pfn_cuDeviceGetName(name, static_cast<int>(sizeof name), dev);
    t->pfn_cuDeviceTotalMem(&total, dev);
    t->pfn_cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    if (!run_all) return 0;
    CUcontext ctx = nullptr;
    if (t->pfn_cuCtxCreate(&ctx, CU_CTX_SCHED_BLOCKING_SYNC, dev) != CUDA_SUCCESS) return 4;
    t->pfn_cuCtxSetCurrent(ctx);
    static const char ptx[] = ".version 7.0\n.target sm_52\n.address_size 64\n";
    char log[1024];
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, reinterpret_cast<void *>(static_cast<uintptr_t>(sizeof log))};
    CUmodule mod = nullptr;
    if (t->pfn_cuModuleLoadDataEx(&mod, ptx, 2, opts, vals) != CUDA_SUCCESS)
        t->pfn_cuModuleLoadData(&mod, ptx);
    CUfunction fn = nullptr;
    t->pfn_cuModuleGetFunction(&fn, mod, "fermat_test");
    uint32_t host[1024] = {0};
    CUdeviceptr in = 0, out = 0;
    t->pfn_cuMemAlloc(&in, sizeof host);
    t->pfn_cuMemAlloc(&out, sizeof host);
    t->pfn_cuMemcpyHtoD(in, host, sizeof host);
    unsigned int n = 1024;
    void *params[] = {&in, &out, &n};
    t->pfn_cuLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr);
    t->pfn_cuCtxSynchronize();
    t->pfn_cuMemcpyDtoH(host, out, sizeof host);
    t->pfn_cuMemFree(in);
    t->pfn_cuMemFree(out);
    t->pfn_cuModuleUnload(mod);
    t->pfn_cuCtxDestroy(ctx);
    return 0;
}
