/**
 * nvcc names an anonymous namespace `_GLOBAL__N__<8 hex digits>_…`, the digits a hash of the whole
 * translation unit: a header the kernel includes but does not use changes them, and with them the
 * name of every kernel in the namespace (H100 run 133, 2026-11-27: a function added to tma.cuh
 * renamed cuda_fa_wgmma's kernels). The text with those digits blanked (to as many zeros, so
 * lengths and offsets stay), for comparing builds of the same code.
 */
export function blankAnonymousNamespaces(text: string): string {
  return text.replace(/_GLOBAL__N__[0-9a-f]{8}_/g, '_GLOBAL__N__00000000_');
}
