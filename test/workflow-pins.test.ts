// Third-party actions in the examples (and the README's quick start) are pinned by full commit SHA
// with their version in a comment: a tag can be moved to other code, a commit cannot. kernelgate's
// own `kernelgate/kernelgate@v0` is the release the user chose. The commits were read from the
// actions' repositories (git rev-parse vX.Y.Z^{commit}), not typed in.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { parse as parseYaml } from 'yaml';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** Every workflow file under examples/ and the README's yaml blocks: [where, text]. */
function sources(): [string, string][] {
  const files: [string, string][] = readdirSync(join(repoRoot, 'examples'), {
    recursive: true,
    encoding: 'utf8',
  })
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => [`examples/${f}`, readFileSync(join(repoRoot, 'examples', f), 'utf8')]);
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m, i): [string, string] => [
    `README.md yaml block ${i + 1}`,
    m[1]!,
  ]);
  return [...files, ...blocks];
}

/** Each `uses:` line: the action, its ref, and the comment after it. */
function usesLines(text: string): { action: string; ref: string; comment: string; line: string }[] {
  return [...text.matchAll(/^\s*(?:-\s+)?uses:\s*([^\s@#]+)@(\S+)[^\S\n]*(?:#\s*(.*))?$/gm)].map(
    (m) => ({ action: m[1]!, ref: m[2]!, comment: (m[3] ?? '').trim(), line: m[0].trim() }),
  );
}

/** The pins as this test knows them: the SHA of each action's tag. */
const PINNED: Record<string, { version: string; sha: string }> = {
  'actions/checkout': { version: 'v4.4.0', sha: '11d5960a326750d5838078e36cf38b85af677262' },
  'actions/upload-artifact': {
    version: 'v4.6.2',
    sha: 'ea165f8d65b6e75b540449e92b4886f43607fa02',
  },
  'actions/download-artifact': {
    version: 'v4.3.0',
    sha: 'd3f86a106a0bac45b974a628896c90dbdf5c8093',
  },
  'actions/upload-pages-artifact': {
    version: 'v3.0.1',
    sha: '56afc609e74202658d3ffba0e8f6dda462b719fa',
  },
  'actions/deploy-pages': { version: 'v4.0.5', sha: 'd6db90164ac5ed86f2b6aed7e0febac5b3c0c03e' },
};

describe('actions pinned by commit', () => {
  test.each(sources())('%s', (_where, text) => {
    const unpinned = usesLines(text)
      .filter((u) => u.action !== 'kernelgate/kernelgate' && !u.action.startsWith('./'))
      .filter((u) => !/^[0-9a-f]{40}$/.test(u.ref) || !/^v\d+\.\d+\.\d+$/.test(u.comment))
      .map((u) => u.line);
    expect(unpinned).toEqual([]);
  });

  test('each pin is the commit of the version its comment names', () => {
    const seen = sources().flatMap(([, text]) => usesLines(text));
    const wrong = seen
      .filter((u) => u.action !== 'kernelgate/kernelgate')
      .filter((u) => PINNED[u.action]?.sha !== u.ref || PINNED[u.action]?.version !== u.comment)
      .map((u) => u.line);
    expect(wrong).toEqual([]);
    expect(seen.length).toBeGreaterThan(10);
  });

  test('it catches a tag', () => {
    expect(usesLines('      - uses: actions/checkout@v4\n')).toEqual([
      { action: 'actions/checkout', ref: 'v4', comment: '', line: '- uses: actions/checkout@v4' },
    ]);
  });
});

describe("the fork's checkout under pull_request_target", () => {
  // actions/checkout v4.4.0 (src/unsafe-pr-checkout-helper.ts, assertSafePrCheckout) throws
  // "Refusing to check out fork pull request code from a 'pull_request_target' workflow. …" when
  // the ref is the payload's pull_request.head.sha (or merge_commit_sha, refs/pull/N/…, or the
  // fork's repository), unless `allow-unsafe-pr-checkout: true`; a checkout without a ref (the
  // base) is not checked.
  test('the GPU job, which checks out the approved head with no token, says so; no other job does', () => {
    const workflow = parseYaml(
      readFileSync(join(repoRoot, 'examples/workflows/kernelgate.yml'), 'utf8'),
    ) as { jobs: Record<string, { steps: { uses?: string; with?: Record<string, unknown> }[] }> };
    const allowing = Object.entries(workflow.jobs).flatMap(([id, job]) =>
      job.steps
        .filter((s) => s.uses?.startsWith('actions/checkout@'))
        .filter((s) => s.with?.['allow-unsafe-pr-checkout'] !== undefined)
        .map((s) => [id, s.with?.['ref'], s.with?.['allow-unsafe-pr-checkout']]),
    );
    expect(allowing).toEqual([['measure', '${{ needs.approve.outputs.sha }}', true]]);
  });
});
