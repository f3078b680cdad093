// A case's id, the one rule (python/kernelgate_harness/manifest.py `case_id` is its twin, held to
// it by test/case-ids-twin.test.ts over test/fixtures/twins/case-ids.json): `key=value` pairs in
// order, each value as Python's str() writes it. It sits here, below config/, because the parsers
// of other tools' output name their cases with it and config/ (the manifests' cases, cases.ts)
// sits above them.

/** A case's parameters, as a manifest's or a benchmark's cases (and a tool's output) give them. */
export type Params = Record<string, string | number | boolean>;

/** Python's str() of a value as the harness writes it into a case id. */
function formatValue(value: string | number | boolean): string {
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return String(value);
}

/** The case id of kernel manifests, as the harness writes it. */
export function caseIdOf(params: Params): string {
  return Object.entries(params)
    .map(([k, v]) => `${k}=${formatValue(v)}`)
    .join(',');
}

/** A case without a params object: the tool ran it with no arguments. */
export const NO_PARAMS_CASE = 'default';

/** The case id of a tool's case: the manifests' caseIdOf; with no parameters, NO_PARAMS_CASE. */
export function adaptedCaseIdOf(params: Params): string {
  return Object.keys(params).length ? caseIdOf(params) : NO_PARAMS_CASE;
}
