// The nightly as a paired run (issue 25), through the bundled action exactly as a runner runs it:
// a push stores its run, a commit lands, and the schedule event times tonight's commit beside the
// push's commit pair by pair (a git worktree of it), on the CPU under TRITON_INTERPRET=1. A night
// that found a case SLOWER is never the next night's base.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildBundle } from './support/bundled-action.js';
import { GitHubServer } from './support/github-server.js';
import { REPO_ROOT, reportOf, runOnCheckout, userRepoCheckout } from './support/user-repo.js';
import { describeWithVenv } from './support/venv.js';

describeWithVenv('the nightly through the bundled action', () => {
  let bundleDir: string;
  let server: GitHubServer;

  beforeAll(async () => {
    bundleDir = await buildBundle(REPO_ROOT);
    server = new GitHubServer();
    await server.start();
  }, 180_000);

  afterAll(async () => {
    await server.close();
  });
  const at = () => ({ bundleDir, apiUrl: server.url });

  it(
    'times tonight beside the last good run, and passes over a night that found a case SLOWER',
    { timeout: 900_000 },
    async () => {
      const ws = userRepoCheckout();
      const good = ws.git('rev-parse', 'HEAD');
      const push = await runOnCheckout(at(), ws, 'push', '8001');
      expect(push.code, push.stdout + push.stderr).toBe(0);

      ws.git('commit', '-q', '--allow-empty', '-m', 'docs: tonight');
      const night = await runOnCheckout(at(), ws, 'schedule', '8002');
      expect(night.code, night.stdout + night.stderr).toBe(0);
      expect(night.stdout).toContain(
        `kernelgate: tonight is timed beside ${good.slice(0, 12)} (push run of `,
      );
      const results = reportOf(ws, '8002').results;
      expect(results.run.paired_base?.git_sha).toBe(good);
      const timed = results.cases.filter((c) => c.timing !== undefined);
      expect(timed.length).toBeGreaterThan(0);
      expect(timed.filter((c) => c.paired?.base_status === 'ok').map((c) => c.case)).toEqual(
        timed.map((c) => c.case),
      );
      // The night is stored with its judgement beside it.
      const judged = readdirSync(join(ws.store, 'main', 'none')).filter((f) =>
        f.endsWith('.judged'),
      );
      expect(judged).toHaveLength(2);

      // A night whose store says it found a case SLOWER: the next night passes over it.
      const tonight = ws.git('rev-parse', 'HEAD');
      const slowFile = join(ws.store, 'main', 'none', judged.sort()[1]!);
      // (On a busy CPU an A/A night may itself find a case SLOWER; the plant makes it one either way.)
      expect(JSON.parse(readFileSync(slowFile, 'utf8'))).toMatchObject({ verdict: 'pass' });
      writeFileSync(
        slowFile,
        JSON.stringify({ verdict: 'pass', slower: ['scale/triton_axpb/dtype=fp32,N=4096'] }),
      );
      ws.git('commit', '-q', '--allow-empty', '-m', 'docs: the next night');
      const next = await runOnCheckout(at(), ws, 'schedule', '8003');
      expect(next.code, next.stdout + next.stderr).toBe(0);
      expect(next.stdout).toContain(
        `kernelgate: nightly base: passed over ${tonight.slice(0, 12)} (stored run of `,
      );
      expect(next.stdout).toContain(
        'it reported 1 SLOWER case (scale/triton_axpb/dtype=fp32,N=4096): a regression is never the next night',
      );
      expect(reportOf(ws, '8003').results.run.paired_base?.git_sha).toBe(good);
    },
  );
});
