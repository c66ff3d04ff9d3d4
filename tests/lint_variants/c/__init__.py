"""Variants of faulty C, C++ and CUDA loaders and their fixed twins (issue 38, "generalisation by invariance").

`seeds` holds the faulty seeds and their twins as data, `families` the rewrite families (each one choice on an
axis of the loader), `render` writes a seed under a set of families as C, C++ or CUDA text, `generate` lists the
variants (every family alone, compositions of 2 and 3), `compile` checks that each compiles, and `score`
(`python -m tests.lint_variants.c.score`) runs the linter on them and reports recall and false findings.
"""
