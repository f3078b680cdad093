// scripts/gpu-e2e.sh's `spill` scenario (issue 33): the commit it plants on top must make
// attention/cuda_fa2 really spill. Run 63 on the H100 planted -maxrregcount=128 alone and the
// kernel kept 254 registers, 0 bytes spilled: fa2.cu's __launch_bounds__ wins over the global
// option. Here the scenario's own edit runs on a copy of kernel.yml, and the flags it leaves are
// compiled by real nvcc 13.0 with the action's build command (src/measure/build/variant.ts),
// read back by the action's own ptxas parser.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parsePtxasInfo } from '../src/measure/index.js';
import { describeWithVenv } from './support/venv.js';

const COMPILE_TIMEOUT_MS = 240_000;
const BASE_FLAGS = ['-gencode=arch=compute_90a,code=sm_90a'];

type FunctionResources = ReturnType<typeof parsePtxasInfo>[number];

interface VariantEntry {
  name: string;
  build?: { flags?: string[]; expect?: Record<string, unknown> };
}

/** The Python that spill_commit() feeds to python3, taken from the script itself. */
async function spillEdit(): Promise<string> {
  const script = await readFile('scripts/gpu-e2e.sh', 'utf8');
  const m =
    /spill_commit\(\) \{\n {2}python3 - "\$root\/kernels\/attention\/kernel\.yml" <<'PY' \|\| return 2\n([\s\S]*?)\nPY\n/.exec(
      script,
    );
  if (!m?.[1]) throw new Error("scripts/gpu-e2e.sh: spill_commit's Python not found");
  return m[1];
}

/** The action's nvcc command for a CUDA variant, with -Xptxas -v; ptxas's per-function resources. */
function compile(flags: readonly string[], out: string): FunctionResources[] {
  const args = ['-shared', '-Xcompiler', '-fPIC', '-O3', ...flags, '-Xptxas', '-v', '-o', out];
  const run = spawnSync('nvcc', [...args, 'cuda/fa2.cu'], {
    cwd: 'kernels/attention',
    encoding: 'utf8',
    timeout: COMPILE_TIMEOUT_MS,
  });
  if (run.status !== 0) throw new Error(`nvcc ${args.join(' ')} failed: ${run.stderr}`);
  return parsePtxasInfo(`${run.stdout}\n${run.stderr}`);
}

let work: string;
let planted: VariantEntry;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'kg-spill-'));
  const manifest = path.join(work, 'kernel.yml');
  await copyFile('kernels/attention/kernel.yml', manifest);
  execFileSync('python3', ['-', manifest], { input: await spillEdit() });
  const doc = parse(await readFile(manifest, 'utf8')) as { variants: VariantEntry[] };
  const found = doc.variants.find((v) => v.name === 'cuda_fa2');
  if (!found) throw new Error('cuda_fa2 is gone from the edited kernel.yml');
  planted = found;
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describeWithVenv("gpu-e2e.sh spill: the planted commit's cuda_fa2 build spills", () => {
  it("caps the registers with a flag ptxas lets win over the kernel's launch bounds, and drops the no-spill expectations", () => {
    expect(planted.build?.flags).toEqual([
      ...BASE_FLAGS,
      '-maxrregcount=128',
      '-Xptxas=--override-directive-values',
    ]);
    expect(Object.keys(planted.build?.expect ?? {})).toEqual(['archs', 'sass', 'smem_max']);
  });

  it(
    'compiles to 128 registers with spills, where the base flags spill nothing',
    () => {
      const base = compile(BASE_FLAGS, path.join(work, 'base.so'));
      const head = compile(planted.build?.flags ?? [], path.join(work, 'head.so'));
      // 2 dtypes x head dims 64, 128 x causal or not.
      expect(base).toHaveLength(8);
      expect(head.map((f) => f.name)).toEqual(base.map((f) => f.name));
      for (const f of base) {
        expect(f.registers, f.name).toBeGreaterThan(128);
        expect(f.spill_store_bytes, f.name).toBe(0);
        expect(f.stack_bytes, f.name).toBe(0);
      }
      for (const f of head) {
        expect(f.registers, f.name).toBe(128);
        expect(f.spill_store_bytes, f.name).toBeGreaterThan(0);
        expect(f.spill_load_bytes, f.name).toBeGreaterThan(0);
      }
    },
    2 * COMPILE_TIMEOUT_MS,
  );

  it(
    'would not spill with -maxrregcount=128 alone (run 63): the launch bounds win',
    () => {
      const capped = compile([...BASE_FLAGS, '-maxrregcount=128'], path.join(work, 'capped.so'));
      expect(capped).toHaveLength(8);
      expect(Math.max(...capped.map((f) => f.registers ?? 0))).toBeGreaterThan(128);
      expect(capped.every((f) => f.spill_store_bytes === 0)).toBe(true);
    },
    COMPILE_TIMEOUT_MS,
  );
});
