// The GitHub Action: inputs and modes, the fork trust check, measure or read, judge, publish;
// the only place that calls core.setFailed. The folder's only door.
export * from './main.js';
export * from './trust.js';
