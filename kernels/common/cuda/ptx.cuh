// Thin inline-PTX wrappers for the sm_80+ warp-level tensor-core path (mma.sync,
// ldmatrix, cp.async), shared by the attention and block-sparse GEMM kernels. Inline PTX
// instead of WMMA keeps every fragment in named registers: WMMA's opaque fragments put
// seed 002 on the stack.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace kg {

__device__ __forceinline__ uint32_t smem_u32(const void* ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

// 16-byte global->shared copy that bypasses L1; src_bytes = 0 writes zeros, which is how
// out-of-range rows (sequence tails) become harmless zero rows.
__device__ __forceinline__ void cp_async_16(uint32_t dst_smem, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst_smem), "l"(src),
               "r"(src_bytes));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3,
                                            uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t& r0, uint32_t& r1, uint32_t& r2,
                                                  uint32_t& r3, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

template <typename T>
struct Mma;

template <>
struct Mma<__half> {
  // D (16x8 fp32) += A (16x16, row) * B (16x8, col)
  __device__ __forceinline__ static void run(float* d, const uint32_t* a, const uint32_t* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  __device__ __forceinline__ static uint32_t pack(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
  // two packed pairs added lane by lane (HADD2), and a pair's two halves added in fp32
  __device__ __forceinline__ static uint32_t add2(uint32_t a, uint32_t b) {
    uint32_t d;
    asm("add.rn.f16x2 %0, %1, %2;\n" : "=r"(d) : "r"(a), "r"(b));
    return d;
  }
  __device__ __forceinline__ static float sum2(uint32_t a) {
    const __half2 h = *reinterpret_cast<const __half2*>(&a);
    const float2 f = __half22float2(h);
    return f.x + f.y;
  }
};

template <>
struct Mma<__nv_bfloat16> {
  __device__ __forceinline__ static void run(float* d, const uint32_t* a, const uint32_t* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  __device__ __forceinline__ static uint32_t pack(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
  __device__ __forceinline__ static uint32_t add2(uint32_t a, uint32_t b) {
    uint32_t d;
    asm("add.rn.bf16x2 %0, %1, %2;\n" : "=r"(d) : "r"(a), "r"(b));
    return d;
  }
  __device__ __forceinline__ static float sum2(uint32_t a) {
    return __uint_as_float(a << 16) + __uint_as_float(a & 0xffff0000u);
  }
};

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// 2^x without the multi-function unit (MUFU, 16 results per clock per SM, which an attention
// kernel's softmax at head dim 64 keeps as busy as the tensor cores): on the FMA and integer
// pipes, FlashAttention-4's way. x is clamped to [-125, 0] (an attention softmax's arguments are
// at most 0; -inf, a masked score, gives 2^-125, which fp16 rounds to 0 and which is 1e-38 of a
// row whose sum is at least 1 in bf16). x = n + f, n = round(x) read from the mantissa of
// x + 1.5 * 2^23, f in [-0.5, 0.5]; 2^f by a degree-3 polynomial (relative-error fit, at most
// 7.5e-5 relative error over the range, checked in float32 by the fit: under fp16's 4.9e-4
// rounding of P); then n added to the result's exponent bits.
__device__ __forceinline__ float poly_exp2(float x) {
  x = fmaxf(x, -125.f);
  const float j = x + 12582912.f;  // 1.5 * 2^23: round(x) in the low mantissa bits
  const float f = x - (j - 12582912.f);
  float p = fmaf(0.05517166480f, f, 0.24261112511f);
  p = fmaf(p, f, 0.69326096773f);
  p = fmaf(p, f, 0.99992805719f);
  return __int_as_float(__float_as_int(p) + (__float_as_int(j) << 23));
}

}  // namespace kg
