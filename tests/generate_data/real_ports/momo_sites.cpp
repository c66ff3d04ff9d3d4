// Call sites written for this test in the shape of a video pipeline's CUDA use (a context per device, a pitched
// NV12 surface, 2D copies host -> device synchronous and on a stream): every entry of momo.toml, called through
// the generated table with the types of the cuda.h the file is compiled against.
#include <cuda.h>
#include <cstring>
#include "momo.h"

int momo_sites(const momo_table *t, bool run_all) {
    if (t->pfn_cuInit(0) != CUDA_SUCCESS) return 1;
    int count = 0;
    CUdevice dev = 0;
    char name[128];
    if (t->pfn_cuDeviceGetCount(&count) != CUDA_SUCCESS || count < 1) return 2;
    if (t->pfn_cuDeviceGet(&dev, 0) != CUDA_SUCCESS) return 3;
    if (t->pfn_cuDeviceGetName(name, static_cast<int>(sizeof name), dev) != CUDA_SUCCESS) return 4;
    if (!run_all) return 0;
    CUcontext ctx = nullptr, popped = nullptr;
    CUresult rc = t->pfn_cuCtxCreate(&ctx, 0, dev);
    if (rc != CUDA_SUCCESS) {
        const char *why = nullptr;
        t->pfn_cuGetErrorName(rc, &why);
        return why != nullptr ? 5 : 6;
    }
    t->pfn_cuCtxPushCurrent(ctx);
    CUdeviceptr surface = 0;
    size_t pitch = 0;
    const size_t width = 640, height = 480;
    static unsigned char frame[640 * 480 * 3 / 2];
    std::memset(frame, 0x80, sizeof frame);
    t->pfn_cuMemAllocPitch(&surface, &pitch, width, height * 3 / 2, 16);
    CUDA_MEMCPY2D copy;
    std::memset(&copy, 0, sizeof copy);
    copy.srcMemoryType = CU_MEMORYTYPE_HOST;
    copy.srcHost = frame;
    copy.srcPitch = width;
    copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    copy.dstDevice = surface;
    copy.dstPitch = pitch;
    copy.WidthInBytes = width;
    copy.Height = height * 3 / 2;
    t->pfn_cuMemcpy2D(&copy);
    t->pfn_cuMemcpy2DUnaligned(&copy);
    t->pfn_cuMemcpy2DAsync(&copy, nullptr);
    t->pfn_cuStreamSynchronize(nullptr);
    CUdeviceptr scratch = 0;
    t->pfn_cuMemAlloc(&scratch, width * height);
    t->pfn_cuMemFree(scratch);
    t->pfn_cuMemFree(surface);
    t->pfn_cuCtxPopCurrent(&popped);
    t->pfn_cuCtxDestroy(ctx);
    return 0;
}
