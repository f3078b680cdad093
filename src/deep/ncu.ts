// Nsight Compute's `--csv --page raw` output, read into the results' deep.ncu entries. The format
// is NVIDIA's documented one (Nsight Compute CLI, "--csv", "--page raw"): a header row of quoted
// column names (ID, Process ID, Process Name, Host Name, Kernel Name, ..., then one column per
// metric), a row of units under it (empty for the launch's own columns, "%", "nsecond", ...), then
// one row per profiled launch. ncu's own messages start with "==PROF==", "==ERROR==" or
// "==WARNING==" and are not part of the table.

/** The metrics asked of ncu: a fixed small set, cheap to collect (docs/scaling.md). */
export const NCU_METRICS = {
  duration: 'gpu__time_duration.sum',
  sm: 'sm__throughput.avg.pct_of_peak_sustained_elapsed',
  /** mma.sync tensor work (Ampere and later) */
  tensorHmma: 'sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active',
  /** Hopper's warpgroup MMA (wgmma) */
  tensorGmma: 'sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active',
  occupancy: 'sm__warps_active.avg.pct_of_peak_sustained_active',
  dram: 'dram__throughput.avg.pct_of_peak_sustained_elapsed',
} as const;
/** The stall reasons: PC sampling's per-reason warp counts. */
export const NCU_STALL_PREFIX = 'smsp__pcsamp_warps_issue_stalled_';
export const NCU_STALLS_SHOWN = 3;

/** The --metrics argument: the fixed set, Hopper's tensor metric only on compute capability 9. */
export function ncuMetricsArg(computeCapability: string | undefined): string {
  const major = Number((computeCapability ?? '').split('.')[0]);
  const names = [
    NCU_METRICS.duration,
    NCU_METRICS.sm,
    NCU_METRICS.tensorHmma,
    ...(major >= 9 ? [NCU_METRICS.tensorGmma] : []),
    NCU_METRICS.occupancy,
    NCU_METRICS.dram,
    `regex:^${NCU_STALL_PREFIX}`,
  ];
  return names.join(',');
}

export interface NcuLaunch {
  kernel: string;
  /** metric name -> value in the unit of `units` */
  values: Record<string, number>;
  units: Record<string, string>;
}

/** Splits one CSV line (double-quoted fields, "" inside a field for a quote). */
export function csvFields(line: string): string[] {
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      out.push(field);
      field = '';
    } else field += ch;
  }
  out.push(field);
  return out;
}

/** A metric's value: ncu may group digits ("1,234,567"); "n/a" and the like are no number. */
function numberOf(text: string): number | undefined {
  const t = text.replace(/,/g, '').trim();
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t)) return undefined;
  return Number(t);
}

export class NcuFormatError extends Error {}

/** The launches of a `--csv --page raw` table; the error names what is missing. */
export function parseNcuCsv(text: string): NcuLaunch[] {
  const lines = text.split(/\r?\n/).filter((l) => l.startsWith('"'));
  const headerAt = lines.findIndex((l) => l.startsWith('"ID"'));
  if (headerAt < 0) {
    throw new NcuFormatError('no "ID",... header row: this is not ncu --csv --page raw output');
  }
  const header = csvFields(lines[headerAt] as string);
  const unitsRow = lines[headerAt + 1];
  if (unitsRow === undefined) throw new NcuFormatError('no units row under the header');
  const units = csvFields(unitsRow);
  const nameAt = ['Kernel Name', 'Function Name', 'Demangled Name']
    .map((h) => header.indexOf(h))
    .find((i) => i >= 0);
  if (nameAt === undefined) throw new NcuFormatError('no "Kernel Name" column');
  const metricCols = header.map((h, i) => ({ h, i })).filter(({ h }) => /^[a-z0-9]+__/.test(h));
  return lines.slice(headerAt + 2).map((row) => {
    const fields = csvFields(row);
    const values: Record<string, number> = {};
    const unitOf: Record<string, string> = {};
    for (const { h, i } of metricCols) {
      const v = numberOf(fields[i] ?? '');
      if (v !== undefined) {
        values[h] = v;
        unitOf[h] = units[i] ?? '';
      }
    }
    return { kernel: fields[nameAt] ?? '', values, units: unitOf };
  });
}

const TIME_TO_MS: Record<string, number> = {
  nsecond: 1e-6,
  ns: 1e-6,
  usecond: 1e-3,
  us: 1e-3,
  msecond: 1,
  ms: 1,
  second: 1e3,
  s: 1e3,
};

export interface NcuSummary {
  deviceKernel: string;
  metrics: {
    duration_ms?: number;
    sm_throughput_pct?: number;
    tensor_pipe_pct?: number;
    achieved_occupancy_pct?: number;
    dram_throughput_pct?: number;
  };
  stalls: { reason: string; value: number }[];
  launches: number;
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * One variant's launches as one summary: the durations summed, each percentage the launches'
 * duration-weighted mean, the tensor pipe the larger of mma.sync's and wgmma's, the stall
 * reasons' samples summed over the launches and the top three kept; the device kernel named is
 * the longest launch's (with "+ N more" when there were several functions).
 */
export function summarizeNcu(launches: NcuLaunch[]): NcuSummary {
  if (launches.length === 0) throw new NcuFormatError('the table has no profiled launch');
  const durations = launches.map((l) => {
    const v = l.values[NCU_METRICS.duration];
    if (v === undefined) return undefined;
    const scale = TIME_TO_MS[l.units[NCU_METRICS.duration] ?? 'nsecond'];
    if (scale === undefined) {
      throw new NcuFormatError(
        `unknown time unit '${l.units[NCU_METRICS.duration]}' of ${NCU_METRICS.duration}`,
      );
    }
    return v * scale;
  });
  const known = durations.filter((d): d is number => d !== undefined);
  const total = known.reduce((a, b) => a + b, 0);
  const weights = durations.map((d) =>
    total > 0 && d !== undefined ? d / total : 1 / launches.length,
  );
  const mean = (pick: (l: NcuLaunch) => number | undefined): number | undefined => {
    let sum = 0;
    let weight = 0;
    launches.forEach((l, i) => {
      const v = pick(l);
      if (v === undefined) return;
      sum += v * (weights[i] as number);
      weight += weights[i] as number;
    });
    return weight > 0 ? round(sum / weight, 2) : undefined;
  };
  const tensor = (l: NcuLaunch) => {
    const a = l.values[NCU_METRICS.tensorHmma];
    const b = l.values[NCU_METRICS.tensorGmma];
    return a === undefined && b === undefined ? undefined : Math.max(a ?? 0, b ?? 0);
  };
  const metrics: NcuSummary['metrics'] = {};
  const put = (key: keyof NcuSummary['metrics'], v: number | undefined) => {
    if (v !== undefined) metrics[key] = v;
  };
  put('duration_ms', known.length ? round(total, 6) : undefined);
  put(
    'sm_throughput_pct',
    mean((l) => l.values[NCU_METRICS.sm]),
  );
  put('tensor_pipe_pct', mean(tensor));
  put(
    'achieved_occupancy_pct',
    mean((l) => l.values[NCU_METRICS.occupancy]),
  );
  put(
    'dram_throughput_pct',
    mean((l) => l.values[NCU_METRICS.dram]),
  );
  const stallSum = new Map<string, number>();
  for (const l of launches) {
    for (const [name, v] of Object.entries(l.values)) {
      if (!name.startsWith(NCU_STALL_PREFIX)) continue;
      const reason = name.slice(NCU_STALL_PREFIX.length);
      // "selected" is the warp that issued, and "_not_issued" splits a reason: neither is a stall.
      if (reason === 'selected' || reason.endsWith('_not_issued')) continue;
      stallSum.set(reason, (stallSum.get(reason) ?? 0) + v);
    }
  }
  const stalls = [...stallSum.entries()]
    .filter(([, v]) => v > 0)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, NCU_STALLS_SHOWN)
    .map(([reason, value]) => ({ reason, value }));
  let longest = 0;
  durations.forEach((d, i) => {
    if ((d ?? 0) > (durations[longest] ?? 0)) longest = i;
  });
  const names = new Set(launches.map((l) => l.kernel));
  const main = (launches[longest] as NcuLaunch).kernel;
  return {
    deviceKernel: names.size > 1 ? `${main} + ${names.size - 1} more` : main,
    metrics,
    stalls,
    launches: launches.length,
  };
}

/** What stopped ncu, as the reader should act on it; undefined when nothing known did. */
export function ncuProblem(output: string): string | undefined {
  if (/ERR_NVGPUCTRPERM/.test(output)) {
    return (
      'ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM): run the job as root, ' +
      'or load the NVIDIA driver with NVreg_RestrictProfilingToAdminUsers=0 ' +
      '(https://developer.nvidia.com/ERR_NVGPUCTRPERM)'
    );
  }
  const metric = /==ERROR== Failed to find metric (\S+)/.exec(output);
  if (metric) return `ncu on this GPU has no metric ${metric[1]}`;
  if (/==WARNING== No kernels were profiled/.test(output)) {
    return 'ncu profiled no kernel: the variant launched nothing between the profiler start and stop';
  }
  const error = /==ERROR== (.*)/.exec(output);
  return error ? `ncu: ${(error[1] as string).trim()}` : undefined;
}
