// One parse of configuration for both halves: the action reads kernelgate.yml and every kernel.yml
// with `yaml` (YAML 1.2 core schema, src/config/config.ts parseYaml), the harness with
// python/kernelgate_harness/yaml12.py. Both read the shared vectors of
// test/fixtures/yaml12/vectors.json (test/python/test_yaml12.py is the Python half).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseYaml } from '../src/config/index.js';

interface Vector {
  yaml: string;
  expected?: unknown;
  error?: string;
}

const ROOT = join(import.meta.dirname, '..');
const { vectors } = JSON.parse(
  readFileSync(join(ROOT, 'test/fixtures/yaml12/vectors.json'), 'utf8'),
) as { vectors: Vector[] };

/** Non-finite numbers as the vectors write them. */
function plain(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (_k, v: unknown) =>
      typeof v === 'number' && !Number.isFinite(v) ? String(v) : v,
    ),
  ) as unknown;
}

describe('YAML 1.2 core numbers, as the harness reads them', () => {
  it.each(vectors.filter((v) => v.expected !== undefined).map((v) => [v.yaml, v]))(
    '%j',
    (_name, v) => {
      expect(plain(parseYaml(v.yaml, 'kernel.yml'))).toStrictEqual(v.expected);
    },
  );

  it('refuses what the harness refuses, with the message the user reads', () => {
    const refused = vectors.filter((v) => v.error !== undefined);
    expect(refused.length).toBeGreaterThan(0);
    for (const v of refused) {
      expect(() => parseYaml(v.yaml, 'kernel.yml')).toThrow(
        `kernel.yml:2:1: YAML syntax error: ${v.error}`,
      );
    }
  });
});
