"""Misuse of cuentry's own API is linted like any request."""
import cuentry
from cuentry import optional, required

drv = cuentry.Driver.load()
alloc = drv.call("cuMemAlloc", 3020)            # silent: a pinned ABI, legacy by default
big = drv.call("cuMemAlloc", 13000)  # expect: CE010
rel = drv.call("cuCtxCreate", 11000)  # expect: CE010
sfx = drv.call("cuMemAlloc_v2", 3020)  # expect: CE003
cpy = drv.call("cuMemcpyAsync", 7000, "per_thread")  # silent: the stream is pinned
old = drv.call("cuMemcpyAsync", 4000, "per_thread")  # expect: CE009
rows = [required("cuMemFree", 3020), optional("cuMemMap", 12000)]  # expect: CE010
