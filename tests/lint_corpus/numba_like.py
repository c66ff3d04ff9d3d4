"""Modelled on a Python GPU library's ctypes binding: hand-written prototypes and suffixes."""
import ctypes

libcuda = ctypes.CDLL("libcuda.so.1")
cu_ctx_get_device = getattr(libcuda, "cuCtxGetDevice_v2")  # silent: the 13000 export, named by its own name
sync = libcuda.cuCtxSynchronize_v2  # silent: a real export (13000)
bad = libcuda.cuCtxSynchronize_v3  # expect: CE003
proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)  # silent: a prototype not (yet) used with a driver pointer
callback = proto(lambda p: 0)  # silent: a Python callback, not a driver function

ver = ctypes.c_int()
libcuda.cuDriverGetVersion(ctypes.byref(ver))
pfn = ctypes.c_void_p()
status = ctypes.c_int()
rc = libcuda.cuGetProcAddress_v2(b"cuMemAlloc", ctypes.byref(pfn), ver.value, 1, ctypes.byref(status))  # expect: CE001 CE006
rc = libcuda.cuGetProcAddress_v2(b"cuMemAlloc", ctypes.byref(pfn), 3020, 1, None)  # expect: CE006
alloc = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t)(pfn.value)  # silent: the 3020 ABI
rc = libcuda.cuGetProcAddress_v2(b"cuMemAlloc", ctypes.byref(pfn), 3020, 1, ctypes.byref(status))  # expect: CE006
free = proto(pfn.value)  # expect: CE004
gpa = getattr(libcuda, "cuGetProcAddress_v2")  # silent: the getter itself, bound to a name
rc = gpa(b"cuCtxCreate", ctypes.byref(pfn), 11000, 1, ctypes.byref(status))  # expect: CE010 CE006
