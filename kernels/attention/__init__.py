"""CUDA variants of the attention kernel: ctypes wrappers around the libraries the build stage makes."""
