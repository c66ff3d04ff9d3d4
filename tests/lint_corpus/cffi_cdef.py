"""cffi declarations of driver exports, judged against the ABI each export binds."""
from cffi import FFI

ffi = FFI()
ffi.cdef("""
typedef int CUresult;
typedef unsigned long long CUdeviceptr;
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);   /* matches the 3020 export */
CUresult cuInit(unsigned int Flags);
""")  # silent: both declarations match their exports
ffi.cdef("CUresult cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);")  # expect: CE011
lib = ffi.dlopen("libcuda.so.1")
