// What the client and its boxes share, with no IO: the server's address and
// token, how a route becomes a request, the retry policy for `not_ready`,
// the one error shape from an answer, and the reading of screenshots and
// NDJSON streams.

import { ERRORS, HolmError } from "./errors.js";
import type { Route } from "./routes.js";
import type * as t from "./types.js";

/** The address holmd listens on by default. */
export const DEFAULT_SERVER_URL = "http://127.0.0.1:8080";
/** The environment variable naming the server's address. */
export const ENV_URL = "HOLM_SERVER_URL";
/** The environment variable holding the server's token. */
export const ENV_TOKEN = "HOLM_SERVER_TOKEN";
/** How long a call may take, by default, in milliseconds (waits add their own). */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** The headers that describe a screenshot (holm_proto::guest::headers). */
const H = {
  width: "x-holm-width",
  height: "x-holm-height",
  scale: "x-holm-scale",
  region: "x-holm-region",
  cursor: "x-holm-cursor",
  settled: "x-holm-settled",
  requestId: "x-request-id",
} as const;
export const REQUEST_ID_HEADER = H.requestId;

/** How calls answered `not_ready` are tried again (all in milliseconds). */
export interface RetryOptions {
  /** The longest time spent retrying one call (default 30 000; 0 never retries). */
  budgetMs?: number;
  /** The first backoff when the answer says nothing (default 250). */
  firstMs?: number;
  /** The longest backoff (default 4 000). */
  mostMs?: number;
}

/**
 * How calls answered `not_ready` (a box, screen or browser still coming up)
 * are tried again: after the answer's `Retry-After` (seconds or a date),
 * else its `details.retry_after_ms`, else a backoff of `firstMs` doubling up
 * to `mostMs`; for at most `budgetMs` in all. `new Retry({ budgetMs: 0 })`
 * never retries.
 *
 * Input that a screen stopped taking part way (`details.performed` above 0)
 * is never repeated: the error is thrown.
 */
export class Retry {
  /** The longest time spent retrying one call, in milliseconds. */
  readonly budgetMs: number;
  /** The first backoff, in milliseconds, when the answer says nothing. */
  readonly firstMs: number;
  /** The longest backoff, in milliseconds. */
  readonly mostMs: number;

  /** A policy; each field has its default when left out. */
  constructor(options: RetryOptions = {}) {
    this.budgetMs = options.budgetMs ?? 30_000;
    this.firstMs = options.firstMs ?? 250;
    this.mostMs = options.mostMs ?? 4_000;
  }

  /** Milliseconds to wait before trying `error`'s call again, or null to throw. */
  delayMs(error: HolmError, retryAfter: string | null, attempt: number): number | null {
    if (error.code !== "not_ready" || this.budgetMs <= 0) return null;
    const details = (error.details && typeof error.details === "object" ? error.details : {}) as Record<string, unknown>;
    if (details.performed) return null;
    let wait = parseRetryAfter(retryAfter);
    if (wait === null && typeof details.retry_after_ms === "number") wait = details.retry_after_ms;
    if (wait === null) wait = Math.min(this.mostMs, this.firstMs * 2 ** attempt) * (0.75 + Math.random() / 4);
    return Math.max(0, Math.min(wait, this.mostMs * 8));
  }
}

/** `Retry-After` in milliseconds: a number of seconds, or an HTTP date. */
export function parseRetryAfter(value: string | null | undefined): number | null {
  if (!value || !value.trim()) return null;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * 1000;
  const when = Date.parse(v);
  return Number.isNaN(when) ? null : Math.max(0, when - Date.now());
}

/** The options of a client. */
export interface HolmOptions {
  /** The server's address (default: `HOLM_SERVER_URL`, else http://127.0.0.1:8080). */
  url?: string;
  /** The server's token (default: `HOLM_SERVER_TOKEN`). */
  token?: string | null;
  /** How long one call may take, in milliseconds (default 60 000; waits add their own). */
  timeoutMs?: number;
  /** How calls answered `not_ready` are tried again. */
  retry?: Retry | RetryOptions;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

/** A client's server, token, timeout and retry policy. */
export class Config {
  readonly url: string;
  readonly timeoutMs: number;
  readonly retry: Retry;
  readonly fetch: typeof fetch;
  readonly headers: Record<string, string>;
  readonly #token: string | null;

  constructor(options: HolmOptions = {}) {
    const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
    this.url = (options.url || env[ENV_URL] || DEFAULT_SERVER_URL).replace(/\/+$/, "");
    this.#token = (options.token === undefined ? env[ENV_TOKEN] : options.token) || null;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.retry = options.retry instanceof Retry ? options.retry : new Retry(options.retry);
    const f = options.fetch ?? globalThis.fetch;
    if (typeof f !== "function") throw new TypeError("no fetch: Node 18 or later has one, or pass options.fetch");
    this.fetch = f;
    this.headers = { ...(options.headers ?? {}) };
  }

  /** The Authorization header, when there is a token. */
  auth(): Record<string, string> {
    return this.#token ? { authorization: `Bearer ${this.#token}` } : {};
  }

  /** What a log may show: never the token. */
  toJSON(): Record<string, unknown> {
    return { url: this.url, token: this.#token ? "<hidden>" : null, timeoutMs: this.timeoutMs };
  }
}

/** The route's path with its `{name}` parameters filled in, percent-encoded. */
export function pathOf(route: Route, params: Record<string, string | number> = {}): string {
  return route.path
    .split("/")
    .map((part) => {
      if (!part.startsWith("{") || !part.endsWith("}")) return part;
      const name = part.slice(1, -1);
      if (params[name] === undefined) throw new TypeError(`${route.method} ${route.path} needs ${name}`);
      return encodeURIComponent(String(params[name]));
    })
    .join("/");
}

/** A query's value as the server reads it. */
function queryValue(value: unknown): string {
  if (typeof value === "boolean") return value ? "true" : "false";
  if (Array.isArray(value)) return value.join(",");
  if (value && typeof value === "object") {
    const r = value as Record<string, unknown>;
    if (["x", "y", "width", "height"].every((k) => k in r)) return `${r.x},${r.y},${r.width},${r.height}`;
  }
  return String(value);
}

/** The query string of the parameters that are set (`?a=b`, or empty). */
export function queryOf(route: Route, query: Record<string, unknown> = {}): string {
  const out = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (!route.query.includes(name)) {
      throw new TypeError(`${route.method} ${route.path} takes no query parameter ${JSON.stringify(name)}`);
    }
    out.append(name, queryValue(value));
  }
  const text = out.toString();
  return text ? `?${text}` : "";
}

/** A JSON body without the fields left undefined (the server's defaults apply). */
export function defined<T extends Record<string, unknown>>(values: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) if (v !== undefined) out[k] = v;
  return out as Partial<T>;
}

/** Options sorted into the bodies whose schema names them; a name no body
 * takes is a TypeError naming the ones they do. */
export function splitFields(
  fields: Record<string, unknown>,
  groups: Record<string, readonly string[]>,
): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  const known = new Map<string, string>();
  for (const [group, names] of Object.entries(groups)) {
    out[group] = {};
    for (const n of names) if (!known.has(n)) known.set(n, group);
  }
  for (const [key, value] of Object.entries(fields)) {
    const group = known.get(key);
    if (!group) throw new TypeError(`unknown field ${JSON.stringify(key)}; known: ${[...known.keys()].sort().join(", ")}`);
    if (value !== undefined) out[group][key] = value;
  }
  return out;
}

/** The error an answer carries: its body in the one shape, or, when the body
 * is not one, an error named by its status. */
export function fromAnswer(status: number, body: string, requestId: string | null, url: string): HolmError {
  let error: Record<string, unknown> | undefined;
  try {
    const parsed = JSON.parse(body) as { error?: Record<string, unknown> };
    if (parsed?.error && typeof parsed.error.code === "string" && typeof parsed.error.message === "string") {
      error = parsed.error;
    }
  } catch {
    error = undefined;
  }
  if (!error) {
    const code = { 401: "unauthorized", 404: "not_found", 502: "guest_unreachable", 503: "unavailable" }[status] ?? "internal";
    return new (ERRORS[code] ?? HolmError)(`${url} answered ${status}`, { code, requestId, status });
  }
  const code = error.code as string;
  return new (ERRORS[code] ?? HolmError)(error.message as string, {
    code,
    hint: (error.hint as string | null) ?? null,
    details: error.details ?? null,
    requestId: (error.request_id as string | null) ?? requestId,
    status,
  });
}

/** A server that could not be reached, as an `unavailable` error. */
export function unreachable(url: string, cause: unknown): HolmError {
  const server = url.split("/v1")[0];
  const why = cause instanceof Error ? ((cause.cause as Error | undefined)?.message ?? cause.message) : String(cause);
  return new ERRORS.unavailable(`cannot reach holmd at ${server}: ${why}`, {
    hint: "check that holmd runs and that HOLM_SERVER_URL points at it",
    cause,
  });
}

/** A call that took longer than its timeout, as a `timeout` error. */
export function timedOut(url: string, ms: number | null): HolmError {
  const path = url.includes("/v1") ? "/v1" + url.split("/v1").slice(1).join("/v1") : url;
  const after = ms ? ` after ${ms / 1000} s` : "";
  return new ERRORS.timeout(`${path} did not answer${after}`, {
    hint: "pass a longer timeout to the call or the client (timeoutMs)",
  });
}

/** Bytes as base64 (no Buffer needed). */
export function toBase64(data: Uint8Array): string {
  let text = "";
  for (let i = 0; i < data.length; i += 0x8000) text += String.fromCharCode(...data.subarray(i, i + 0x8000));
  return btoa(text);
}

/** Text or bytes as bytes (text as UTF-8). */
export function toBytes(data: Uint8Array | string): Uint8Array {
  return typeof data === "string" ? new TextEncoder().encode(data) : data;
}

/** A region: `[x, y, width, height]` or a Region. */
export type RegionLike = readonly [number, number, number, number] | t.Region;

/**
 * A screenshot: the encoded image (`data`, PNG unless asked otherwise) and
 * what its headers say. No image library is needed; `decodePng` reads a
 * PNG's pixels.
 */
export class Screenshot {
  /** The encoded image. */
  readonly data: Uint8Array;
  /** `png`, `jpeg` or `webp`. */
  readonly format: "png" | "jpeg" | "webp";
  /** Image width in pixels. */
  readonly width: number;
  /** Image height in pixels. */
  readonly height: number;
  /** Image pixels per screen pixel (1 when not downscaled). */
  readonly scale: number;
  /** The part of the screen the image covers: [x, y, width, height]. */
  readonly region: [number, number, number, number];
  /** The frame's hash (its ETag): the same for an unchanged screen. */
  readonly frame: string;
  /** The pointer position in screen pixels, when the server said. */
  readonly cursor: [number, number] | null;
  /** After input with `settle`: whether the screen stopped changing in time. */
  readonly settled: boolean | null;

  /** A screenshot from its parts (`readScreenshot` makes one from an answer). */
  constructor(fields: Omit<Screenshot, "mediaType" | "base64" | "dataUrl" | "toScreen">) {
    this.data = fields.data;
    this.format = fields.format;
    this.width = fields.width;
    this.height = fields.height;
    this.scale = fields.scale;
    this.region = fields.region;
    this.frame = fields.frame;
    this.cursor = fields.cursor;
    this.settled = fields.settled;
  }

  /** `image/png`, `image/jpeg` or `image/webp`. */
  get mediaType(): string {
    return `image/${this.format}`;
  }

  /** The image in base64, as model APIs take it. */
  base64(): string {
    return toBase64(this.data);
  }

  /** The image as a `data:` URL. */
  dataUrl(): string {
    return `data:${this.mediaType};base64,${this.base64()}`;
  }

  /** A point of the image in screen pixels: region origin + point / scale. */
  toScreen(x: number, y: number): [number, number] {
    return [Math.round(this.region[0] + x / this.scale), Math.round(this.region[1] + y / this.scale)];
  }
}

/** A screenshot from an answer's headers and body. */
export function readScreenshot(headers: Headers, data: Uint8Array, url: string): Screenshot {
  const ctype = (headers.get("content-type") ?? "").split(";")[0].trim();
  const formats: Record<string, Screenshot["format"]> = { "image/png": "png", "image/jpeg": "jpeg", "image/webp": "webp" };
  if (!formats[ctype]) throw new HolmError(`${url} answered ${ctype || "no content-type"}, not an image`);
  const num = (name: string): number => {
    const value = headers.get(name);
    if (value === null) throw new HolmError(`${url} answered an image without ${name}`);
    return Number(value);
  };
  const width = num(H.width);
  const height = num(H.height);
  let region: [number, number, number, number] = [0, 0, width, height];
  const r = headers.get(H.region)?.split(",").map(Number);
  if (r && r.length === 4) region = [r[0], r[1], r[2], r[3]];
  const c = headers.get(H.cursor)?.split(",").map((p) => Number(p.trim()));
  const settled = headers.get(H.settled);
  return new Screenshot({
    data,
    format: formats[ctype],
    width,
    height,
    scale: Number(headers.get(H.scale) ?? 1),
    region,
    frame: (headers.get("etag") ?? "").replace(/^"|"$/g, ""),
    cursor: c && c.length === 2 ? [c[0], c[1]] : null,
    settled: settled === null ? null : settled === "true",
  });
}

/** The options of a screenshot (the query of GET .../screenshot). */
export interface ScreenshotOptions {
  /** `png` (default), `jpeg` or `webp`. */
  format?: t.ImageFormat;
  /** JPEG or WebP quality, 1 to 100. */
  quality?: number;
  /** The part of the screen: [x, y, width, height] or a Region. */
  region?: RegionLike;
  /** Downscale to at most this width. */
  max_width?: number;
  /** Downscale to at most this height. */
  max_height?: number;
  /** Downscale by this factor. */
  scale?: number;
  /** Draw the pointer. */
  cursor?: boolean;
}

/** Screenshot options as the API takes them (a region as a Region). */
export function screenshotQuery(o: ScreenshotOptions): Record<string, unknown> {
  const region = Array.isArray(o.region)
    ? { x: o.region[0], y: o.region[1], width: o.region[2], height: o.region[3] }
    : o.region;
  return defined({
    format: o.format,
    quality: o.quality,
    region,
    max_width: o.max_width,
    max_height: o.max_height,
    scale: o.scale,
    cursor: o.cursor,
  });
}

/** Splits a byte stream into NDJSON values. */
export class Lines {
  #buf = "";
  readonly #decoder = new TextDecoder();

  /** The complete values in the bytes so far. */
  feed(chunk: Uint8Array): unknown[] {
    this.#buf += this.#decoder.decode(chunk, { stream: true });
    const out: unknown[] = [];
    let nl: number;
    while ((nl = this.#buf.indexOf("\n")) >= 0) {
      const line = this.#buf.slice(0, nl);
      this.#buf = this.#buf.slice(nl + 1);
      if (line.trim()) out.push(JSON.parse(line));
    }
    return out;
  }

  /** The last value, when the stream did not end with a newline. */
  end(): unknown[] {
    const rest = this.#buf + this.#decoder.decode();
    this.#buf = "";
    return rest.trim() ? [JSON.parse(rest)] : [];
  }
}

/** Waits `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
