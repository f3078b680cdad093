// The recorded GPU runs under test/fixtures/recorded/ (README there): their results as the action
// reads them, what the action said on the machine (verdict.json), and verdict counts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { CaseComparison } from '../../src/judge/index.js';
import { loadResults, validateResults } from '../../src/results/index.js';

export const ROOT = join(import.meta.dirname, '..', '..');
export const RECORDED = join(ROOT, 'test/fixtures/recorded');

/** A recorded run's results.json. */
export const load = (name: string) => loadResults(join(RECORDED, name, 'results.json'));

/** A recorded run's results.json.gz (the larger recordings are stored compressed). */
export const loadGz = (name: string) => {
  const file = join(RECORDED, name, 'results.json.gz');
  return validateResults(JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')), file);
};

/** What the action said on the machine: its verdict.json. */
export const verdictOf = (name: string) =>
  JSON.parse(readFileSync(join(RECORDED, name, 'verdict.json'), 'utf8')) as {
    verdict: string;
    counts: Record<string, number>;
  };

/** The run's wall time in seconds, as gpu-e2e.sh wrote it. */
export const wallOf = (name: string) =>
  Number(readFileSync(join(RECORDED, name, 'wall_s'), 'utf8'));

export const count = (cases: CaseComparison[], v: string) =>
  cases.filter((c) => c.perf === v).length;

/** [SLOWER, FASTER, SAME, AMBIGUOUS] */
export const perfCounts = (cases: CaseComparison[]) =>
  ['SLOWER', 'FASTER', 'SAME', 'AMBIGUOUS'].map((v) => count(cases, v));
