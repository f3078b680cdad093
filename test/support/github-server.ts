// A stand-in for GitHub's REST API on 127.0.0.1: keeps issues, comments and labels in memory,
// records every request, and checks each one against GitHub's published OpenAPI description so
// a request the real API would reject fails the test here too.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: JsonObject;
}

interface OpenApiOperation {
  operationId: string;
  parameters?: (OpenApiParameter | { $ref: string })[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonObject }> };
}

interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { parameters: Record<string, OpenApiParameter>; schemas: Record<string, Json> };
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  operationId: string | undefined;
  authorization: string | undefined;
  /** The status sent; 0 when none was (a hang); for a lost answer, the one that would have been. */
  status: number;
  /** The scripted fault this request met, if any. */
  fault?: Fault['kind'];
}

export interface StoredUser {
  login: string;
  id: number;
  type: 'Bot' | 'User';
}

export interface StoredComment {
  id: number;
  issueNumber: number;
  body: string;
  user: StoredUser;
  createdAt: string;
  updatedAt: string;
}

export interface StoredIssue {
  number: number;
  title: string;
  body: string;
  state: 'open' | 'closed';
  stateReason: string | null;
  labels: string[];
  isPullRequest: boolean;
  headSha?: string;
  headLabel?: string;
  createdAt: string;
  /** Who opened it; the stand-in's bot when not said. */
  user?: StoredUser;
  /** A pull request's merge commit, once merged: answered for the commits it brought. */
  mergedAt?: string;
  /** The commits a merged pull request brought (repos/list-pull-requests-associated-with-commit). */
  commits?: string[];
}

/** An issue's timeline event the stand-in keeps: a label applied by `actor`. */
export interface StoredLabelEvent {
  id: number;
  issueNumber: number;
  label: string;
  actor: StoredUser;
  createdAt: string;
}

/** A pull request review: who submitted it, on which commit (GitHub keeps it), and its body. */
export interface StoredReview {
  id: number;
  prNumber: number;
  user: StoredUser;
  state: 'APPROVED' | 'COMMENTED' | 'CHANGES_REQUESTED' | 'DISMISSED';
  commitId: string;
  body: string;
  submittedAt: string;
}

/**
 * A scripted failure: the next `times` requests that match answer with this instead. Beside the
 * error answers: `hang` never answers (the connection stays open), `stall` sends the status and
 * headers and part of a body, then nothing, and `lost-answer` does what was asked (a comment is
 * created) and then drops the connection without answering.
 */
export interface Fault {
  kind:
    | 'server-error'
    | 'integration-forbidden'
    | 'rate-limited'
    | 'secondary-rate-limit'
    | 'hang'
    | 'stall'
    | 'lost-answer';
  times: number;
  method?: string;
  operationId?: string;
  retryAfterSeconds?: number;
}

export const BOT_USER: StoredUser = { login: 'github-actions[bot]', id: 41898282, type: 'Bot' };

export const FAULT_KINDS: readonly Fault['kind'][] = [
  'server-error',
  'integration-forbidden',
  'rate-limited',
  'secondary-rate-limit',
  'hang',
  'stall',
  'lost-answer',
];

const require = createRequire(import.meta.url);
const specPath = require.resolve('@octokit/openapi/generated/api.github.com.json');

let cachedSpec: OpenApiDocument | undefined;
function loadSpec(): OpenApiDocument {
  cachedSpec ??= JSON.parse(readFileSync(specPath, 'utf8')) as OpenApiDocument;
  return cachedSpec;
}

interface CompiledRoute {
  template: string;
  method: string;
  operation: OpenApiOperation;
  pattern: RegExp;
  paramNames: string[];
  literalSegments: number;
}

const SPEC_ID = 'https://api.github.com/openapi.json';

/** Compiles path templates and lazily the schemas of the operations the tests actually hit. */
class SpecValidator {
  private readonly routes: CompiledRoute[] = [];
  private readonly ajv: Ajv;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly spec: OpenApiDocument) {
    this.ajv = new Ajv({
      strict: false,
      allErrors: true,
      validateSchema: false,
      coerceTypes: false,
    });
    addFormats(this.ajv);
    this.ajv.addSchema({
      $id: SPEC_ID,
      components: { schemas: toJsonSchema(spec.components.schemas as Json) },
    } as JsonObject);
    for (const [template, methods] of Object.entries(spec.paths)) {
      const paramNames: string[] = [];
      const segments = template.split('/').filter((s) => s !== '');
      const source = segments
        .map((segment) => {
          const m = /^\{(.+)\}$/.exec(segment);
          if (m?.[1] !== undefined) {
            paramNames.push(m[1]);
            return '/([^/]+)';
          }
          return '/' + segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        })
        .join('');
      const literalSegments = segments.filter((s) => !s.startsWith('{')).length;
      for (const [method, operation] of Object.entries(methods)) {
        if (typeof operation !== 'object' || operation === null || !('operationId' in operation))
          continue;
        this.routes.push({
          template,
          method: method.toUpperCase(),
          operation,
          pattern: new RegExp(`^${source}$`),
          paramNames,
          literalSegments,
        });
      }
    }
  }

  /** Returns the operation and decoded path parameters, or the reason the request matches none. */
  match(
    method: string,
    path: string,
  ): { route: CompiledRoute; params: Record<string, string> } | string {
    let best: { route: CompiledRoute; params: Record<string, string> } | undefined;
    let pathExists = false;
    const paramProblems: string[] = [];
    for (const route of this.routes) {
      const m = route.pattern.exec(path);
      if (!m) continue;
      pathExists = true;
      if (route.method !== method) continue;
      const params: Record<string, string> = {};
      route.paramNames.forEach((name, i) => {
        params[name] = decodeURIComponent(m[i + 1] ?? '');
      });
      const problems = this.paramErrors(route, params, 'path');
      if (problems.length > 0) {
        paramProblems.push(`${route.operation.operationId}: ${problems.join('; ')}`);
        continue;
      }
      if (!best || route.literalSegments > best.route.literalSegments) best = { route, params };
    }
    if (best) return best;
    if (paramProblems.length > 0) return `${method} ${path}: ${paramProblems.join(' | ')}`;
    return pathExists
      ? `${method} ${path}: GitHub's REST API has no ${method} operation on this path`
      : `${method} ${path}: no operation in GitHub's REST API matches this path`;
  }

  private parameters(operation: OpenApiOperation): OpenApiParameter[] {
    return (operation.parameters ?? []).map((p) => {
      if ('$ref' in p) {
        const name = p.$ref.replace('#/components/parameters/', '');
        const resolved = this.spec.components.parameters[name];
        if (!resolved) throw new Error(`OpenAPI parameter reference ${p.$ref} does not resolve`);
        return resolved;
      }
      return p;
    });
  }

  private validator(key: string, schema: JsonObject): ValidateFunction {
    let fn = this.compiled.get(key);
    if (!fn) {
      fn = this.ajv.compile(toJsonSchema(schema) as JsonObject);
      this.compiled.set(key, fn);
    }
    return fn;
  }

  paramErrors(
    route: CompiledRoute,
    values: Record<string, string>,
    where: 'path' | 'query',
  ): string[] {
    const declared = this.parameters(route.operation).filter((p) => p.in === where);
    const errors: string[] = [];
    for (const [name, raw] of Object.entries(values)) {
      const param = declared.find((p) => p.name === name);
      if (!param) {
        errors.push(
          `${where} parameter '${name}' is not declared by ${route.operation.operationId}`,
        );
        continue;
      }
      if (!param.schema) continue;
      const value = coerceParameter(raw, param.schema);
      const validate = this.validator(
        `${route.operation.operationId}:${where}:${name}`,
        param.schema,
      );
      if (!validate(value)) {
        errors.push(
          `${where} parameter '${name}'='${raw}' is invalid: ${this.ajv.errorsText(validate.errors)}`,
        );
      }
    }
    for (const param of declared) {
      if (param.required && !(param.name in values))
        errors.push(`required ${where} parameter '${param.name}' is missing`);
    }
    return errors;
  }

  bodyErrors(
    route: CompiledRoute,
    contentType: string | undefined,
    raw: string,
  ): { body: unknown; errors: string[] } {
    const requestBody = route.operation.requestBody;
    if (!requestBody) {
      return raw.trim() === ''
        ? { body: undefined, errors: [] }
        : {
            body: raw,
            errors: [
              `${route.operation.operationId} takes no request body, got ${raw.length} bytes`,
            ],
          };
    }
    if (raw.trim() === '') {
      return {
        body: undefined,
        errors: requestBody.required ? [`${route.operation.operationId} requires a body`] : [],
      };
    }
    if (!contentType?.startsWith('application/json')) {
      return {
        body: raw,
        errors: [`body must be application/json, content-type was '${contentType ?? ''}'`],
      };
    }
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch (error) {
      return { body: raw, errors: [`body is not JSON: ${(error as Error).message}`] };
    }
    const schema = requestBody.content?.['application/json']?.schema;
    if (!schema) return { body, errors: [] };
    const validate = this.validator(`${route.operation.operationId}:body`, schema);
    if (validate(body)) return { body, errors: [] };
    return {
      body,
      errors: [
        `body does not match ${route.operation.operationId}: ${this.ajv.errorsText(validate.errors)}`,
      ],
    };
  }
}

/**
 * OpenAPI 3.0 schema → JSON Schema for ajv: local references point into the registered
 * components, and `nullable: true` becomes "this schema, or null" (ajv allows the keyword only
 * beside `type`, and GitHub's description also puts it beside `oneOf`).
 */
function toJsonSchema(node: Json): Json {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'nullable' && typeof value === 'boolean') continue;
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#/'))
      out[key] = SPEC_ID + value;
    else if (
      key === 'properties' &&
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value)
    ) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([name, schema]) => [name, toJsonSchema(schema)]),
      );
    } else out[key] = toJsonSchema(value);
  }
  return node['nullable'] === true ? { anyOf: [out, { type: 'null' }] } : out;
}

function coerceParameter(raw: string, schema: JsonObject): Json {
  const type = schema['type'];
  if (type === 'integer' || type === 'number')
    return /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  if (type === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
  return raw;
}

const FORBIDDEN_MESSAGE = 'Resource not accessible by integration';

export class GitHubServer {
  readonly requests: RecordedRequest[] = [];
  readonly violations: string[] = [];
  readonly comments: StoredComment[] = [];
  readonly issues: StoredIssue[] = [];
  readonly reviews: StoredReview[] = [];
  readonly labelEvents: StoredLabelEvent[] = [];
  readonly faults: Fault[] = [];
  /** Tokens that may only read, as a fork PR's GITHUB_TOKEN. */
  readonly readOnlyTokens = new Set<string>();
  /**
   * Whom a token acts as; any other token is GITHUB_TOKEN's bot. GET /user answers a user's token,
   * and refuses a bot's with 403, as GitHub refuses an app installation token.
   */
  readonly tokenUsers = new Map<string, StoredUser>();
  /** Repository permission by login, answered by the collaborator-permission route. */
  readonly permissions = new Map<string, 'admin' | 'write' | 'read' | 'none'>();
  pageSizeLimit = 100;
  /** Hanging and stalled requests whose connection the client has not closed yet. */
  readonly unanswered = new Set<RecordedRequest>();
  /** Runs after a request is validated and before it is answered: a test's parallel job. */
  beforeAnswer: ((request: RecordedRequest) => void) | undefined;

  private server: Server | undefined;
  private validator: SpecValidator | undefined;
  private nextId = 1000;
  private clockMs = Date.UTC(2026, 10, 21, 12, 0, 0);
  private baseUrl = '';

  get url(): string {
    if (!this.baseUrl) throw new Error('GitHubServer: start() it first');
    return this.baseUrl;
  }

  async start(): Promise<string> {
    this.validator ??= new SpecValidator(loadSpec());
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        this.violations.push(`stand-in crashed on ${req.method} ${req.url}: ${String(error)}`);
        send(res, 500, { message: String(error) });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this.baseUrl;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  /** Throws, listing every request the real API would have rejected. */
  assertValid(): void {
    if (this.violations.length > 0) {
      throw new Error(
        `requests GitHub's REST description rejects:\n- ${this.violations.join('\n- ')}`,
      );
    }
  }

  addPullRequest(pr: {
    number: number;
    headSha?: string;
    headLabel?: string;
    labels?: string[];
  }): StoredIssue {
    const issue: StoredIssue = {
      number: pr.number,
      title: `PR ${pr.number}`,
      body: '',
      state: 'open',
      stateReason: null,
      labels: [...(pr.labels ?? [])],
      isPullRequest: true,
      createdAt: this.tick(),
      ...(pr.headSha !== undefined ? { headSha: pr.headSha } : {}),
      ...(pr.headLabel !== undefined ? { headLabel: pr.headLabel } : {}),
    };
    this.issues.push(issue);
    return issue;
  }

  addComment(issueNumber: number, body: string, user: StoredUser = BOT_USER): StoredComment {
    const now = this.tick();
    const comment: StoredComment = {
      id: this.nextId++,
      issueNumber,
      body,
      user,
      createdAt: now,
      updatedAt: now,
    };
    this.comments.push(comment);
    return comment;
  }

  /** `login` applies `label` to issue or pull request `issueNumber` (kept as its labeled event). */
  applyLabel(issueNumber: number, label: string, login: string): StoredLabelEvent {
    const issue = this.issues.find((i) => i.number === issueNumber);
    if (issue && !issue.labels.includes(label)) issue.labels.push(label);
    const event: StoredLabelEvent = {
      id: this.nextId++,
      issueNumber,
      label,
      actor: { login, id: 8000 + this.nextId, type: 'User' },
      createdAt: this.tick(),
    };
    this.labelEvents.push(event);
    return event;
  }

  /** A review of a pull request by `login` (a user) on commit `commitId`. */
  addReview(
    prNumber: number,
    review: { login: string; state: StoredReview['state']; commitId: string; body?: string },
  ): StoredReview {
    const stored: StoredReview = {
      id: this.nextId++,
      prNumber,
      user: { login: review.login, id: 7000 + this.nextId, type: 'User' },
      state: review.state,
      commitId: review.commitId,
      body: review.body ?? '',
      submittedAt: this.tick(),
    };
    this.reviews.push(stored);
    return stored;
  }

  commentsOn(issueNumber: number): StoredComment[] {
    return this.comments.filter((c) => c.issueNumber === issueNumber);
  }

  /** Requests by operation id, e.g. 'issues/update-comment', in order. */
  calls(operationId: string): RecordedRequest[] {
    return this.requests.filter((r) => r.operationId === operationId);
  }

  private tick(): string {
    this.clockMs += 1000;
    return new Date(this.clockMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', this.baseUrl);
    const method = (req.method ?? 'GET').toUpperCase();
    const query = Object.fromEntries(url.searchParams.entries());
    const authorization = req.headers.authorization;
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      query,
      body: undefined,
      operationId: undefined,
      authorization,
      status: 0,
    };
    this.requests.push(record);
    const reply = (
      status: number,
      payload: unknown,
      headers: Record<string, string> = {},
    ): void => {
      record.status = status;
      send(res, status, payload, headers);
    };

    if (method === 'POST' && url.pathname === '/graphql') {
      this.answerGraphql(record, raw, reply);
      return;
    }
    const validator = this.validator;
    if (!validator) throw new Error('validator missing');
    const matched = validator.match(method, url.pathname);
    if (typeof matched === 'string') {
      this.violations.push(matched);
      reply(404, { message: 'Not Found', detail: matched });
      return;
    }
    const { route, params } = matched;
    record.operationId = route.operation.operationId;
    const { body, errors: bodyErrors } = validator.bodyErrors(
      route,
      req.headers['content-type'],
      raw,
    );
    record.body = body;
    const errors = [...validator.paramErrors(route, query, 'query'), ...bodyErrors];
    if (!authorization || !/^(token|Bearer) \S+$/.test(authorization)) {
      errors.push(`Authorization header missing or malformed: '${authorization ?? ''}'`);
    }
    if (errors.length > 0) {
      const message = `${method} ${url.pathname} (${route.operation.operationId}): ${errors.join('; ')}`;
      this.violations.push(message);
      reply(422, { message: 'Validation Failed', errors });
      return;
    }

    this.beforeAnswer?.(record);
    const fault = this.takeFault(method, route.operation.operationId);
    if (fault) record.fault = fault.kind;
    if (fault?.kind === 'hang' || fault?.kind === 'stall') {
      this.unanswered.add(record);
      res.on('close', () => this.unanswered.delete(record));
    }
    if (fault?.kind === 'hang') return;
    if (fault?.kind === 'stall') {
      record.status = 200;
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.write('[{"id": ');
      return;
    }
    if (fault && fault.kind !== 'lost-answer') {
      const [status, headers, payload] = faultResponse({ ...fault, kind: fault.kind });
      reply(status, payload, headers);
      return;
    }
    const token = authorization?.split(' ')[1] ?? '';
    const user = this.tokenUsers.get(token) ?? BOT_USER;
    if (method !== 'GET' && this.readOnlyTokens.has(token)) {
      reply(403, {
        message: FORBIDDEN_MESSAGE,
        documentation_url: 'https://docs.github.com/rest',
        status: '403',
      });
      return;
    }

    const handler = this.handlers[route.operation.operationId];
    if (!handler) {
      const message = `${route.operation.operationId} is valid but the stand-in does not implement it`;
      this.violations.push(message);
      reply(501, { message });
      return;
    }
    const [status, payload, headers] = handler(params, query, body as JsonObject, user);
    if (fault?.kind === 'lost-answer') {
      record.status = status;
      res.socket?.destroy();
      return;
    }
    reply(status, payload, headers);
  }

  /**
   * GraphQL (not in the REST description): only the query kernelgate sends, `viewer { login }`,
   * which GitHub answers for every kind of token, an app installation token's with its bot
   * ('github-actions[bot]' for GITHUB_TOKEN). Error faults with operationId 'graphql' apply; any
   * other query is a violation.
   */
  private answerGraphql(
    record: RecordedRequest,
    raw: string,
    reply: (status: number, payload: unknown, headers?: Record<string, string>) => void,
  ): void {
    record.operationId = 'graphql';
    let query = '';
    try {
      query = String((JSON.parse(raw) as { query?: unknown }).query ?? '');
    } catch {
      // an unreadable body: the query check below says so
    }
    record.body = { query };
    const auth = record.authorization;
    if (!/^\s*(query\s*)?\{\s*viewer\s*\{\s*login\s*\}\s*\}\s*$/.test(query) || !auth) {
      this.violations.push(`POST /graphql: not the viewer query, or no authorization: '${raw}'`);
      reply(200, { errors: [{ message: 'the stand-in answers only { viewer { login } }' }] });
      return;
    }
    const fault = this.takeFault('POST', 'graphql');
    if (fault) record.fault = fault.kind;
    if (fault?.kind === 'hang' || fault?.kind === 'stall' || fault?.kind === 'lost-answer') {
      throw new Error(`the stand-in's GraphQL answers no '${fault.kind}' fault`);
    }
    if (fault) {
      const [status, headers, payload] = faultResponse({ ...fault, kind: fault.kind });
      reply(status, payload, headers);
      return;
    }
    const user = this.tokenUsers.get(auth.split(' ')[1] ?? '') ?? BOT_USER;
    reply(200, { data: { viewer: { login: user.login } } });
  }

  private takeFault(method: string, operationId: string): Fault | undefined {
    const fault = this.faults.find(
      (f) =>
        f.times > 0 &&
        (f.method === undefined || f.method === method) &&
        (f.operationId === undefined || f.operationId === operationId),
    );
    if (fault) fault.times -= 1;
    return fault;
  }

  private paginate<T>(
    items: T[],
    query: Record<string, string>,
    path: string,
  ): [T[], Record<string, string>] {
    const perPage = Math.min(Number(query['per_page'] ?? 30), this.pageSizeLimit);
    const page = Number(query['page'] ?? 1);
    const pageItems = items.slice((page - 1) * perPage, page * perPage);
    const lastPage = Math.max(1, Math.ceil(items.length / perPage));
    const link = (p: number, rel: string): string => {
      const next = new URL(path, this.baseUrl);
      for (const [k, v] of Object.entries(query)) next.searchParams.set(k, v);
      next.searchParams.set('page', String(p));
      return `<${next.toString()}>; rel="${rel}"`;
    };
    const links: string[] = [];
    if (page < lastPage) links.push(link(page + 1, 'next'), link(lastPage, 'last'));
    if (page > 1) links.push(link(1, 'first'), link(page - 1, 'prev'));
    return [pageItems, links.length > 0 ? { link: links.join(', ') } : {}];
  }

  private commentJson(c: StoredComment, owner: string, repo: string): JsonObject {
    return {
      id: c.id,
      node_id: `IC_${c.id}`,
      url: `${this.baseUrl}/repos/${owner}/${repo}/issues/comments/${c.id}`,
      html_url: `https://github.com/${owner}/${repo}/pull/${c.issueNumber}#issuecomment-${c.id}`,
      issue_url: `${this.baseUrl}/repos/${owner}/${repo}/issues/${c.issueNumber}`,
      body: c.body,
      user: { login: c.user.login, id: c.user.id, type: c.user.type },
      created_at: c.createdAt,
      updated_at: c.updatedAt,
      author_association: c.user.type === 'Bot' ? 'NONE' : 'MEMBER',
    };
  }

  private issueJson(i: StoredIssue, owner: string, repo: string): JsonObject {
    const kind = i.isPullRequest ? 'pull' : 'issues';
    return {
      id: i.number * 7919,
      node_id: `I_${i.number}`,
      number: i.number,
      title: i.title,
      body: i.body,
      state: i.state,
      state_reason: i.stateReason,
      labels: i.labels.map((name, k) => ({ id: k + 1, name, color: 'ededed', default: false })),
      url: `${this.baseUrl}/repos/${owner}/${repo}/issues/${i.number}`,
      html_url: `https://github.com/${owner}/${repo}/${kind}/${i.number}`,
      user: { ...(i.user ?? BOT_USER) },
      created_at: i.createdAt,
      updated_at: i.createdAt,
      ...(i.isPullRequest
        ? { pull_request: { url: `${this.baseUrl}/repos/${owner}/${repo}/pulls/${i.number}` } }
        : {}),
    };
  }

  private issue(number: string | undefined): StoredIssue | undefined {
    return this.issues.find((i) => i.number === Number(number));
  }

  private readonly handlers: Record<
    string,
    (
      params: Record<string, string>,
      query: Record<string, string>,
      body: JsonObject,
      user: StoredUser,
    ) => [number, unknown, Record<string, string>?]
  > = {
    'users/get-authenticated': (_p, _q, _body, user) => {
      if (user.type === 'Bot') {
        return [
          403,
          { message: FORBIDDEN_MESSAGE, documentation_url: 'https://docs.github.com/rest' },
        ];
      }
      return [200, { login: user.login, id: user.id, type: user.type }];
    },
    'issues/list-comments': (p, q) => {
      if (!this.issue(p['issue_number'])) return [404, { message: 'Not Found' }];
      const all = this.commentsOn(Number(p['issue_number'])).map((c) =>
        this.commentJson(c, p['owner']!, p['repo']!),
      );
      const path = `/repos/${p['owner']}/${p['repo']}/issues/${p['issue_number']}/comments`;
      const [items, headers] = this.paginate(all, q, path);
      return [200, items, headers];
    },
    'issues/create-comment': (p, _q, body, user) => {
      if (!this.issue(p['issue_number'])) return [404, { message: 'Not Found' }];
      const comment = this.addComment(Number(p['issue_number']), String(body['body']), user);
      return [201, this.commentJson(comment, p['owner']!, p['repo']!)];
    },
    'issues/update-comment': (p, _q, body) => {
      const comment = this.comments.find((c) => c.id === Number(p['comment_id']));
      if (!comment) return [404, { message: 'Not Found' }];
      comment.body = String(body['body']);
      comment.updatedAt = this.tick();
      return [200, this.commentJson(comment, p['owner']!, p['repo']!)];
    },
    'issues/delete-comment': (p) => {
      const index = this.comments.findIndex((c) => c.id === Number(p['comment_id']));
      if (index < 0) return [404, { message: 'Not Found' }];
      this.comments.splice(index, 1);
      return [204, undefined];
    },
    'issues/list-for-repo': (p, q) => {
      const state = q['state'] ?? 'open';
      const wanted = (q['labels'] ?? '').split(',').filter((l) => l !== '');
      const selected = this.issues
        .filter((i) => state === 'all' || i.state === state)
        .filter((i) => wanted.every((l) => i.labels.includes(l)))
        .sort(
          (a, b) => (q['direction'] === 'asc' ? 1 : -1) * a.createdAt.localeCompare(b.createdAt),
        )
        .map((i) => this.issueJson(i, p['owner']!, p['repo']!));
      const [items, headers] = this.paginate(
        selected,
        q,
        `/repos/${p['owner']}/${p['repo']}/issues`,
      );
      return [200, items, headers];
    },
    'issues/create': (p, _q, body, user) => {
      const labels = ((body['labels'] as Json[] | undefined) ?? []).map((l) =>
        typeof l === 'string' ? l : String((l as JsonObject)['name']),
      );
      const issue: StoredIssue = {
        number: Math.max(0, ...this.issues.map((i) => i.number)) + 1,
        title: String(body['title']),
        body: String(body['body'] ?? ''),
        state: 'open',
        stateReason: null,
        labels,
        isPullRequest: false,
        createdAt: this.tick(),
        user,
      };
      this.issues.push(issue);
      return [201, this.issueJson(issue, p['owner']!, p['repo']!)];
    },
    'issues/update': (p, _q, body) => {
      const issue = this.issue(p['issue_number']);
      if (!issue) return [404, { message: 'Not Found' }];
      if (typeof body['body'] === 'string') issue.body = body['body'];
      if (typeof body['title'] === 'string') issue.title = body['title'];
      if (body['state'] === 'open' || body['state'] === 'closed') issue.state = body['state'];
      if (typeof body['state_reason'] === 'string') issue.stateReason = body['state_reason'];
      return [200, this.issueJson(issue, p['owner']!, p['repo']!)];
    },
    'issues/remove-label': (p) => {
      const issue = this.issue(p['issue_number']);
      if (!issue || !issue.labels.includes(p['name']!))
        return [404, { message: 'Label does not exist' }];
      issue.labels = issue.labels.filter((l) => l !== p['name']);
      return [
        200,
        issue.labels.map((name, k) => ({ id: k + 1, name, color: 'ededed', default: false })),
      ];
    },
    'repos/get-collaborator-permission-level': (p) => {
      const permission = this.permissions.get(p['username']!) ?? 'none';
      return [
        200,
        { permission, role_name: permission, user: { login: p['username']!, id: 1, type: 'User' } },
      ];
    },
    'pulls/list-reviews': (p, q) => {
      const pr = this.issue(p['pull_number']);
      if (!pr?.isPullRequest) return [404, { message: 'Not Found' }];
      const { owner, repo } = { owner: p['owner']!, repo: p['repo']! };
      const all = this.reviews
        .filter((r) => r.prNumber === pr.number)
        .map((r) => ({
          id: r.id,
          node_id: `PRR_${r.id}`,
          user: { login: r.user.login, id: r.user.id, type: r.user.type },
          body: r.body,
          state: r.state,
          html_url: `https://github.com/${owner}/${repo}/pull/${pr.number}#pullrequestreview-${r.id}`,
          pull_request_url: `${this.baseUrl}/repos/${owner}/${repo}/pulls/${pr.number}`,
          commit_id: r.commitId,
          submitted_at: r.submittedAt,
          author_association: 'MEMBER',
        }));
      const path = `/repos/${owner}/${repo}/pulls/${pr.number}/reviews`;
      const [items, headers] = this.paginate(all, q, path);
      return [200, items, headers];
    },
    'issues/list-events': (p, q) => {
      if (!this.issue(p['issue_number'])) return [404, { message: 'Not Found' }];
      const { owner, repo } = { owner: p['owner']!, repo: p['repo']! };
      const all = this.labelEvents
        .filter((e) => e.issueNumber === Number(p['issue_number']))
        .map((e) => ({
          id: e.id,
          node_id: `LE_${e.id}`,
          url: `${this.baseUrl}/repos/${owner}/${repo}/issues/events/${e.id}`,
          actor: { login: e.actor.login, id: e.actor.id, type: e.actor.type },
          event: 'labeled',
          commit_id: null,
          commit_url: null,
          created_at: e.createdAt,
          label: { name: e.label, color: 'ededed' },
        }));
      const path = `/repos/${owner}/${repo}/issues/${p['issue_number']}/events`;
      const [items, headers] = this.paginate(all, q, path);
      return [200, items, headers];
    },
    'repos/list-pull-requests-associated-with-commit': (p) => {
      const pulls = this.issues
        .filter((i) => i.isPullRequest && (i.commits ?? []).includes(p['commit_sha']!))
        .map((i) => ({
          ...this.issueJson(i, p['owner']!, p['repo']!),
          merged_at: i.mergedAt ?? null,
          head: { sha: i.headSha ?? '', label: i.headLabel ?? '', ref: '' },
        }));
      return [200, pulls];
    },
    'pulls/list': (p, q) => {
      const selected = this.issues
        .filter((i) => i.isPullRequest && (q['state'] ?? 'open') === i.state)
        .filter((i) => q['head'] === undefined || i.headLabel === q['head'])
        .map((i) => ({
          ...this.issueJson(i, p['owner']!, p['repo']!),
          head: {
            sha: i.headSha ?? '',
            label: i.headLabel ?? '',
            ref: (i.headLabel ?? ':').split(':')[1] ?? '',
          },
        }));
      const [items, headers] = this.paginate(
        selected,
        q,
        `/repos/${p['owner']}/${p['repo']}/pulls`,
      );
      return [200, items, headers];
    },
  };
}

function faultResponse(
  fault: Fault & {
    kind: 'server-error' | 'integration-forbidden' | 'rate-limited' | 'secondary-rate-limit';
  },
): [number, Record<string, string>, unknown] {
  switch (fault.kind) {
    case 'server-error':
      return [500, {}, { message: 'Server Error' }];
    case 'integration-forbidden':
      return [
        403,
        {},
        {
          message: FORBIDDEN_MESSAGE,
          documentation_url: 'https://docs.github.com/rest',
          status: '403',
        },
      ];
    case 'rate-limited':
      return [
        429,
        { 'retry-after': String(fault.retryAfterSeconds ?? 1) },
        { message: 'API rate limit exceeded' },
      ];
    case 'secondary-rate-limit':
      return [
        403,
        { 'retry-after': String(fault.retryAfterSeconds ?? 1) },
        {
          message:
            'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
        },
      ];
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(
  res: ServerResponse,
  status: number,
  payload: unknown,
  headers: Record<string, string> = {},
): void {
  const text = payload === undefined ? '' : JSON.stringify(payload);
  res.writeHead(status, {
    ...(text ? { 'content-type': 'application/json; charset=utf-8' } : {}),
    'x-ratelimit-limit': '5000',
    'x-ratelimit-remaining': '4999',
    ...headers,
  });
  res.end(text);
}
