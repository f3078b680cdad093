/**
 * A results document around a harness run's cases, as the harness writes one: the deep checks
 * read a sanitizer run's document through the validating reader (loadResults), so a stand-in
 * harness writes a whole document. The recorded excerpts (test/fixtures/deep/memcheck-bsr_gemm/,
 * deep22/faulty-library.json) keep the cases only, without their params.
 */
export function harnessDocument(cases: Record<string, unknown>[]): string {
  return JSON.stringify({
    schema: 'kernelgate/results@1',
    run: { started_at: '2026-11-21T14:07:37Z', harness: 'kernelgate-harness 0.1.0' },
    environment: { gpu: { name: 'NVIDIA H100 80GB HBM3' } },
    diagnostics: [],
    kernels: [],
    cases: cases.map((c) => ({ params: {}, ...c })),
  });
}
