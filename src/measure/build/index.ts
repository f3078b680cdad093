// The build: nvcc per CUDA variant (cached by content hash) and what was really built (archs,
// resources, SASS census) against the manifest's expectations. Its only door.
export { buildKernels } from './build.js';
export { checkExpectations } from './expectations.js';
export { libraryFingerprint } from './fingerprint.js';
export {
  parsePtxasInfo,
  parsePtxasPerformanceNotes,
  parseSass,
  performanceDiagnostics,
  shortKernelName,
  trimLog,
  type PtxasPerformanceNote,
  type SassFunction,
  type SassListing,
} from './inspect.js';
export { findCuobjdump, findNvcc, toolkitRelease, type Tool } from './tools.js';
export {
  DEFAULT_CACHE_DIR,
  DEFAULT_NVCC_FLAGS,
  type BuildDeps,
  type BuildExpect,
  type BuildOutcome,
  type BuildTarget,
  type VariantBuild,
} from './types.js';
