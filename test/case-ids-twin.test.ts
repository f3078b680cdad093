// Case ids, the TypeScript half: every vector of test/fixtures/twins/case-ids.json expands to its
// ids (test/python/test_case_ids_twin.py checks the same vectors against the harness's manifest.py).
// The shards, the gate's coverage and the deep checks find the harness's cases by these ids.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { expandGroup, parseYaml, type CaseGroup } from '../src/config/index.js';
import { adaptedCaseIdOf, caseIdOf, NO_PARAMS_CASE } from '../src/formats/index.js';

const { vectors } = JSON.parse(readFileSync('test/fixtures/twins/case-ids.json', 'utf8')) as {
  vectors: { yaml: string; ids: string[] }[];
};

describe('case ids, shared with the harness', () => {
  it.each(vectors)('$yaml', ({ yaml, ids }) => {
    const group = parseYaml(yaml, 'vector') as CaseGroup;
    expect(expandGroup(group).map(caseIdOf)).toEqual(ids);
  });

  it("the adapters write other tools' cases by the same rule, and a case without parameters as 'default'", () => {
    for (const { yaml } of vectors) {
      for (const params of expandGroup(parseYaml(yaml, 'vector') as CaseGroup)) {
        expect(adaptedCaseIdOf(params)).toBe(caseIdOf(params));
      }
    }
    expect(adaptedCaseIdOf({})).toBe(NO_PARAMS_CASE);
  });
});
