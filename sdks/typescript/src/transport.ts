// The transport: one request to holmd with `fetch`, with its token, timeout,
// the one error shape thrown as typed errors, and retries of `not_ready`
// after `Retry-After`. The client and every box share one.

import { Config, Lines, REQUEST_ID_HEADER, fromAnswer, pathOf, queryOf, sleep, timedOut, unreachable } from "./core.js";
import { HolmError } from "./errors.js";
import type { Route } from "./routes.js";

/** The parts of one request. */
export interface Send {
  /** Query parameters (undefined ones are left out; names are checked against the route). */
  query?: Record<string, unknown>;
  /** A JSON body. */
  json?: unknown;
  /** A raw body (sent as application/octet-stream). */
  body?: Uint8Array;
  /** More headers. */
  headers?: Record<string, string>;
  /** This call's timeout in milliseconds; null: none (streams). */
  timeoutMs?: number | null;
  /** Whether `not_ready` is tried again (default true). */
  retry?: boolean;
  /** Statuses that answer rather than throw (304 for a screenshot if changed). */
  accept?: number[];
}

type Params = Record<string, string | number>;

/** Sends requests to one holmd. */
export class Transport {
  readonly config: Config;
  /** How many times a call was tried again after `not_ready`. */
  retries = 0;

  constructor(config: Config) {
    this.config = config;
  }

  /** The URL of a route, its path parameters filled in. */
  url(route: Route, params?: Params): string {
    return this.config.url + pathOf(route, params);
  }

  /** Sends a request and answers its response, throwing the error it
   * carries; `not_ready` is tried again as the client's `Retry` says. The
   * timeout covers the body too: read it before it runs out. */
  async send(route: Route, params?: Params, o: Send = {}): Promise<{ response: Response; url: string; done: () => void }> {
    const url = this.url(route, params) + queryOf(route, o.query);
    const headers: Record<string, string> = { ...this.config.headers, ...this.config.auth(), ...(o.headers ?? {}) };
    let body: BodyInit | undefined;
    if (o.json !== undefined) {
      body = JSON.stringify(o.json);
      headers["content-type"] = "application/json";
    } else if (o.body !== undefined) {
      body = o.body as BodyInit;
      // The web edge refuses a body without its type.
      headers["content-type"] ??= "application/octet-stream";
    }
    const ms = o.timeoutMs === undefined ? this.config.timeoutMs : o.timeoutMs;
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      const abort = new AbortController();
      const timer = ms === null ? undefined : setTimeout(() => abort.abort(timedOut(url, ms)), ms);
      const done = (): void => clearTimeout(timer);
      let response: Response;
      try {
        response = await this.config.fetch(url, { method: route.method, headers, body, signal: abort.signal });
      } catch (e) {
        done();
        if (abort.signal.aborted) throw abort.signal.reason;
        throw unreachable(url, e);
      }
      if (response.status < 400 || o.accept?.includes(response.status)) {
        return { response, url, done };
      }
      let text: string;
      try {
        text = await response.text();
      } catch (e) {
        throw abort.signal.aborted ? abort.signal.reason : unreachable(url, e);
      } finally {
        done();
      }
      const error = fromAnswer(response.status, text, response.headers.get(REQUEST_ID_HEADER), url);
      const delay = o.retry === false ? null : this.config.retry.delayMs(error, response.headers.get("retry-after"), attempt);
      if (delay === null || Date.now() - started + delay > this.config.retry.budgetMs) throw error;
      this.retries++;
      await sleep(delay);
    }
  }

  /** Sends a request and answers its JSON body (undefined for 204). */
  async json<T = unknown>(route: Route, params?: Params, o: Send = {}): Promise<T> {
    const { response, url, done } = await this.send(route, params, o);
    try {
      const text = await response.text();
      if (response.status === 204 || !text) return undefined as T;
      try {
        return JSON.parse(text) as T;
      } catch {
        throw new HolmError(`${url} answered a body that is not JSON`);
      }
    } catch (e) {
      throw this.#bodyError(e, url, o);
    } finally {
      done();
    }
  }

  /** Sends a request and answers its raw body. */
  async data(route: Route, params?: Params, o: Send = {}): Promise<Uint8Array> {
    const { response, url, done } = await this.send(route, params, o);
    try {
      return new Uint8Array(await response.arrayBuffer());
    } catch (e) {
      throw this.#bodyError(e, url, o);
    } finally {
      done();
    }
  }

  /** Sends a request and answers its response and raw body. */
  async full(route: Route, params?: Params, o: Send = {}): Promise<{ response: Response; data: Uint8Array; url: string }> {
    const { response, url, done } = await this.send(route, params, o);
    try {
      return { response, data: new Uint8Array(await response.arrayBuffer()), url };
    } catch (e) {
      throw this.#bodyError(e, url, o);
    } finally {
      done();
    }
  }

  /** Sends a request and yields each line of its NDJSON answer as it comes
   * (no timeout unless the call gives one). */
  async *ndjson<T = unknown>(route: Route, params?: Params, o: Send = {}): AsyncGenerator<T> {
    const { response, url, done } = await this.send(route, params, { timeoutMs: null, ...o });
    const lines = new Lines();
    const reader = response.body?.getReader();
    try {
      if (reader) {
        for (;;) {
          let chunk: ReadableStreamReadResult<Uint8Array>;
          try {
            chunk = await reader.read();
          } catch (e) {
            throw this.#bodyError(e, url, o);
          }
          if (chunk.done) break;
          for (const value of lines.feed(chunk.value)) yield value as T;
        }
      }
      for (const value of lines.end()) yield value as T;
    } finally {
      done();
      await reader?.cancel().catch(() => undefined);
    }
  }

  #bodyError(e: unknown, url: string, o: Send): unknown {
    if (e instanceof HolmError) return e;
    if (e instanceof Error && e.name === "AbortError") return timedOut(url, o.timeoutMs ?? this.config.timeoutMs);
    return unreachable(url, e);
  }
}
