// `Holm`: a client of one holmd: its boxes (create with progress, get,
// list), runtimes, images and apps.

import { Box, checkRunning } from "./box.js";
import { Config, type HolmOptions, splitFields } from "./core.js";
import * as r from "./routes.js";
import { Transport } from "./transport.js";
import { FIELDS } from "./types.js";
import type * as t from "./types.js";

/** Seconds a create, start or fork waits for the box to run, by default. */
export const DEFAULT_WAIT_SECS = 600;

/** What `create` takes: the box's spec and placement fields (sorted into
 * them by name), or `spec` and `placement` whole, and how to wait. */
export type CreateOptions = Partial<t.BoxSpec> &
  Partial<t.Placement> & {
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
export class Holm {
  /** The transport every box of this client shares. */
  readonly transport: Transport;

  /** A client; see `HolmOptions`. */
  constructor(options: HolmOptions = {}) {
    this.transport = new Transport(new Config(options));
  }

  /** The server's address. */
  get url(): string {
    return this.transport.config.url;
  }

  /** How many calls were tried again after `not_ready` so far. */
  get retries(): number {
    return this.transport.retries;
  }

  /** The client as a log may show it (never the token). */
  toJSON(): Record<string, unknown> {
    return { Holm: this.transport.config.toJSON() };
  }

  /** The server answers: its status and version. */
  async health(): Promise<t.ServerHealth> {
    return this.transport.json(r.GET_V1_HEALTH);
  }

  /** The server's OpenAPI document. */
  async openapi(): Promise<Record<string, unknown>> {
    return this.transport.json(r.GET_V1_OPENAPI_JSON);
  }

  /**
   * Creates a box and, with `wait` (the default), answers once it runs
   * (throwing `BoxNotRunningError` when it failed instead).
   *
   * `create({ browser: false, screens: 2, runtime: "docker", expires_after_secs: 600 })`:
   * fields are sorted into the CreateBody's spec and placement by name.
   * `onProgress` is called with each stage as it comes (the image and its
   * build lines, the container, the desktop, the browser), the box last.
   */
  async create(options: CreateOptions = {}): Promise<Box> {
    const { spec, placement, wait = true, timeoutSecs = DEFAULT_WAIT_SECS, idempotencyKey, onProgress, ...fields } = options;
    const parts = splitFields(fields, { spec: FIELDS.BoxSpec, placement: FIELDS.Placement });
    const body = { spec: { ...(spec ?? {}), ...parts.spec }, placement: { ...(placement ?? {}), ...parts.placement } };
    const waits = wait && !onProgress;
    let info = await this.transport.json<t.BoxInfo>(r.POST_V1_BOXES, undefined, {
      query: waits ? { wait_for: "running", timeout_secs: timeoutSecs } : undefined,
      json: body,
      headers: idempotencyKey ? { "idempotency-key": idempotencyKey } : undefined,
      timeoutMs: waits ? (timeoutSecs + 30) * 1000 : undefined,
    });
    if (onProgress) {
      for await (const event of this.progress(info.id, { timeoutSecs: wait ? timeoutSecs : 0 })) {
        onProgress(event);
        if (event.type === "box") info = event.box;
      }
    }
    if (wait) checkRunning(info);
    return new Box(this.transport, info);
  }

  /** A box by its id, without a call (its `info` holds only the id). */
  box(id: string): Box {
    return new Box(this.transport, { id } as t.BoxInfo);
  }

  /** A box by its id; with `waitFor`, once it is in that state (or at
   * `timeoutSecs`, as it is then). */
  async get(id: string, options: { waitFor?: t.BoxState; timeoutSecs?: number } = {}): Promise<Box> {
    const box = this.box(id);
    await box.refresh(options);
    return box;
  }

  /** One page of boxes, with its `next_cursor`; `all` includes those a warm pool holds. */
  async listBoxes(query: { cursor?: string; limit?: number; state?: t.BoxState; all?: boolean } = {}): Promise<t.PageOfBoxInfo> {
    return this.transport.json(r.GET_V1_BOXES, undefined, { query });
  }

  /** Every box, page after page. */
  async boxes(query: { state?: t.BoxState; all?: boolean } = {}): Promise<Box[]> {
    const out: Box[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await this.listBoxes({ ...query, cursor, limit: 100 });
      out.push(...page.data.map((info) => new Box(this.transport, info)));
      cursor = page.next_cursor ?? undefined;
      if (!cursor) return out;
    }
  }

  /** The stages of a box's latest making or start so far, then each as it
   * comes, until it runs, fails, or `timeoutSecs` pass; the box last. */
  async *progress(id: string, options: { timeoutSecs?: number } = {}): AsyncGenerator<t.BoxEvent> {
    const query = { timeout_secs: options.timeoutSecs ?? DEFAULT_WAIT_SECS };
    yield* this.transport.ndjson<t.BoxEvent>(r.GET_V1_BOXES_ID_PROGRESS, { id }, { query });
  }

  /** The runtimes and what each can do. */
  async runtimes(): Promise<t.RuntimeInfo[]> {
    return (await this.transport.json<t.PageOfRuntimeInfo>(r.GET_V1_RUNTIMES)).data;
  }

  /** One runtime. */
  async runtime(name: string): Promise<t.RuntimeInfo> {
    return this.transport.json(r.GET_V1_RUNTIMES_NAME, { name });
  }

  /** Adds a remote runtime (a cloud vendor account); its key is sent and never answered. */
  async addRuntime(runtime: t.AddRuntime): Promise<t.RuntimeInfo> {
    return this.transport.json(r.POST_V1_RUNTIMES, undefined, { json: runtime });
  }

  /** Adds or replaces a remote runtime whole. */
  async replaceRuntime(name: string, runtime: t.ReplaceRuntime): Promise<t.RuntimeInfo> {
    return this.transport.json(r.PUT_V1_RUNTIMES_NAME, { name }, { json: runtime });
  }

  /** Changes some fields of a remote runtime, or replaces its key. */
  async changeRuntime(name: string, change: t.ChangeRuntime): Promise<t.RuntimeInfo> {
    return this.transport.json(r.PATCH_V1_RUNTIMES_NAME, { name }, { json: change });
  }

  /** Removes a remote runtime that no box is on. */
  async removeRuntime(name: string): Promise<t.RuntimeInfo> {
    return this.transport.json(r.DELETE_V1_RUNTIMES_NAME, { name });
  }

  /** The images holm built. */
  async images(): Promise<t.ImageInfo[]> {
    return (await this.transport.json<t.PageOfImageInfo>(r.GET_V1_IMAGES)).data;
  }

  /** Builds a box image (BuildImage's fields) and yields the build's events. */
  async *buildImage(request: t.BuildImage): AsyncGenerator<t.BuildEvent> {
    yield* this.transport.ndjson<t.BuildEvent>(r.POST_V1_IMAGES_BUILD, undefined, { json: request });
  }

  /** Makes the air-gapped base image if it is missing, yielding its events. */
  async *makeBase(runtime?: string): AsyncGenerator<t.BuildEvent> {
    yield* this.transport.ndjson<t.BuildEvent>(r.POST_V1_IMAGES_BASE, undefined, { json: runtime ? { runtime } : {} });
  }

  /** Removes box images no box uses; `dry_run` says what would go. */
  async pruneImages(request: t.PruneImages = {}): Promise<t.PrunedImage[]> {
    return (await this.transport.json<t.PageOfPrunedImage>(r.POST_V1_IMAGES_PRUNE, undefined, { json: request })).data;
  }

  /** The app catalogue (what `apps: [...]` takes). */
  async apps(): Promise<t.AppInfo[]> {
    return (await this.transport.json<t.PageOfAppInfo>(r.GET_V1_APPS)).data;
  }
}
