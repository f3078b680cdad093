// Growth, measured in CI (issue 18): a simulated year of history (365 nightlies + 1,000 pushes on
// two SKUs, 2,730 records from the recorded 217-case push run) on a real git repository packs to
// at most 25 MB, and a fresh reader gets the newest baseline and a 30-run window fetching under
// 1 MiB (its time is printed, not asserted).
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { simulateYear } from '../scripts/lib/history-year.js';

describe('history growth', () => {
  it('a simulated year packs under 25 MB and a read fetches under 1 MiB', async () => {
    const figures = await simulateYear({
      results: 'test/fixtures/recorded/push/results.json.gz',
      nightlies: 365,
      pushes: 1000,
    });
    rmSync(dirname(figures.remote), { recursive: true, force: true });
    console.log(JSON.stringify(figures, null, 2));
    expect(figures.records).toBe(2730);
    expect(figures.warnings).toEqual([]);
    expect(figures.window_records).toBe(30);
    expect(figures.packed_mb).toBeLessThanOrEqual(25);
    // The read's wall time is printed above (figures.times_ms), not asserted: a busy CI machine
    // must not fail a test of the history's size.
    // A reader and a writer each fetch the tip's trees and what they need, not the branch.
    for (const kib of Object.values(figures.fetched_kib)) expect(kib).toBeLessThan(1024);
  }, 300_000);
});
