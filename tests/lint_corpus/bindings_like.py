"""Modelled on cuda.bindings users: the version from the driver, then a bare int."""
from cuda.bindings import driver

err, version = driver.cuDriverGetVersion()
err, ptr, status = driver.cuGetProcAddress(b"cuMemAlloc", version, driver.CU_GET_PROC_ADDRESS_DEFAULT)  # expect: CE001 CE006
err, ptr, status = driver.cuGetProcAddress(b"cuMemAlloc", 3020, driver.CU_GET_PROC_ADDRESS_LEGACY_STREAM)  # expect: CE006
err, ptr, status = driver.cuGetProcAddress(b"cuCtxCreate", 12000, driver.CU_GET_PROC_ADDRESS_LEGACY_STREAM)  # expect: CE010 CE006
driver.cuGetProcAddress(b"cuMemFree_v2", 3020, driver.CU_GET_PROC_ADDRESS_LEGACY_STREAM)  # expect: CE003 CE006
