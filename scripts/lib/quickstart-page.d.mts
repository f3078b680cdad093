// Types of scripts/lib/quickstart-page.mjs (plain JavaScript: scripts/gpu-quickstart.sh runs it on node).
export type Block =
  | { kind: 'file'; path: string; text: string }
  | { kind: 'run'; exit: number; text: string }
  | { kind: 'not-in-ci'; why: string; text: string }
  | { kind: 'output'; of: string; text: string }
  | { kind: 'unmarked'; lang: string; text: string };

export const PAGE_PATH: string;
export function blocksOf(page: string): Block[];
export function writeFiles(blocks: Block[], dir: string): string[];
export function plantedEdit(blocks: Block[]): string;
export function failingOutput(blocks: Block[]): string;
