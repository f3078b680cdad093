// The nightly's deep checks (docs/scaling.md): compute-sanitizer over every CUDA and Triton
// variant on a small case and Nsight Compute over the headline cases, their output read into the
// results' `deep` section (the gate's rule on it is the judge's: src/judge/sanitizer.ts). The
// folder's only door.
export { MAX_COMPARED, NO_BASE, runNcuCompare } from './compare.js';
export {
  csvFields,
  NCU_METRICS,
  ncuMetricsArg,
  ncuProblem,
  NcuFormatError,
  parseNcuCsv,
  summarizeNcu,
  type NcuLaunch,
  type NcuSummary,
} from './ncu.js';
export {
  caseSize,
  type CompareTarget,
  DEEP_BACKENDS,
  movedTargets,
  ncuTargets,
  SANITIZER_FALLBACK_GROWTH,
  SANITIZER_MAX_FALLBACKS,
  sanitizerTargets,
  slowerTargets,
  type DeepTarget,
  type SlowerCase,
} from './plan.js';
export {
  DEEP_CHECKS,
  findTool,
  MAX_SLOWER_PROFILED,
  parseDeepChecks,
  runDeep,
  SANITIZER_CASE_TIMEOUT_S,
  TOOL_FIX,
  type DeepCheck,
  type DeepOptions,
  type DeepOutcome,
} from './run.js';
export {
  deviceFunction,
  parseSanitizer,
  SANITIZER_TOOLS,
  type SanitizerFinding,
  type SanitizerReport,
  type SanitizerTool,
} from './sanitizer.js';
