// What a nightly bisection measured, kept between nights: when the time box stops a search, the
// next night (still slower against the same good run: a night that found a regression never
// becomes the base) goes on from the steps already measured instead of measuring them again. Kept
// beside the tunings in the build cache (`<cache>/bisect/steps.json`), so a runner that keeps its
// build cache keeps them; without it the search starts again, as before. Keyed by the good run's
// commit and the variant; only steps that told good or bad are kept.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { BisectStep } from './bisect.js';

export const BISECT_MEMORY_FORMAT = 'kernelgate/bisect-steps@1';
/** The searches kept: the newest first, older ones dropped. */
const KEPT_SEARCHES = 20;

interface Memory {
  format: string;
  /** `<good sha>:<kernel>/<variant>` → the steps measured, in order */
  searches: Record<string, BisectStep[]>;
}

export function bisectMemoryPath(cacheDir: string): string {
  return join(cacheDir, 'bisect', 'steps.json');
}

export const searchKey = (good: string, variant: string) => `${good}:${variant}`;

const isStep = (x: unknown): x is BisectStep => {
  const s = x as Partial<BisectStep> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.sha === 'string' &&
    /^[0-9a-f]{40}$/.test(s.sha) &&
    (s.verdict === 'good' || s.verdict === 'bad') &&
    typeof s.detail === 'string'
  );
};

function read(file: string, log: (line: string) => void): Memory {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { format: BISECT_MEMORY_FORMAT, searches: {} };
  }
  try {
    const doc = JSON.parse(text) as Partial<Memory>;
    if (doc.format !== BISECT_MEMORY_FORMAT || typeof doc.searches !== 'object' || !doc.searches) {
      throw new Error(
        `format ${JSON.stringify(doc.format ?? null)}, expected ${BISECT_MEMORY_FORMAT}`,
      );
    }
    const searches: Memory['searches'] = {};
    for (const [key, steps] of Object.entries(doc.searches)) {
      if (Array.isArray(steps)) searches[key] = steps.filter(isStep);
    }
    return { format: BISECT_MEMORY_FORMAT, searches };
  } catch (error) {
    log(
      `kernelgate: bisect: ${file} is not a record of earlier steps (${(error as Error).message}): not used`,
    );
    return { format: BISECT_MEMORY_FORMAT, searches: {} };
  }
}

/** The steps an earlier night measured for this search, by commit. */
export function knownSteps(
  file: string,
  key: string,
  log: (line: string) => void,
): Map<string, BisectStep> {
  const steps = read(file, log).searches[key] ?? [];
  return new Map(steps.map((s) => [s.sha, s]));
}

/** Keeps a step that told good or bad (a step that could not tell is measured again). */
export function rememberStep(
  file: string,
  key: string,
  step: BisectStep,
  log: (line: string) => void,
): void {
  if (step.verdict !== 'good' && step.verdict !== 'bad') return;
  const memory = read(file, () => {});
  const steps = (memory.searches[key] ?? []).filter((s) => s.sha !== step.sha);
  delete memory.searches[key];
  const kept = Object.entries(memory.searches).slice(-(KEPT_SEARCHES - 1));
  const next: Memory = {
    format: BISECT_MEMORY_FORMAT,
    searches: Object.fromEntries([...kept, [key, [...steps, step]]]),
  };
  try {
    mkdirSync(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(next, null, 2) + '\n');
    renameSync(tmp, file);
  } catch (error) {
    log(
      `kernelgate: bisect: could not keep the step in ${file} (${(error as Error).message}): the next night measures it again`,
    );
  }
}
