from __future__ import annotations


def generate_python(manifest: object) -> str:
    raise NotImplementedError
