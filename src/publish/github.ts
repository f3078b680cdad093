// Creates the GitHub REST client kernelgate publishes with, and retries what GitHub asks to be
// retried: server errors, 429, and secondary rate limits (403 with retry-after or no quota left).
import { getOctokit } from '@actions/github';

export type GitHubClient = ReturnType<typeof getOctokit>;

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  /** A wait GitHub asks for beyond this is not waited out: the request fails instead. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
};

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_PUBLISH_BUDGET_MS = 120_000;

export interface ClientOptions {
  token: string;
  /** GITHUB_API_URL; GitHub Enterprise Server and the test stand-in set it. */
  apiUrl?: string;
  retry?: RetryPolicy;
  /**
   * The longest one attempt of a request may take, from its start (connecting included) to the
   * last byte of its answer: the 'request-timeout' input. Default 30 s.
   */
  requestTimeoutMs?: number;
  /** A total for every request made while it runs (publishing): the 'publish-timeout' input. */
  budget?: TimeBudget;
  sleep: (ms: number) => Promise<void>;
  nowMs: () => number;
  log: (message: string) => void;
}

/** Seconds for messages: 30000 → '30 s', 250 → '0.25 s'. */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

/**
 * The time publishing may take in all, shared by every request, retry and wait. Armed by start(),
 * its clock runs from the first request after that (judging, which comes between, does not count);
 * requests before start() (the trust check) have only their own deadline.
 */
export class TimeBudget {
  private armed = false;
  private endsAtMs: number | undefined;

  constructor(
    readonly totalMs: number,
    private readonly nowMs: () => number,
  ) {}

  start(): void {
    this.armed = true;
  }

  /** Called as each request is sent: the first one once armed starts the clock. */
  requestSent(): void {
    if (this.armed && this.endsAtMs === undefined) this.endsAtMs = this.nowMs() + this.totalMs;
  }

  /** Milliseconds left: Infinity before start(), all of it until the first request. */
  remainingMs(): number {
    if (!this.armed) return Infinity;
    if (this.endsAtMs === undefined) return this.totalMs;
    return Math.max(0, this.endsAtMs - this.nowMs());
  }

  toString(): string {
    return `the publishing budget of ${seconds(this.totalMs)} ('publish-timeout')`;
  }
}

/** A request given up on for time: its own deadline passed, or the publishing budget ran out. */
export class GitHubDeadlineError extends Error {
  override name = 'GitHubDeadlineError';

  constructor(
    message: string,
    /** True when the publishing budget ran out: nothing more is tried. */
    readonly budgetSpent: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** How a POST that creates something finds it again, when its answer is lost. */
type FindCreated = () => Promise<unknown>;
const FIND_CREATED = 'kernelgateFindCreated';

/**
 * Request options for a POST that creates something (a comment, an issue). When the POST fails in
 * a way that leaves it unknown whether GitHub created it (a 5xx, a dropped connection, no answer
 * in time), `find` looks for it before the POST is sent again: what it returns (not undefined) is
 * taken as the POST's answer. Without these options such a POST is not retried at all.
 */
export function lookBeforeRetrying(find: FindCreated): { request: Record<string, FindCreated> } {
  return { request: { [FIND_CREATED]: find } };
}

/** What an HTTP error carried, as far as the retry decision needs it. */
export interface HttpFailure {
  status: number;
  headers: Record<string, string | number | undefined>;
  message: string;
}

/**
 * Milliseconds to wait before the next attempt, or undefined when the failure is final.
 * `attempt` is the 1-based number of the attempt that just failed.
 */
export function retryDelayMs(
  failure: HttpFailure,
  attempt: number,
  policy: RetryPolicy,
  nowMs: number,
): number | undefined {
  if (attempt >= policy.maxAttempts) return undefined;
  const header = (name: string): string | undefined => {
    const value = failure.headers[name];
    return value === undefined ? undefined : String(value);
  };
  const retryAfter = header('retry-after');
  const quotaExhausted = header('x-ratelimit-remaining') === '0';
  const secondaryLimit = /secondary rate limit/i.test(failure.message);
  const backoffMs = policy.baseDelayMs * 2 ** (attempt - 1);

  let delayMs: number;
  if (failure.status >= 500) {
    delayMs = backoffMs;
  } else if (
    failure.status === 429 ||
    (failure.status === 403 && (retryAfter !== undefined || quotaExhausted || secondaryLimit))
  ) {
    if (retryAfter !== undefined && /^\d+$/.test(retryAfter)) {
      delayMs = Number(retryAfter) * 1000;
    } else if (quotaExhausted && /^\d+$/.test(header('x-ratelimit-reset') ?? '')) {
      delayMs = Math.max(0, Number(header('x-ratelimit-reset')) * 1000 - nowMs) + 1000;
    } else {
      // GitHub's guidance for a secondary limit without retry-after: wait at least a minute.
      delayMs = secondaryLimit ? Math.max(backoffMs, 60_000) : backoffMs;
    }
  } else {
    return undefined;
  }
  return delayMs <= policy.maxDelayMs ? delayMs : undefined;
}

/** True for the 403 a read-only token gets (a fork PR's GITHUB_TOKEN, or missing permissions). */
export function isIntegrationForbidden(error: unknown): boolean {
  const failure = httpFailure(error);
  return (
    failure !== undefined &&
    failure.status === 403 &&
    /Resource not accessible by integration/i.test(failure.message)
  );
}

/** The HTTP answer an error carries; undefined when there was none (a network failure, a timeout). */
export function httpFailure(error: unknown): HttpFailure | undefined {
  if (typeof error !== 'object' || error === null || !('status' in error)) return undefined;
  const status = Number((error as { status: unknown }).status);
  const response = (
    error as { response?: { headers?: Record<string, string | number | undefined> } }
  ).response;
  // Octokit reports a request that got no answer (refused, reset, aborted) as a 500 without one.
  if (!Number.isInteger(status) || status === 0 || response === undefined) return undefined;
  const message = error instanceof Error ? error.message : String(error);
  return { status, headers: response.headers ?? {}, message };
}

/** What went wrong with a request, in a clause for messages ("Could not write …: CAUSE."). */
export function describeGitHubError(error: unknown): string {
  if (error instanceof GitHubDeadlineError) return error.message;
  const failure = httpFailure(error);
  if (failure) return `GitHub answered ${failure.status}: ${failure.message}`;
  const message = error instanceof Error ? error.message : String(error);
  return `the connection to GitHub failed: ${message}`;
}

/** A request's address for messages: a route template as is, a full URL without its host. */
function shownUrl(url: string): string {
  if (!/^https?:\/\//.test(url)) return url;
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE']);

/** A request that may be sent again as it is: by its method, or a GraphQL query (not a mutation). */
function idempotent(options: { method: string; url: string; query?: unknown }): boolean {
  if (IDEMPOTENT.has(options.method)) return true;
  return options.url === '/graphql' && !/^\s*mutation\b/.test(String(options.query ?? ''));
}

/** Why an attempt failed, and what that means for trying again. */
interface AttemptFailure {
  /** A clause: "GitHub answered 500 to GET /x", "GitHub did not answer GET /x within 30 s …". */
  reason: string;
  /** What GitHub said, when it answered. */
  said?: string;
  /** Wait before the next attempt; undefined: the failure is final. */
  delayMs: number | undefined;
  /** GitHub may have carried the request out although the client saw a failure. */
  outcomeUnknown: boolean;
}

function attemptFailure(
  error: unknown,
  what: string,
  attempt: number,
  policy: RetryPolicy,
  nowMs: number,
): AttemptFailure {
  const backoffMs =
    attempt < policy.maxAttempts ? policy.baseDelayMs * 2 ** (attempt - 1) : undefined;
  if (error instanceof GitHubDeadlineError) {
    return { reason: error.message, delayMs: backoffMs, outcomeUnknown: true };
  }
  const failure = httpFailure(error);
  if (failure === undefined) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      reason: `The connection to GitHub failed during ${what}: ${message}`,
      delayMs: backoffMs,
      outcomeUnknown: true,
    };
  }
  return {
    reason: `GitHub answered ${failure.status} to ${what}`,
    said: failure.message,
    delayMs: retryDelayMs(failure, attempt, policy, nowMs),
    // A 5xx may come from a proxy after GitHub did the work; 429 and 403 mean it did nothing.
    outcomeUnknown: failure.status >= 500,
  };
}

/**
 * One attempt, given up on at its deadline: `timeoutMs`, or less when the budget ends first. The
 * race, not only the abort, ends it: Octokit reads a body it cannot finish as an empty answer.
 */
async function attemptWithin<T>(
  send: (signal: AbortSignal) => Promise<T>,
  what: string,
  timeoutMs: number,
  budget: TimeBudget | undefined,
): Promise<T> {
  budget?.requestSent();
  const leftMs = budget?.remainingMs() ?? Infinity;
  if (leftMs <= 0) {
    throw new GitHubDeadlineError(`${String(budget)} ran out before ${what} was sent`, true);
  }
  const byBudget = leftMs < timeoutMs;
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        reject(
          byBudget
            ? new GitHubDeadlineError(
                `GitHub did not answer ${what} before the end of ${String(budget)}`,
                true,
              )
            : new GitHubDeadlineError(
                `GitHub did not answer ${what} within ${seconds(timeoutMs)} ('request-timeout')`,
                false,
              ),
        );
        controller.abort();
      },
      Math.min(timeoutMs, leftMs),
    );
  });
  const pending = send(controller.signal);
  try {
    return await Promise.race([pending, expired]);
  } finally {
    clearTimeout(timer);
    // The abandoned request rejects once aborted; nobody waits for it any more.
    pending.catch(() => undefined);
  }
}

/**
 * The client kernelgate talks to GitHub with. Every attempt has a deadline (requestTimeoutMs), all
 * of them together the budget once it is started; failures GitHub asks to be retried are retried
 * (5xx, 429, secondary rate limits, no answer), except a POST whose outcome is unknown: it is sent
 * again only when lookBeforeRetrying() says what it would have created is not there.
 */
export function createGitHubClient(options: ClientOptions): GitHubClient {
  const policy = options.retry ?? DEFAULT_RETRY_POLICY;
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const { budget } = options;
  const client = getOctokit(options.token, options.apiUrl ? { baseUrl: options.apiUrl } : {});
  client.hook.wrap('request', async (request, requestOptions) => {
    const what = `${requestOptions.method} ${shownUrl(String(requestOptions.url))}`;
    const findCreated = requestOptions.request?.[FIND_CREATED] as FindCreated | undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        return await attemptWithin(
          async (signal) => {
            // The hooks inside this one were bound to this very object and ignore what is passed
            // to request(): the signal must go onto it (a new `request` object, never the shared
            // defaults, which would hand an aborted signal to later requests).
            requestOptions.request = { ...requestOptions.request, signal };
            return request(requestOptions);
          },
          what,
          timeoutMs,
          budget,
        );
      } catch (error) {
        if (error instanceof GitHubDeadlineError && error.budgetSpent) throw error;
        const failure = attemptFailure(error, what, attempt, policy, options.nowMs());
        let checked = '';
        if (failure.outcomeUnknown && !idempotent(requestOptions)) {
          // Sending it again might do it twice (two comments): only after looking.
          if (findCreated === undefined) throw error;
          const found = await findCreated();
          if (found !== undefined) {
            options.log(
              `${failure.reason}, but what it creates is there (found by listing again): not sending it again.`,
            );
            return { status: 201, url: '', headers: {}, data: found } as Awaited<
              ReturnType<typeof request>
            >;
          }
          checked = ' (listed again: it created nothing)';
        }
        const { delayMs } = failure;
        if (delayMs === undefined) throw error;
        if (budget !== undefined && delayMs >= budget.remainingMs()) {
          const said = failure.said ? ` (${failure.said.replace(/\.$/, '')})` : '';
          throw new GitHubDeadlineError(
            `${failure.reason}${said}; the next attempt, in ${delayMs} ms, would start after the end of ${String(budget)}`,
            true,
            { cause: error },
          );
        }
        options.log(
          `${failure.reason}${checked}; retrying in ${delayMs} ms (attempt ${attempt + 1} of ${policy.maxAttempts}).`,
        );
        await options.sleep(delayMs);
      }
    }
  });
  return client;
}
