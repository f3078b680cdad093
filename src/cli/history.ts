// `kernelgate history import`: a baseline-dir store's runs onto the data branch, oldest first
// (src/history/migrate.ts importDirectory; docs/history.md, "Moving from baseline-dir").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  branchStore,
  DEFAULT_DATA_BRANCH,
  importDirectory,
  KERNELGATE_VERSION,
} from '../history/index.js';
import { actionsExec } from '../lib/index.js';
import { InputError } from '../results/index.js';
import type { CliIo } from './common.js';

export const HISTORY_USAGE = `kernelgate history import --baseline-dir DIR --history-remote URL_OR_PATH [--history-branch NAME]
  stores every run of a baseline-dir store on the data branch as a record, oldest first; running
  it again adds nothing (docs/history.md, "Moving from baseline-dir")
`;

/** `kernelgate history import`'s options (HISTORY_USAGE names each of them). */
export const HISTORY_OPTIONS = {
  'baseline-dir': { type: 'string' },
  'history-remote': { type: 'string' },
  'history-branch': { type: 'string', default: DEFAULT_DATA_BRANCH },
} as const;

/** `kernelgate history import`. */
export async function historyCommand(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'import') {
    throw new InputError(`history: unknown subcommand ${JSON.stringify(sub ?? null)}; try: import`);
  }
  const { values } = parseArgs({
    args: rest,
    options: HISTORY_OPTIONS,
    strict: true,
    allowPositionals: false,
  });
  const dir = values['baseline-dir'];
  const remote = values['history-remote'];
  if (dir === undefined || remote === undefined) {
    throw new InputError(
      'history import needs --baseline-dir DIR and --history-remote URL_OR_PATH',
    );
  }
  const cache = mkdtempSync(join(tmpdir(), 'kg-import-'));
  const warnings: string[] = [];
  try {
    const store = branchStore({
      remote:
        /^[a-z]+:\/\//.test(remote) || /^[^/]+@[^:]+:/.test(remote)
          ? remote
          : resolve(io.cwd, remote),
      branch: values['history-branch'],
      cacheDir: join(cache, 'history.git'),
      exec: actionsExec(),
      warn: (m) => warnings.push(m),
      info: (m) => io.stderr(`${m}\n`),
      kernelgateVersion: KERNELGATE_VERSION,
    });
    const done = await importDirectory(resolve(io.cwd, dir), store);
    for (const s of done.skipped) io.stderr(`skipped ${s}\n`);
    for (const w of warnings) io.stderr(`warning: ${w}\n`);
    io.stdout(
      `${done.stored.length} runs on ${values['history-branch']}, ${done.skipped.length} files skipped\n`,
    );
    return 0;
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}
