"""Calibration: dense cuBLAS GEMM and device copy, the ceilings every report compares against."""
