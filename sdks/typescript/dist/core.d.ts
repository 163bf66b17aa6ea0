import { HolmError } from "./errors.js";
import type { Route } from "./routes.js";
import type * as t from "./types.js";
/** The address holmd listens on by default. */
export declare const DEFAULT_SERVER_URL = "http://127.0.0.1:8080";
/** The environment variable naming the server's address. */
export declare const ENV_URL = "HOLM_SERVER_URL";
/** The environment variable holding the server's token. */
export declare const ENV_TOKEN = "HOLM_SERVER_TOKEN";
/** How long a call may take, by default, in milliseconds (waits add their own). */
export declare const DEFAULT_TIMEOUT_MS = 60000;
export declare const REQUEST_ID_HEADER: "x-request-id";
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
export declare class Retry {
    /** The longest time spent retrying one call, in milliseconds. */
    readonly budgetMs: number;
    /** The first backoff, in milliseconds, when the answer says nothing. */
    readonly firstMs: number;
    /** The longest backoff, in milliseconds. */
    readonly mostMs: number;
    /** A policy; each field has its default when left out. */
    constructor(options?: RetryOptions);
    /** Milliseconds to wait before trying `error`'s call again, or null to throw. */
    delayMs(error: HolmError, retryAfter: string | null, attempt: number): number | null;
}
/** `Retry-After` in milliseconds: a number of seconds, or an HTTP date. */
export declare function parseRetryAfter(value: string | null | undefined): number | null;
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
export declare class Config {
    #private;
    readonly url: string;
    readonly timeoutMs: number;
    readonly retry: Retry;
    readonly fetch: typeof fetch;
    readonly headers: Record<string, string>;
    constructor(options?: HolmOptions);
    /** The Authorization header, when there is a token. */
    auth(): Record<string, string>;
    /** What a log may show: never the token. */
    toJSON(): Record<string, unknown>;
}
/** The route's path with its `{name}` parameters filled in, percent-encoded. */
export declare function pathOf(route: Route, params?: Record<string, string | number>): string;
/** The query string of the parameters that are set (`?a=b`, or empty). */
export declare function queryOf(route: Route, query?: Record<string, unknown>): string;
/** A JSON body without the fields left undefined (the server's defaults apply). */
export declare function defined<T extends Record<string, unknown>>(values: T): Partial<T>;
/** Options sorted into the bodies whose schema names them; a name no body
 * takes is a TypeError naming the ones they do. */
export declare function splitFields(fields: Record<string, unknown>, groups: Record<string, readonly string[]>): Record<string, Record<string, unknown>>;
/** The error an answer carries: its body in the one shape, or, when the body
 * is not one, an error named by its status. */
export declare function fromAnswer(status: number, body: string, requestId: string | null, url: string): HolmError;
/** A server that could not be reached, as an `unavailable` error. */
export declare function unreachable(url: string, cause: unknown): HolmError;
/** A call that took longer than its timeout, as a `timeout` error. */
export declare function timedOut(url: string, ms: number | null): HolmError;
/** Bytes as base64 (no Buffer needed). */
export declare function toBase64(data: Uint8Array): string;
/** Text or bytes as bytes (text as UTF-8). */
export declare function toBytes(data: Uint8Array | string): Uint8Array;
/** A region: `[x, y, width, height]` or a Region. */
export type RegionLike = readonly [number, number, number, number] | t.Region;
/**
 * A screenshot: the encoded image (`data`, PNG unless asked otherwise) and
 * what its headers say. No image library is needed; `decodePng` reads a
 * PNG's pixels.
 */
export declare class Screenshot {
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
    constructor(fields: Omit<Screenshot, "mediaType" | "base64" | "dataUrl" | "toScreen">);
    /** `image/png`, `image/jpeg` or `image/webp`. */
    get mediaType(): string;
    /** The image in base64, as model APIs take it. */
    base64(): string;
    /** The image as a `data:` URL. */
    dataUrl(): string;
    /** A point of the image in screen pixels: region origin + point / scale. */
    toScreen(x: number, y: number): [number, number];
}
/** A screenshot from an answer's headers and body. */
export declare function readScreenshot(headers: Headers, data: Uint8Array, url: string): Screenshot;
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
export declare function screenshotQuery(o: ScreenshotOptions): Record<string, unknown>;
/** Splits a byte stream into NDJSON values. */
export declare class Lines {
    #private;
    /** The complete values in the bytes so far. */
    feed(chunk: Uint8Array): unknown[];
    /** The last value, when the stream did not end with a newline. */
    end(): unknown[];
}
/** Waits `ms` milliseconds. */
export declare function sleep(ms: number): Promise<void>;
