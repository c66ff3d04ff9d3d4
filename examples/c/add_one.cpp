// add_one: allocate, copy and launch a kernel through a cuentry-generated entry-point table.
//
//   cuentry generate c kern.toml -o kern.h
//   c++ -std=c++17 -Wall -Wextra -O2 add_one.cpp -o add_one -ldl -pthread
//   ./add_one
//
// No CUDA header and no libcuda at link time: kern.h loads libcuda.so.1 itself and resolves every
// entry at its pinned ABI with the per-thread default stream. The kernel is PTX text that the
// driver JIT-compiles, so no nvcc is needed either.
#define KERN_IMPLEMENTATION
#include "kern.h"

#include <cstdio>
#include <vector>

static const char kPtx[] = R"(
.version 7.0
.target sm_52
.address_size 64
.visible .entry add_one(.param .u64 p, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<7>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r2, [n];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r1, %r3, %r4, %r5;
  setp.ge.u32 %p1, %r1, %r2;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r6, [%rd4];
  add.s32 %r6, %r6, 1;
  st.global.u32 [%rd4], %r6;
DONE:
  ret;
}
)";

static const kern_table *t;

// One line per failed call, named by the driver.
static bool check(CUresult rc, const char *what) {
    if (rc == CUDA_SUCCESS) return true;
    const char *name = "?";
    t->pfn_cuGetErrorName(rc, &name);
    std::fprintf(stderr, "add_one: %s failed: %s\n", what, name ? name : "?");
    return false;
}

int main() {
    static kern_table table;  // plain C struct; the C++ layer (namespace kern_driver) wraps the C API
    if (kern_driver::load(table) != KERN_OK) {
        std::fputs(kern_driver::report(table), stderr);  // which entry, and why: both layers, the class, the hint
        return 1;
    }
    t = &table;
    std::printf("driver %d, minimum %d\n", kern_driver_version(t), KERN_MIN_DRIVER);

    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    if (!check(t->pfn_cuInit(0), "cuInit") || !check(t->pfn_cuDeviceGet(&dev, 0), "cuDeviceGet") ||
        !check(t->pfn_cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain") ||
        !check(t->pfn_cuCtxSetCurrent(ctx), "cuCtxSetCurrent"))
        return 1;
    char name[128] = "?";
    if (t->pfn_cuDeviceGetName) t->pfn_cuDeviceGetName(name, static_cast<int>(sizeof name), dev);  // optional: test first
    std::printf("device %d: %s\n", dev, name);

    const unsigned n = 1u << 20;
    std::vector<unsigned> host(n);
    for (unsigned i = 0; i < n; i++) host[i] = i;
    CUdeviceptr buf = 0;
    CUmodule mod = nullptr;
    CUfunction fn = nullptr;
    bool ok = check(t->pfn_cuMemAlloc(&buf, n * sizeof(unsigned)), "cuMemAlloc") &&
              check(t->pfn_cuMemcpyHtoD(buf, host.data(), n * sizeof(unsigned)), "cuMemcpyHtoD") &&
              check(t->pfn_cuModuleLoadData(&mod, kPtx), "cuModuleLoadData") &&
              check(t->pfn_cuModuleGetFunction(&fn, mod, "add_one"), "cuModuleGetFunction");
    if (ok && kern_available(&table, "cuFuncGetName")) {  // the idiom for an optional entry
        const char *fname = nullptr;
        if (t->pfn_cuFuncGetName(&fname, fn) == CUDA_SUCCESS && fname) std::printf("kernel %s\n", fname);
    }
    unsigned count = n;
    void *args[] = {&buf, &count};
    ok = ok && check(t->pfn_cuLaunchKernel(fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr), "cuLaunchKernel") &&
         check(t->pfn_cuCtxSynchronize(), "cuCtxSynchronize") &&
         check(t->pfn_cuMemcpyDtoH(host.data(), buf, n * sizeof(unsigned)), "cuMemcpyDtoH");
    unsigned bad = 0;
    for (unsigned i = 0; ok && i < n; i++) bad += host[i] != i + 1;
    if (mod) t->pfn_cuModuleUnload(mod);
    if (buf) t->pfn_cuMemFree(buf);
    t->pfn_cuDevicePrimaryCtxRelease(dev);
    if (!ok) return 1;
    std::printf("add_one: %u elements, %u wrong: %s\n", n, bad, bad ? "FAIL" : "OK");
    return bad ? 1 : 0;
}
