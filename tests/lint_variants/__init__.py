"""Semantics-preserving variants of faulty loaders and their fixed twins, to measure the linter (issue 38).

`record.Variant` is the one record every generator yields (`c/` for C, C++ and CUDA; `python/` for Python).
"""
