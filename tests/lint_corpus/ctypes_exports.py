"""ctypes prototypes on exports of libcuda, judged against the ABI each export binds."""
import ctypes
from ctypes import CDLL, POINTER, c_int, c_size_t, c_ubyte, c_uint, c_uint64, c_void_p

CUdeviceptr = c_uint64
lib = CDLL("libcuda.so.1")

alloc_v1 = lib.cuMemAlloc
alloc_v1.argtypes = [POINTER(CUdeviceptr), c_size_t]   # the 2000 export takes 32-bit values  # expect: CE011
alloc_v1.restype = c_int

alloc = lib.cuMemAlloc_v2  # silent: the prototype matches the 3020 export
alloc.argtypes = [POINTER(CUdeviceptr), c_size_t]
alloc.restype = c_int

lib.cuMemFree_v2.argtypes = [CUdeviceptr]  # silent: matches
lib.cuCtxCreate.argtypes = [c_void_p, c_uint, c_int]  # silent: matches the 2000 export it names

sync = lib.cuCtxSyncronize
sync.argtypes = []  # expect: CE003

free_v1 = getattr(lib, "cuMemFree")
free_v1.argtypes = [c_void_p]  # expect: CE011

too_few = lib["cuMemcpyHtoD_v2"]
too_few.argtypes = [CUdeviceptr, c_void_p]  # expect: CE011

gpa = ctypes.CDLL("libcuda.so.1").cuGetProcAddress_v2
ctypes.CDLL("libcuda.so.1").cuMemsetD8.argtypes = [CUdeviceptr, c_ubyte, c_size_t]  # expect: CE011
lib.cudaMalloc.argtypes = [c_void_p]  # silent: a runtime name, not the driver's
