// `kernelgate merge DIR... --shards n`: the shards' results joined into one document, judged,
// reported and gated once, like `kernelgate report` (docs/scaling.md).
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { actionsExec, type Exec, makeOutputDir } from '../lib/index.js';
import { fileBaselineStore, storeKeyOf } from '../store/index.js';
import type { Config } from '../config/index.js';
import type { KernelgateResults } from '../results/index.js';
import { InputError } from '../results/index.js';
import { mergedRun } from '../pipeline/index.js';
import { MAX_SHARDS } from '../shard/index.js';

export const MERGE_USAGE = `kernelgate merge DIR [DIR...] --shards N [--config DIR_OR_FILE] [--out-dir DIR]
                 [--baseline FILE | --baseline-dir DIR (--branch NAME | --base NAME)]
                 [--base-sha SHA] [--kind pr|nightly] [--out FILE]
  joins the shards' results.json (each a \`kernelgate run\` of one shard) found under the folders into
  one (--out-dir, default .kernelgate/report/merge), then judges and reports it like \`report\`;
  a shard that did not report or failed fails the gate, named with the cases it owned
  --base NAME           judge against branch NAME's newest stored results on each shard's GPU SKU
  --branch NAME         the branch that ran (its newest stored results are the baseline)
  --base-sha SHA        with --base: the pull request's base commit; each GPU SKU's baseline is the
                        nearest stored run whose commit is an ancestor of it (git, in this folder)
`;

/** `kernelgate merge`'s options (MERGE_USAGE names each of them). */
export const MERGE_OPTIONS = {
  shards: { type: 'string' },
  config: { type: 'string' },
  'out-dir': { type: 'string', default: '.kernelgate/report/merge' },
  baseline: { type: 'string' },
  'baseline-dir': { type: 'string', default: '.kernelgate/baselines' },
  branch: { type: 'string' },
  base: { type: 'string' },
  'base-sha': { type: 'string' },
  kind: { type: 'string', default: 'pr' },
  out: { type: 'string' },
} as const;

/** What the command borrows from the rest of the command line (common.ts), passed in by cli.ts. */
export interface MergeCliDeps {
  /** runs git for --base-sha's ancestry (default: real processes) */
  exec?: Exec;
  configFrom(option: string | undefined, cwd: string): Config;
  judgeAndPrint(
    results: KernelgateResults,
    baseline: KernelgateResults | undefined,
    config: Config,
    kind: 'pr' | 'nightly',
    out: string | undefined,
    io: { stdout: (t: string) => void; stderr: (t: string) => void; cwd: string },
  ): number;
}

export async function mergeCommand(
  args: string[],
  io: { stdout: (t: string) => void; stderr: (t: string) => void; cwd: string },
  deps: MergeCliDeps,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: MERGE_OPTIONS,
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length === 0) {
    throw new InputError("merge needs the folders holding the shards' results.json");
  }
  const shardsText = values.shards;
  if (
    shardsText === undefined ||
    !/^\d{1,4}$/.test(shardsText) ||
    Number(shardsText) < 1 ||
    Number(shardsText) > MAX_SHARDS
  ) {
    throw new InputError(
      `--shards must be the number of shards of the split, 1 to ${MAX_SHARDS} (got ${shardsText === undefined ? 'nothing' : JSON.stringify(shardsText)}): without it a shard that never reported would go unnoticed`,
    );
  }
  const kind = values.kind;
  if (kind !== 'pr' && kind !== 'nightly') {
    throw new InputError(`--kind must be pr or nightly (got ${JSON.stringify(kind)})`);
  }
  const baseSha = values['base-sha'];
  if (baseSha !== undefined && !/^[0-9a-f]{40}$/.test(baseSha)) {
    throw new InputError(
      `--base-sha must be a full commit id, 40 hex digits (got ${JSON.stringify(baseSha)})`,
    );
  }
  if (baseSha !== undefined && values.base === undefined) {
    throw new InputError(
      "--base-sha needs --base: it picks among the base branch's stored runs by commit ancestry",
    );
  }
  const config = deps.configFrom(values.config, io.cwd);
  const dirs = positionals.map((p) => resolve(io.cwd, p));
  const log = {
    info: (line: string) => io.stderr(`${line}\n`),
    warning: (line: string) => io.stderr(`warning: ${line}\n`),
  };
  // the merged document's folder is made (or refused in one line) before anything is read
  makeOutputDir(resolve(io.cwd, values['out-dir']), values['out-dir']);
  const run = await mergedRun({
    dirs,
    shards: Number(shardsText),
    cwd: io.cwd,
    outDir: resolve(io.cwd, values['out-dir']),
    baselinePath: values.baseline === undefined ? undefined : resolve(io.cwd, values.baseline),
    store: fileBaselineStore(resolve(io.cwd, values['baseline-dir']), {
      warn: log.warning,
      info: log.info,
      key: storeKeyOf(process.env),
    }),
    baselineBranch: values.base ?? values.branch,
    saveBranch: undefined,
    ancestry:
      baseSha === undefined
        ? undefined
        : { baseSha, workspace: io.cwd, exec: deps.exec ?? actionsExec() },
    ...log,
  });
  io.stderr(`merged results: ${run.resultsPath}\n`);
  return deps.judgeAndPrint(run.results, run.baseline?.results, config, kind, values.out, io);
}
