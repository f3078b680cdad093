"""CUDA variants of the attention kernel, loaded with ctypes from the library the build stage built.

Each entry is a factory with the interface of docs/kernel-modules.md; the kernel's
bench module merges this dict into its VARIANTS.
"""

VARIANTS: dict = {}
