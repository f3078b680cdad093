// Work formulas of kernelgate.yml's benchmarks (`work: { flops: "2*M*N*K", bytes: … }`): arithmetic
// over a case's parameters, the one formula per benchmark that kernel modules give in `work()`.
// Numbers, parameter names, + - * / ** and parentheses; nothing else is evaluated.

type Token =
  { kind: 'num'; value: number } | { kind: 'name'; value: string } | { kind: 'op'; value: string };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const re =
    /\s*(?:(\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|(\*\*|[-+*/()]))/y;
  let pos = 0;
  while (pos < text.length) {
    if (/^\s*$/.test(text.slice(pos))) break;
    re.lastIndex = pos;
    const m = re.exec(text);
    if (!m) throw new Error(`unexpected ${JSON.stringify(text.slice(pos).trim()[0])}`);
    if (m[1] !== undefined) tokens.push({ kind: 'num', value: Number(m[1]) });
    else if (m[2] !== undefined) tokens.push({ kind: 'name', value: m[2] });
    else tokens.push({ kind: 'op', value: m[3] as string });
    pos = re.lastIndex;
  }
  return tokens;
}

/** A parsed formula: evaluate it with a case's parameters; `names` are the parameters it uses. */
export interface Formula {
  names: string[];
  evaluate(params: Record<string, unknown>): number;
}

/** Parses a formula; throws an Error whose message says what is wrong (callers add file and field). */
export function parseFormula(text: string): Formula {
  const tokens = tokenize(text);
  let i = 0;
  const names = new Set<string>();
  const peek = () => tokens[i];
  const take = (op: string) => {
    const t = tokens[i];
    if (t?.kind === 'op' && t.value === op) {
      i++;
      return true;
    }
    return false;
  };
  type Node = (p: Record<string, unknown>) => number;
  // expr := term (('+'|'-') term)*; term := power (('*'|'/') power)*; power := unary ('**' power)?
  const expr = (): Node => {
    let left = term();
    for (;;) {
      if (take('+')) {
        const [a, b] = [left, term()];
        left = (p) => a(p) + b(p);
      } else if (take('-')) {
        const [a, b] = [left, term()];
        left = (p) => a(p) - b(p);
      } else return left;
    }
  };
  const term = (): Node => {
    let left = power();
    for (;;) {
      if (take('*')) {
        const [a, b] = [left, power()];
        left = (p) => a(p) * b(p);
      } else if (take('/')) {
        const [a, b] = [left, power()];
        left = (p) => a(p) / b(p);
      } else return left;
    }
  };
  const power = (): Node => {
    const base = unary();
    if (take('**')) {
      const exponent = power();
      return (p) => base(p) ** exponent(p);
    }
    return base;
  };
  const unary = (): Node => {
    if (take('-')) {
      const inner = unary();
      return (p) => -inner(p);
    }
    const t = peek();
    if (t === undefined) throw new Error('ends too early');
    i++;
    if (t.kind === 'num') return () => t.value;
    if (t.kind === 'name') {
      names.add(t.value);
      return (p) => {
        const v = p[t.value];
        if (typeof v === 'number') return v;
        if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)))
          return Number(v);
        throw new Error(
          `parameter ${t.value} is ${v === undefined ? 'not set' : `not a number (${JSON.stringify(v)})`}`,
        );
      };
    }
    if (t.value === '(') {
      const inner = expr();
      if (!take(')')) throw new Error('a "(" is not closed');
      return inner;
    }
    throw new Error(`unexpected ${JSON.stringify(t.value)}`);
  };
  const root = expr();
  if (i < tokens.length) throw new Error(`unexpected ${JSON.stringify(String(tokens[i]?.value))}`);
  return { names: [...names], evaluate: (params) => root(params) };
}
