// A repository with one small kernel (gemm's cublas reference on one bf16 case), for the tests of
// the action's measure step that fake the harness.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const GEMM_KERNEL_YML = [
  'name: gemm',
  'module: kernels.gemm.bench',
  'cases: [{dtype: bf16, M: 64}]',
  'tolerance: {bf16: {rel_l2: 0.01}}',
  'variants: [{name: cublas, role: reference}]',
  '',
].join('\n');

/** A fresh folder holding kernels/gemm/kernel.yml (GEMM_KERNEL_YML). */
export function gemmWorkspace(prefix = 'kg-measure-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(dir, 'kernels', 'gemm'), { recursive: true });
  writeFileSync(join(dir, 'kernels', 'gemm', 'kernel.yml'), GEMM_KERNEL_YML);
  return dir;
}
