// The doctor stage: before anything is timed, finds out which GPU, driver, CUDA runtime,
// toolkit and libraries this machine really has, and says what will go wrong (a runtime newer
// than the driver, a forward-compat layer, throttling, a busy or misconfigured GPU) and the fix.
// It reads the machine (machine.ts), fills the results' environment (environment.ts), then runs
// a list of checks (checks-driver.ts, checks-gpu.ts), each returning diagnostics.
import type { Diagnostic } from '../../results/index.js';
import { MACHINE_CHECKS } from './checks-driver.js';
import { GPU_CHECKS } from './checks-gpu.js';
import { environmentOf } from './environment.js';
import { doctorDiagnostic, inspectMachine, type Machine } from './machine.js';
import { gpuFacts } from './smi.js';
import type { DoctorDeps, DoctorFacts, DoctorReport } from './types.js';

function runChecks(m: Machine, diagnostics: Diagnostic[]): void {
  for (const check of MACHINE_CHECKS) diagnostics.push(...check(m, diagnostics));
  const gpus = m.reading.gpus;
  for (const g of gpus) {
    const who = gpus.length > 1 ? `GPU ${g.index} (${g.name}, ${g.busId})` : g.name;
    for (const check of GPU_CHECKS) diagnostics.push(...check(g, who, m));
  }
}

function factsOf(m: Machine): DoctorFacts {
  const facts: DoctorFacts = { gpus: m.reading.gpus.map(gpuFacts), compatDirs: m.compatDirs };
  if (m.kernelModuleVersion) facts.kernelModuleVersion = m.kernelModuleVersion;
  if (m.libcuda) facts.libcuda = m.libcuda;
  if (m.toolkit) facts.toolkit = m.toolkit;
  return facts;
}

/**
 * Inspects the machine and returns the results document's `environment` plus findings. Never
 * throws for a missing GPU, driver, toolkit or python: each absence is a diagnostic.
 */
export async function runDoctor(deps: DoctorDeps): Promise<DoctorReport> {
  const diagnostics: Diagnostic[] = [];
  const machine = await inspectMachine(deps, (level, code, message, fix) =>
    diagnostics.push(doctorDiagnostic(level, code, message, fix)),
  );
  runChecks(machine, diagnostics);
  return { environment: environmentOf(machine), diagnostics, facts: factsOf(machine) };
}
