"""Shape of a Python serving library's loader: a cuda.bindings wrapper with a default pin, ctypes
prototypes for the driver pointers, and a DLPack-style deleter callback (not a driver function)."""
import ctypes

from cuda.bindings import driver

DEFAULT_PIN = 12000


def get_entry(name, version=DEFAULT_PIN, flags=driver.CU_GET_PROC_ADDRESS_LEGACY_STREAM):
    err, pfn, status = driver.cuGetProcAddress(name.encode(), version, flags)
    if err != driver.CUresult.CUDA_SUCCESS or status != driver.CUdriverProcAddressQueryResult.CU_GET_PROC_ADDRESS_SUCCESS:
        raise RuntimeError(name)
    return pfn


def load():
    alloc = get_entry("cuMemAlloc", 3020)
    create = get_entry("cuMemCreate")  # expect: CE010
    ctx = get_entry("cuCtxCreate_v2", 3020)  # expect: CE003
    launch = get_entry("cuLaunchKernel", 4000, driver.CU_GET_PROC_ADDRESS_DEFAULT)  # expect: CE007
    lib = get_entry("cuLibraryLoadData")
    proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t)
    mem_alloc = proto(int(alloc))  # silent: the prototype matches the 3020 ABI the request binds
    narrow = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint)(int(alloc))  # expect: CE004
    deleter_t = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    deleter = deleter_t(lambda p: None)
    return mem_alloc, narrow, create, ctx, launch, lib, deleter
