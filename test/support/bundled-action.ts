// The bundled action (dist/index.js) run as a runner runs it: INPUT_* variables, the event payload
// file, the GITHUB_* command files, GITHUB_API_URL pointing at the REST stand-in. The bundle is
// built from src/ by the project's own script into a scratch folder, so a test neither needs nor
// touches the committed dist/.
import { execFile } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Finished {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ActionRun extends Finished {
  outputs: Record<string, string>;
  summary: string;
  workspace: string;
}

export function runFile(
  file: string,
  args: string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<Finished> {
  return new Promise((done) => {
    execFile(file, args, { ...options, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

/** Builds dist/index.js from the repository's src/ into a scratch folder; returns the folder. */
export async function buildBundle(repoRoot: string): Promise<string> {
  const buildDir = mkdtempSync(join(tmpdir(), 'kg-bundle-'));
  mkdirSync(join(buildDir, 'src'));
  for (const file of readdirSync(join(repoRoot, 'src')))
    symlinkSync(join(repoRoot, 'src', file), join(buildDir, 'src', file));
  // The bundle's folder is the action's root: python/ (the harness), data/ (the GPU table), and
  // kernelgate's own kernels/ package, which a runner's action checkout holds too.
  for (const dir of ['schema', 'templates', 'node_modules', 'python', 'data', 'kernels'])
    symlinkSync(join(repoRoot, dir), join(buildDir, dir));
  for (const file of ['package.json', 'LICENSE'])
    symlinkSync(join(repoRoot, file), join(buildDir, file));
  const built = await runFile(process.execPath, [join(repoRoot, 'scripts', 'bundle.mjs')], {
    cwd: buildDir,
    env: { PATH: process.env['PATH'] ?? '' },
  });
  if (built.code !== 0)
    throw new Error(`scripts/bundle.mjs failed (${built.code}):\n${built.stdout}${built.stderr}`);
  return buildDir;
}

/** Parses the GITHUB_OUTPUT file: `name<<delimiter`, the value's lines, `delimiter`. */
export function parseOutputs(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^([^<]+)<<(.+)$/.exec(lines[i] ?? '');
    if (!m?.[1] || !m[2]) continue;
    const value: string[] = [];
    for (i++; i < lines.length && lines[i] !== m[2]; i++) value.push(lines[i] ?? '');
    outputs[m[1]] = value.join('\n');
  }
  return outputs;
}

/** What core.setFailed / core.warning print, with the runner's escaping undone. */
export function annotations(stdout: string, kind: 'error' | 'warning'): string[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith(`::${kind}::`))
    .map((line) =>
      line
        .slice(`::${kind}::`.length)
        .replace(/%0A/g, '\n')
        .replace(/%0D/g, '\r')
        .replace(/%25/g, '%'),
    );
}

/**
 * Runs `node <bundle>/dist/index.js` in a fresh workspace and runner temp folder (an ephemeral
 * runner: nothing survives from one run to the next but what the remote and the stand-in keep).
 */
export async function runBundledAction(opts: {
  bundleDir: string;
  apiUrl: string;
  eventName: string;
  eventFile: string;
  ref: string;
  sha: string;
  runId: string;
  inputs: Record<string, string>;
  /** the checked-out repository (default: a fresh empty folder) */
  workspace?: string;
  /** more of the runner's environment (e.g. TRITON_INTERPRET) */
  env?: Record<string, string>;
  /** the node that runs the bundle (default: this one) */
  node?: string;
}): Promise<ActionRun> {
  const workspace = opts.workspace ?? mkdtempSync(join(tmpdir(), 'kg-workspace-'));
  const runnerTemp = mkdtempSync(join(tmpdir(), 'kg-runner-temp-'));
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    HOME: process.env['HOME'] ?? tmpdir(),
    GITHUB_ACTIONS: 'true',
    CI: 'true',
    GITHUB_EVENT_NAME: opts.eventName,
    GITHUB_EVENT_PATH: opts.eventFile,
    GITHUB_REPOSITORY: 'acme/kernels',
    GITHUB_SHA: opts.sha,
    GITHUB_REF: opts.ref,
    GITHUB_RUN_ID: opts.runId,
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_WORKSPACE: workspace,
    RUNNER_TEMP: runnerTemp,
    GITHUB_API_URL: opts.apiUrl,
    GITHUB_SERVER_URL: 'https://github.com',
    ...opts.env,
  };
  for (const [name, file] of Object.entries({
    GITHUB_OUTPUT: 'output',
    GITHUB_STEP_SUMMARY: 'summary',
    GITHUB_STATE: 'state',
    GITHUB_ENV: 'env',
  })) {
    env[name] = join(runnerTemp, file);
    writeFileSync(env[name], '');
  }
  for (const [name, value] of Object.entries(opts.inputs))
    env[`INPUT_${name.toUpperCase()}`] = value;
  const finished = await runFile(
    opts.node ?? process.execPath,
    [join(opts.bundleDir, 'dist', 'index.js')],
    { cwd: workspace, env },
  );
  return {
    ...finished,
    outputs: parseOutputs(readFileSync(env['GITHUB_OUTPUT']!, 'utf8')),
    summary: readFileSync(env['GITHUB_STEP_SUMMARY']!, 'utf8'),
    workspace,
  };
}
