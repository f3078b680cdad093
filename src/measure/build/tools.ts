// Finding the tools: nvcc, cuobjdump (the toolkit's or the Triton wheel's), c++filt.
import path from 'node:path';
import { NOT_FOUND_EXIT_CODE, type Exec } from '../../lib/index.js';
import { shortKernelName } from './inspect.js';

/** A located tool: the path to run and what `--version` printed. */
export interface Tool {
  path: string;
  version: string;
}

/**
 * What was found, per Exec and lookup (one Exec is one run's): the doctor, the head's build and the
 * base revision's build of a paired run ask `nvcc --version` once between them, and the Triton
 * wheel's python once. A WeakMap: an Exec that is gone takes its answers with it.
 */
const probed = new WeakMap<Exec, Map<string, Promise<Tool | undefined>>>();

function once(
  exec: Exec,
  key: string,
  find: () => Promise<Tool | undefined>,
): Promise<Tool | undefined> {
  let answers = probed.get(exec);
  if (!answers) {
    answers = new Map();
    probed.set(exec, answers);
  }
  let found = answers.get(key);
  if (!found) {
    found = find();
    answers.set(key, found);
  }
  return found;
}

async function probeTool(exec: Exec, candidate: string): Promise<Tool | undefined> {
  const out = await exec.run(candidate, ['--version']).catch(() => undefined);
  if (!out || out.exitCode === NOT_FOUND_EXIT_CODE || out.exitCode !== 0) return undefined;
  return { path: candidate, version: `${out.stdout}${out.stderr}`.trim() };
}

/** nvcc: PATH, then $CUDA_HOME/bin/nvcc, then /usr/local/cuda/bin/nvcc; probed once per Exec. */
export function findNvcc(
  exec: Exec,
  env: Record<string, string | undefined>,
): Promise<Tool | undefined> {
  return once(exec, `nvcc\0${env.CUDA_HOME ?? ''}`, () => lookForNvcc(exec, env));
}

async function lookForNvcc(
  exec: Exec,
  env: Record<string, string | undefined>,
): Promise<Tool | undefined> {
  const candidates = ['nvcc'];
  if (env.CUDA_HOME) candidates.push(path.join(env.CUDA_HOME, 'bin', 'nvcc'));
  candidates.push('/usr/local/cuda/bin/nvcc');
  for (const candidate of candidates) {
    const tool = await probeTool(exec, candidate);
    if (tool) return tool;
  }
  return undefined;
}

/**
 * cuobjdump: PATH, then $CUDA_HOME/bin, then the copy inside the Triton wheel of `python`; probed
 * once per Exec.
 */
export function findCuobjdump(
  exec: Exec,
  env: Record<string, string | undefined>,
  python: string,
): Promise<Tool | undefined> {
  return once(exec, `cuobjdump\0${env.CUDA_HOME ?? ''}\0${python}`, () =>
    lookForCuobjdump(exec, env, python),
  );
}

async function lookForCuobjdump(
  exec: Exec,
  env: Record<string, string | undefined>,
  python: string,
): Promise<Tool | undefined> {
  const candidates = ['cuobjdump'];
  if (env.CUDA_HOME) candidates.push(path.join(env.CUDA_HOME, 'bin', 'cuobjdump'));
  for (const candidate of candidates) {
    const tool = await probeTool(exec, candidate);
    if (tool) return tool;
  }
  const triton = await exec
    .run(python, ['-c', 'import triton, os; print(os.path.dirname(triton.__file__))'])
    .catch(() => undefined);
  const tritonDir = triton?.exitCode === 0 ? triton.stdout.trim().split(/\r?\n/).pop() : undefined;
  if (!tritonDir) return undefined;
  return probeTool(exec, path.join(tritonDir, 'backends', 'nvidia', 'bin', 'cuobjdump'));
}

/** First line of `nvcc --version` that names the release, e.g. `release 13.0, V13.0.88`. */
export function toolkitRelease(nvccVersion: string): string | undefined {
  return /release (\d+\.\d+), V([\d.]+)/.exec(nvccVersion)?.[2];
}

/** Readable names for the mangled ones, through c++filt; none when it is missing. */
export async function demangle(exec: Exec, names: string[]): Promise<Record<string, string>> {
  const mangled = [...new Set(names.filter((n) => n.startsWith('_Z')))];
  if (mangled.length === 0) return {};
  const out = await exec.run('c++filt', mangled).catch(() => undefined);
  const lines = out?.exitCode === 0 ? out.stdout.trimEnd().split(/\r?\n/) : [];
  if (lines.length !== mangled.length) return {};
  return Object.fromEntries(mangled.map((m, i) => [m, shortKernelName(lines[i] ?? m)]));
}
