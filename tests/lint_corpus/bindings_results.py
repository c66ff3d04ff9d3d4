"""cuda.bindings requests: the CUresult and the query result come back in a tuple and must be tested."""
from cuda.bindings import driver


def load_checked():
    err, fn, status = driver.cuGetProcAddress(b"cuCtxSynchronize", 2000, driver.CU_GET_PROC_ADDRESS_LEGACY_STREAM)
    if err != driver.CUresult.CUDA_SUCCESS or status != driver.CUdriverProcAddressQueryResult.CU_GET_PROC_ADDRESS_SUCCESS:
        raise RuntimeError(err)
    return fn


def load_discarded():
    _, fn, _ = driver.cuGetProcAddress(b"cuCtxSynchronize", 2000, driver.CU_GET_PROC_ADDRESS_LEGACY_STREAM)  # expect: CE006
    return fn


def load_err_only():
    err, fn, q = driver.cuGetProcAddress(b"cuCtxSynchronize", 2000, driver.CU_GET_PROC_ADDRESS_LEGACY_STREAM)  # expect: CE006
    assert err == 0   # q is never looked at
    return fn
