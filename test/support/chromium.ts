// Headless Chromium (Debian's `chromium`) for the tests that look at a page as a reader does:
// the dashboard, and the comment and job summary rendered as GitHub renders them. Driven over
// the DevTools protocol through a pipe (--remote-debugging-pipe: JSON messages ended by a NUL on
// file descriptors 3 and 4), so a test can measure the laid-out page, shoot it and drag on it
// with real mouse events, with no package beyond Node. Nothing outside the page can load
// (--proxy-server to a closed port). CI installs the browser and sets
// KERNELGATE_REQUIRE_BROWSER=1 (scripts/test.sh): there a missing browser fails the tests;
// elsewhere they are skipped, and their name says why.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { it } from 'vitest';

/** The browser's command, or undefined where none is installed. */
export function findChromium(): string | undefined {
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'pipe' });
      return name;
    } catch {
      // not this one
    }
  }
  return undefined;
}

export const BROWSER = findChromium();
const REQUIRED = process.env['KERNELGATE_REQUIRE_BROWSER'] === '1' || Boolean(process.env['CI']);
export const NO_BROWSER_REASON =
  'skipped: no chromium here (scripts/test.sh installs Debian\'s "chromium")';
/** `it` for the browser's tests: they run where there is a browser or CI requires one. */
export const inBrowser = BROWSER || REQUIRED ? it : it.skip;

/** The flags every run of the browser here takes. */
export const HEADLESS_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--no-first-run',
  '--hide-scrollbars',
  '--proxy-server=127.0.0.1:9', // nothing outside the file can load
];

type Json = Record<string, unknown>;
interface Reply {
  id?: number;
  method?: string;
  params?: Json;
  result?: Json;
  error?: { message: string };
  sessionId?: string;
}

/** One browser process and its protocol pipe. */
export class Browser {
  private next = 1;
  private pending = new Map<number, { done: (r: Json) => void; fail: (e: Error) => void }>();
  private listeners: ((m: Reply) => void)[] = [];
  private buffer = '';

  private constructor(private readonly child: ChildProcess) {
    const out = child.stdio[4] as Readable;
    out.setEncoding('utf8');
    out.on('data', (chunk: string) => {
      this.buffer += chunk;
      let end;
      while ((end = this.buffer.indexOf('\0')) >= 0) {
        const message = JSON.parse(this.buffer.slice(0, end)) as Reply;
        this.buffer = this.buffer.slice(end + 1);
        this.dispatch(message);
      }
    });
  }

  static launch(): Browser {
    const child = spawn(
      BROWSER ?? 'chromium',
      [...HEADLESS_FLAGS, '--remote-debugging-pipe', 'about:blank'],
      { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] },
    );
    const browser = new Browser(child);
    child.on('error', (e) =>
      browser.failAll(`cannot start ${BROWSER ?? 'chromium'}: ${e.message}`),
    );
    child.on('exit', (code) => browser.failAll(`the browser exited (status ${code})`));
    return browser;
  }

  private failAll(why: string): void {
    for (const waiter of this.pending.values()) waiter.fail(new Error(why));
    this.pending.clear();
  }

  private dispatch(message: Reply): void {
    if (message.id !== undefined) {
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) waiter?.fail(new Error(message.error.message));
      else waiter?.done(message.result ?? {});
      return;
    }
    for (const listen of this.listeners) listen(message);
  }

  /** Sends one protocol command (to a page's session when given) and waits for its result. */
  send(method: string, params: Json = {}, sessionId?: string): Promise<Json> {
    const id = this.next++;
    const message = JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) });
    return new Promise((done, fail) => {
      this.pending.set(id, { done, fail });
      (this.child.stdio[3] as Writable).write(`${message}\0`);
    });
  }

  /** Resolves on the next event of that name (of that session). */
  event(method: string, sessionId: string): Promise<Json> {
    return new Promise((done) => {
      const listen = (m: Reply) => {
        if (m.method !== method || m.sessionId !== sessionId) return;
        this.listeners = this.listeners.filter((l) => l !== listen);
        done(m.params ?? {});
      };
      this.listeners.push(listen);
    });
  }

  /** A new tab of `width` × `height` CSS pixels. */
  async page(width: number, height: number): Promise<Page> {
    const { targetId } = (await this.send('Target.createTarget', { url: 'about:blank' })) as {
      targetId: string;
    };
    const { sessionId } = (await this.send('Target.attachToTarget', {
      targetId,
      flatten: true,
    })) as { sessionId: string };
    const page = new Page(this, sessionId);
    await page.send('Page.enable');
    await page.send('Emulation.setDeviceMetricsOverride', {
      width,
      height,
      deviceScaleFactor: 1,
      mobile: false,
    });
    return page;
  }

  close(): void {
    this.child.kill();
  }
}

/** One tab. */
export class Page {
  constructor(
    private readonly browser: Browser,
    private readonly session: string,
  ) {}

  send(method: string, params: Json = {}): Promise<Json> {
    return this.browser.send(method, params, this.session);
  }

  /** Opens `url` and waits for its load event. */
  async goto(url: string): Promise<void> {
    const loaded = this.browser.event('Page.loadEventFired', this.session);
    await this.send('Page.navigate', { url });
    await loaded;
  }

  /** The value of a JavaScript expression in the page (a promise is awaited). */
  async evaluate<T>(expression: string): Promise<T> {
    const r = (await this.send('Runtime.evaluate', {
      expression,
      returnByValue: true,
      awaitPromise: true,
    })) as { result: { value: T }; exceptionDetails?: { exception?: { description?: string } } };
    if (r.exceptionDetails)
      throw new Error(`in the page: ${r.exceptionDetails.exception?.description ?? expression}`);
    return r.result.value;
  }

  /** A PNG of the viewport, or of `height` CSS pixels from the top when given (the whole page). */
  async screenshot(height?: number): Promise<Buffer> {
    const clip = height
      ? { x: 0, y: 0, width: await this.evaluate<number>('innerWidth'), height, scale: 1 }
      : undefined;
    const { data } = (await this.send('Page.captureScreenshot', {
      format: 'png',
      ...(clip ? { clip, captureBeyondViewport: true } : {}),
    })) as { data: string };
    return Buffer.from(data, 'base64');
  }

  /** A left-button drag from (x1, y) to (x2, y), in steps, as a hand on a mouse makes it. */
  async drag(x1: number, x2: number, y: number): Promise<void> {
    const mouse = (type: string, x: number, buttons: number) =>
      this.send('Input.dispatchMouseEvent', {
        type,
        x,
        y,
        button: 'left',
        buttons,
        clickCount: type === 'mouseMoved' ? 0 : 1,
      });
    await mouse('mouseMoved', x1, 0);
    await mouse('mousePressed', x1, 1);
    for (let i = 1; i <= 8; i++) await mouse('mouseMoved', x1 + ((x2 - x1) * i) / 8, 1);
    await mouse('mouseReleased', x2, 0);
  }
}
