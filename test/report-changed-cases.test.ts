// The changed-cases table a reviewer reads (issue 32), on the recorded H100 run of a planted 2 %
// slowdown of attention/triton_fa2 (paired-slow2-h100-run25): the headline-size cases and the
// largest change in time first, the launch-bound tails in one line, no column that no row fills,
// cells that do not wrap, and each symbol explained once under the tables.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import { compactTable, NBSP } from '../src/report/compact.js';
import { loadGz, ROOT } from './support/recorded.js';

const config = loadConfig(ROOT);
const comment = judge(loadGz('paired-slow2-h100-run25'), undefined, config, 'pr', { prNumber: 7 })
  .rendered.comment;
const section = comment.slice(comment.indexOf('### Changed cases'));
const rows = section
  .split('\n')
  .filter((l) => l.startsWith('| triton'))
  .map((l) => l.slice(2, -2).split(' | '));

describe('the changed cases of the recorded slow2 run (H100, 2026-11-24)', { timeout: 120_000 }, () => {
  it('lists the headline case first, then the largest change in ms; the tails in one line', () => {
    expect(section.split('\n')[0]).toBe(
      '### Changed cases: correctness first, then the headline case and the largest change in time',
    );
    expect(section).toContain(
      '| variant | Δ | verdict | dtype | B | H | S | D | causal | ms | base ms | CI of Δ |',
    );
    expect(rows).toHaveLength(8);
    // attention's headline case: fp16, B=16, H=96, S=4096, D=128, causal=false
    expect(rows[0]!.slice(3, 9)).toEqual(['fp16', '16', '96', '4096', '128', 'false']);
    const costs = rows.slice(1).map((r) => Math.abs(Number(r[9]) - Number(r[10])));
    expect(costs).toEqual([...costs].sort((a, b) => b - a));
    expect(costs[0]).toBeGreaterThan(0.5); // 27.07 vs 26.53 ms
    expect(section).toContain(
      '- 🔴 18 slower cases of attention/triton\\_fa2 under 0.1 ms (launch-bound): +5.3 % … +56.0 %, at most 2.87 µs a call\n',
    );
  });

  it('keeps a number with its unit and an interval on one line; drops Sk and note', () => {
    expect(rows[0]![1]).toBe(`+2.6${NBSP}%${NBSP}·${NBSP}paired`);
    expect(rows[0]![2]).toBe(`🔴${NBSP}SLOWER`);
    expect(rows[0]![11]).toBe(`+1.9${NBSP}%${NBSP}…${NBSP}+4.6${NBSP}%`);
    for (const row of rows) for (const cell of row.slice(1)) expect(cell).not.toContain(' ');
    expect(section).not.toMatch(/\| Sk \||\| note \|/);
  });

  it('explains each symbol the tables show once, under them', () => {
    const legend =
      '<sub>Δ: the change in a call’s median time, this run against its base (> 0 is slower). ' +
      '· paired: timed in pairs with the base revision in this job; · vs baseline: against the stored run. ' +
      'CI of Δ: its 99 % confidence interval. 🔴 SLOWER: the whole interval is above the threshold. ' +
      'under 0.1 ms (launch-bound): head and base both take less; counted below the table, not listed.</sub>';
    expect(section).toContain(`\n${legend}\n`);
    expect(comment.split(legend)).toHaveLength(2);
  });
});

describe('compactTable', () => {
  it('drops a column no row fills and keeps the words of variant and note wrapping', () => {
    const md = compactTable(
      ['variant', 'Δ', 'Sk', 'note'],
      [
        [{ trusted: 'a b' }, { trusted: '+1.0 % (±2.0 %)' }, '', 'too few samples'],
        [{ trusted: 'c' }, { trusted: '−3.0 %' }, { trusted: ' ' }, ''],
      ],
      ['l', 'r', 'l', 'l'],
    );
    expect(md).toBe(
      '| variant | Δ | note |\n| :- | -: | :- |\n' +
        `| a b | +1.0${NBSP}%${NBSP}(±2.0${NBSP}%) | too few samples |\n` +
        `| c | −3.0${NBSP}% | |`,
    );
  });
});
