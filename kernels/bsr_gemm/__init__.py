"""CUDA variants of the bsr_gemm kernel: ctypes wrappers around the libraries the build stage makes."""
