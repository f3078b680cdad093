// packageRoot: kernelgate's root from any module, under src/ (tests) or dist/ (the bundle).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../src/lib/index.js';

describe('packageRoot', () => {
  it('finds the folder whose package.json is kernelgate, from src/ and from dist/', () => {
    expect(packageRoot()).toBe(resolve('.'));
    expect(packageRoot(pathToFileURL(resolve('src/report/render.ts')).href)).toBe(resolve('.'));
    expect(packageRoot(pathToFileURL(resolve('dist/index.js')).href)).toBe(resolve('.'));
  });

  it('names where it looked when there is none', () => {
    expect(() => packageRoot('file:///proc/self/x.js')).toThrow(
      "kernelgate's package.json not found above /proc/self",
    );
  });
});
