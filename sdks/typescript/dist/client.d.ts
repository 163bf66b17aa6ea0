import { Box } from "./box.js";
import { type HolmOptions } from "./core.js";
import { Transport } from "./transport.js";
import type * as t from "./types.js";
/** Seconds a create, start or fork waits for the box to run, by default. */
export declare const DEFAULT_WAIT_SECS = 600;
/** What `create` takes: the box's spec and placement fields (sorted into
 * them by name), or `spec` and `placement` whole, and how to wait. */
export type CreateOptions = Partial<t.BoxSpec> & Partial<t.Placement> & {
    /** The spec whole (its fields can also be given one by one). */
    spec?: t.BoxSpec;
    /** The placement whole. */
    placement?: t.Placement;
    /** Answer once the box runs (default true), throwing `BoxNotRunningError` if it failed. */
    wait?: boolean;
    /** How long to wait, in seconds (default 600). */
    timeoutSecs?: number;
    /** The same key and body answer the first box again. */
    idempotencyKey?: string;
    /** Called with each stage as it comes, the box last. */
    onProgress?: (event: t.BoxEvent) => void;
};
/**
 * A client of one holmd.
 *
 * `new Holm()` reads the server's address from `HOLM_SERVER_URL` (default
 * `http://127.0.0.1:8080`) and its token from `HOLM_SERVER_TOKEN`; both can
 * be given. `timeoutMs` is how long one call may take (waits add their
 * own); `retry` says how calls answered `not_ready` are tried again.
 */
export declare class Holm {
    /** The transport every box of this client shares. */
    readonly transport: Transport;
    /** A client; see `HolmOptions`. */
    constructor(options?: HolmOptions);
    /** The server's address. */
    get url(): string;
    /** How many calls were tried again after `not_ready` so far. */
    get retries(): number;
    /** The client as a log may show it (never the token). */
    toJSON(): Record<string, unknown>;
    /** The server answers: its status and version. */
    health(): Promise<t.ServerHealth>;
    /** The server's OpenAPI document. */
    openapi(): Promise<Record<string, unknown>>;
    /**
     * Creates a box and, with `wait` (the default), answers once it runs
     * (throwing `BoxNotRunningError` when it failed instead).
     *
     * `create({ browser: false, screens: 2, runtime: "docker", expires_after_secs: 600 })`:
     * fields are sorted into the CreateBody's spec and placement by name.
     * `onProgress` is called with each stage as it comes (the image and its
     * build lines, the container, the desktop, the browser), the box last.
     */
    create(options?: CreateOptions): Promise<Box>;
    /** A box by its id, without a call (its `info` holds only the id). */
    box(id: string): Box;
    /** A box by its id; with `waitFor`, once it is in that state (or at
     * `timeoutSecs`, as it is then). */
    get(id: string, options?: {
        waitFor?: t.BoxState;
        timeoutSecs?: number;
    }): Promise<Box>;
    /** One page of boxes, with its `next_cursor`; `all` includes those a warm pool holds. */
    listBoxes(query?: {
        cursor?: string;
        limit?: number;
        state?: t.BoxState;
        all?: boolean;
    }): Promise<t.PageOfBoxInfo>;
    /** Every box, page after page. */
    boxes(query?: {
        state?: t.BoxState;
        all?: boolean;
    }): Promise<Box[]>;
    /** The stages of a box's latest making or start so far, then each as it
     * comes, until it runs, fails, or `timeoutSecs` pass; the box last. */
    progress(id: string, options?: {
        timeoutSecs?: number;
    }): AsyncGenerator<t.BoxEvent>;
    /** The runtimes and what each can do. */
    runtimes(): Promise<t.RuntimeInfo[]>;
    /** One runtime. */
    runtime(name: string): Promise<t.RuntimeInfo>;
    /** Adds a remote runtime (a cloud vendor account); its key is sent and never answered. */
    addRuntime(runtime: t.AddRuntime): Promise<t.RuntimeInfo>;
    /** Adds or replaces a remote runtime whole. */
    replaceRuntime(name: string, runtime: t.ReplaceRuntime): Promise<t.RuntimeInfo>;
    /** Changes some fields of a remote runtime, or replaces its key. */
    changeRuntime(name: string, change: t.ChangeRuntime): Promise<t.RuntimeInfo>;
    /** Removes a remote runtime that no box is on. */
    removeRuntime(name: string): Promise<t.RuntimeInfo>;
    /** The images holm built. */
    images(): Promise<t.ImageInfo[]>;
    /** Builds a box image (BuildImage's fields) and yields the build's events. */
    buildImage(request: t.BuildImage): AsyncGenerator<t.BuildEvent>;
    /** Makes the air-gapped base image if it is missing, yielding its events. */
    makeBase(runtime?: string): AsyncGenerator<t.BuildEvent>;
    /** Removes box images no box uses; `dry_run` says what would go. */
    pruneImages(request?: t.PruneImages): Promise<t.PrunedImage[]>;
    /** The app catalogue (what `apps: [...]` takes). */
    apps(): Promise<t.AppInfo[]>;
}
