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

export interface ClientOptions {
  token: string;
  /** GITHUB_API_URL; GitHub Enterprise Server and the test stand-in set it. */
  apiUrl?: string;
  retry?: RetryPolicy;
  sleep: (ms: number) => Promise<void>;
  nowMs: () => number;
  log: (message: string) => void;
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

export function httpFailure(error: unknown): HttpFailure | undefined {
  if (typeof error !== 'object' || error === null || !('status' in error)) return undefined;
  const status = Number((error as { status: unknown }).status);
  if (!Number.isInteger(status) || status === 0) return undefined;
  const response = (
    error as { response?: { headers?: Record<string, string | number | undefined> } }
  ).response;
  const message = error instanceof Error ? error.message : String(error);
  return { status, headers: response?.headers ?? {}, message };
}

export function createGitHubClient(options: ClientOptions): GitHubClient {
  const policy = options.retry ?? DEFAULT_RETRY_POLICY;
  const client = getOctokit(options.token, options.apiUrl ? { baseUrl: options.apiUrl } : {});
  client.hook.wrap('request', async (request, requestOptions) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await request(requestOptions);
      } catch (error) {
        const failure = httpFailure(error);
        const delayMs = failure && retryDelayMs(failure, attempt, policy, options.nowMs());
        if (failure === undefined || delayMs === undefined) throw error;
        options.log(
          `GitHub answered ${failure.status} to ${requestOptions.method} ${String(requestOptions.url)}; ` +
            `retrying in ${delayMs} ms (attempt ${attempt + 1} of ${policy.maxAttempts}).`,
        );
        await options.sleep(delayMs);
      }
    }
  });
  return client;
}
