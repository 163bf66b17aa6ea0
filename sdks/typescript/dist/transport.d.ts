import { Config } from "./core.js";
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
export declare class Transport {
    #private;
    readonly config: Config;
    /** How many times a call was tried again after `not_ready`. */
    retries: number;
    constructor(config: Config);
    /** The URL of a route, its path parameters filled in. */
    url(route: Route, params?: Params): string;
    /** Sends a request and answers its response, throwing the error it
     * carries; `not_ready` is tried again as the client's `Retry` says. The
     * timeout covers the body too: read it before it runs out. */
    send(route: Route, params?: Params, o?: Send): Promise<{
        response: Response;
        url: string;
        done: () => void;
    }>;
    /** Sends a request and answers its JSON body (undefined for 204). */
    json<T = unknown>(route: Route, params?: Params, o?: Send): Promise<T>;
    /** Sends a request and answers its raw body. */
    data(route: Route, params?: Params, o?: Send): Promise<Uint8Array>;
    /** Sends a request and answers its response and raw body. */
    full(route: Route, params?: Params, o?: Send): Promise<{
        response: Response;
        data: Uint8Array;
        url: string;
    }>;
    /** Sends a request and yields each line of its NDJSON answer as it comes
     * (no timeout unless the call gives one). */
    ndjson<T = unknown>(route: Route, params?: Params, o?: Send): AsyncGenerator<T>;
}
export {};
