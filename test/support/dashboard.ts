// What the dashboard page (src/history/dashboard-page.ts) says it drew, as the browser tests read it.

/** One chart of the page: its GPU model, kernel, case, kind, title, series and marks. */
export interface DrawnChart {
  sku: string;
  kernel: string;
  case: string;
  chart: 'ms' | 'rel' | 'tp' | 'sp';
  title: string;
  axis?: string;
  log: boolean;
  runs: number[];
  series: {
    label: string;
    variant: string;
    branch: string;
    points: number;
    y?: (number | null)[];
  }[];
  marks: Record<'SLOWER' | 'FASTER' | 'WRONG', number[]>;
  band: { variant: string; pct: number; points: number } | null;
  /** the y axis as drawn: its range and the plot's height in CSS pixels (absent with no data) */
  y?: { min: number; max: number; px: number };
}
