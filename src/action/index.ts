// The GitHub Action: inputs and modes, the fork trust check, measure or read, judge, publish;
// the only place that calls core.setFailed. The folder's only door.
export { defaultDeps, type ActionCore, type ClientLimits, type RunDeps } from './deps.js';
export { approvedSha, branchesOf, readEvent, resolveMode, resolvePullRequest } from './event.js';
export {
  MODES,
  PAIRED,
  SAVE_BASELINE,
  readInputs,
  type ActionInputs,
  type Mode,
} from './inputs.js';
export { run } from './main.js';
export {
  relaunchWithoutCredentials,
  RELAUNCHED_VARIABLE,
  TOKEN_FILE_VARIABLE,
  type Relaunch,
  type RelaunchProcess,
} from './relaunch.js';
export { ACTION_ROOT, pairedBaseOf } from './measure-options.js';
export {
  failureMessage,
  pipeline,
  publishWarning,
  type PipelineInput,
  type PipelineOutcome,
} from './pipeline.js';
export * from './trust.js';
