// `kernelgate check` (issue 30): each configuration mistake a new user made, caught before any GPU
// run with the exact lines the user reads: file:line:col, the field, the value and the fix.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_GATE_FAILED, EXIT_PASS, runCli } from '../src/cli/index.js';
import { capture } from './support/cli-io.js';

const HAVE_PYTHON = spawnSync('python3', ['--version']).status === 0;

const MODULE = `"""A softmax written as a team would: no torch needed to import it here."""
def make_inputs(params, seed, device):
    return {}
def output_like(inputs, params):
    return None
def oracle(inputs, params):
    return None
def work(params):
    return {"flops": 0.0, "bytes": 0.0, "note": ""}
VARIANTS = {"torch_ref": lambda params, ctx: None, "triton_softmax": lambda params, ctx: None}
`;

const MANIFEST = `name: softmax
module: kernels.softmax.bench
tolerance:
  fp16: { rel_l2: 2e-3 }
  bf16: { rel_l2: 1e-2 }
cases:
  - dtype: [fp16, bf16]
    rows: 4096
    cols: [1024, 4096]
ci_cases:
  - dtype: [fp16, bf16]
    rows: 7
    cols: [100, 257]
speed_reference: torch_ref
variants:
  - name: torch_ref
    role: reference
  - name: triton_softmax
    role: candidate
tiers:
  metric: speedup
  variant: triton_softmax
  case: { dtype: fp16, rows: 4096, cols: 4096 }
  ladder:
    - { name: parity, min: 1 }
`;

/** A user's repository: kernelgate.yml, kernels/softmax/{kernel.yml,bench.py}. */
function repo(manifest: string, module = MODULE): string {
  const root = mkdtempSync(join(tmpdir(), 'kg-check-'));
  mkdirSync(join(root, 'kernels', 'softmax'), { recursive: true });
  writeFileSync(join(root, 'kernelgate.yml'), 'report:\n  title: softmax team\n');
  writeFileSync(join(root, 'kernels', '__init__.py'), '');
  writeFileSync(join(root, 'kernels', 'softmax', '__init__.py'), '');
  writeFileSync(join(root, 'kernels', 'softmax', 'bench.py'), module);
  writeFileSync(join(root, 'kernels', 'softmax', 'kernel.yml'), manifest);
  return root;
}

async function check(root: string, ...args: string[]) {
  const { out, io } = capture(root);
  const status = await runCli(['check', ...args], io);
  return { status, stdout: out.stdout, stderr: out.stderr };
}

describe('kernelgate check', () => {
  it.skipIf(!HAVE_PYTHON)('a clean repository: exit 0, one line', async () => {
    const got = await check(repo(MANIFEST));
    expect(got).toEqual({
      status: EXIT_PASS,
      stdout:
        'kernelgate check: ok: kernelgate.yml and 1 kernel (softmax), 1 of 1 modules imported; 0 warnings\n',
      stderr: '',
    });
  });

  const mistakes: [string, string, string[]][] = [
    [
      'a missing tolerance for a dtype',
      MANIFEST.replace('  bf16: { rel_l2: 1e-2 }\n', ''),
      [
        'kernels/softmax/kernel.yml:6:5: cases[0].dtype names bf16, which has no entry in tolerance (got "bf16"; tolerance has fp16)',
        '  fix: add tolerance.bf16: { rel_l2: … } (the relative L2 error allowed against the oracle), or remove bf16 from cases[0].dtype',
        'kernels/softmax/kernel.yml:10:5: ci_cases[0].dtype names bf16, which has no entry in tolerance (got "bf16"; tolerance has fp16)',
        '  fix: add tolerance.bf16: { rel_l2: … } (the relative L2 error allowed against the oracle), or remove bf16 from ci_cases[0].dtype',
        'kernelgate check: 2 problems, 0 warnings',
      ],
    ],
    [
      'a typo in a case key',
      MANIFEST.replace(
        '  - dtype: [fp16, bf16]\n    rows: 7',
        '  - dtpye: [fp16, bf16]\n    rows: 7',
      ),
      [
        'kernels/softmax/kernel.yml:11:5: ci_cases[0] has no dtype, so the harness cannot find its tolerance (got keys dtpye, rows, cols)',
        "  fix: add dtype: to ci_cases[0] (one of the tolerance's dtypes: fp16, bf16)",
        'kernels/softmax/kernel.yml:11:5: ci_cases[0].dtpye is not a key of any group of cases (got "dtpye"; keys of cases: dtype, rows, cols)',
        '  fix: did you mean dtype? rename dtpye to dtype',
        'kernelgate check: 2 problems, 0 warnings',
      ],
    ],
    [
      'a typo in a case value',
      MANIFEST.replace(
        '  case: { dtype: fp16, rows: 4096, cols: 4096 }',
        '  case: { dtype: fp16, rows: 4096, cols: 4069 }',
      ),
      [
        'kernels/softmax/kernel.yml:23:36: tiers.case.cols matches no case: no case has cols 4069 (got 4069; cols takes 1024, 4096, 100, 257)',
        '  fix: did you mean 4096? write cols: 4096',
        'kernelgate check: 1 problem, 0 warnings',
      ],
    ],
    [
      'a quoted number in a case',
      MANIFEST.replace('    rows: 4096\n', '    rows: "4096"\n'),
      [
        'kernels/softmax/kernel.yml:8:5: cases[0].rows is the text "4096", not a number (got "4096")',
        '  fix: write it without quotes (rows: 4096): quoted, the kernel module receives a string',
        'kernelgate check: 1 problem, 0 warnings',
      ],
    ],
    [
      'a quoted tolerance',
      MANIFEST.replace('fp16: { rel_l2: 2e-3 }', 'fp16: { rel_l2: "2e-3" }'),
      [
        'kernels/softmax/kernel.yml:4:11: tolerance.fp16.rel_l2 must be number (got "2e-3")',
        '  fix: write the number without quotes (1e-3, not "1e-3"): quoted, it is text',
        'kernelgate check: 1 problem, 0 warnings',
      ],
    ],
    [
      'a wrong module',
      MANIFEST.replace('module: kernels.softmax.bench', 'module: kernels.softmx.bench'),
      [
        'kernels/softmax/kernel.yml:2:1: module names no file of the repository (got "kernels.softmx.bench"; looked for kernels/softmx/bench.py)',
        '  fix: did you mean kernels.softmax.bench? module is the dotted path from the repository root',
        'kernelgate check: 1 problem, 0 warnings',
      ],
    ],
    [
      'a tier naming a variant that does not exist',
      MANIFEST.replace('  variant: triton_softmax', '  variant: triton_softmx'),
      [
        'kernels/softmax/kernel.yml:22:3: tiers.variant must name a variant (one of torch_ref, triton_softmax) (got "triton_softmx")',
        '  fix: name one of the variants listed, or add a variant of that name to variants',
        'kernelgate check: 1 problem, 0 warnings',
      ],
    ],
  ];

  it.skipIf(!HAVE_PYTHON).each(mistakes)(
    '%s: exit 1, file:line, field, value and fix',
    async (_what, manifest, lines) => {
      const got = await check(repo(manifest));
      expect(got.stdout.split('\n').slice(0, -1)).toEqual(lines);
      expect(got.status).toBe(EXIT_GATE_FAILED);
    },
  );

  it.skipIf(!HAVE_PYTHON)("a variant the module's VARIANTS does not have", async () => {
    const got = await check(repo(MANIFEST, MODULE.replace('"triton_softmax": ', '"triton": ')));
    expect(got.stdout.split('\n').slice(0, -1)).toEqual([
      'kernels/softmax/kernel.yml:18:5: variants[1].name is not in the module\'s VARIANTS (got "triton_softmax"; kernels.softmax.bench.VARIANTS has torch_ref, triton)',
      '  fix: add "triton_softmax" to VARIANTS in kernels.softmax.bench, or name one of its variants',
      'kernels/softmax/kernel.yml:15:1: warning: variants does not list triton of the module\'s VARIANTS: never run (got ["triton"])',
      '  fix: add them to variants (role candidate or reference), or remove them from VARIANTS',
      'kernelgate check: 1 problem, 1 warning',
    ]);
    expect(got.status).toBe(EXIT_GATE_FAILED);
  });

  it('without python (--no-python): the static checks alone, and says so', async () => {
    const got = await check(repo(MANIFEST.replace(/ci_cases:\n(.*\n){3}/, '')), '--no-python');
    expect(got.stdout).toBe(
      [
        'kernels/softmax/kernel.yml:1:1: warning: ci_cases is missing: no small shapes with tails to check the kernel on (got nothing)',
        '  fix: add ci_cases: the cases at small sizes, some not a multiple of the block (e.g. 7, 100, 257), so a kernel that mishandles its last partial block fails (docs/kernel-modules.md)',
        'note: the kernel modules were not imported (--no-python)',
        'kernelgate check: ok: kernelgate.yml and 1 kernel (softmax), 0 of 1 modules imported; 1 warning',
        '',
      ].join('\n'),
    );
    expect(got.status).toBe(EXIT_PASS);
  });

  it('a python that is not there is a note, not a failure', async () => {
    const root = repo(MANIFEST);
    writeFileSync(join(root, 'kernelgate.yml'), 'harness:\n  python: /nonexistent/python9\n');
    const got = await check(root);
    expect(got.stdout).toBe(
      'note: the kernel modules were not imported: /nonexistent/python9 not found (harness.python)\n' +
        'kernelgate check: ok: kernelgate.yml and 1 kernel (softmax), 0 of 1 modules imported; 0 warnings\n',
    );
    expect(got.status).toBe(EXIT_PASS);
  });
});
