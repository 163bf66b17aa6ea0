// The base of every error the SDK throws: the API's one error shape. The
// classes per code are generated into `errors.ts`.

/** What a `HolmError` is made of. */
export interface HolmErrorInit {
  /** The error code, such as `not_found` (the ErrorCode schema). */
  code?: string;
  /** What to do next, in REST's terms, when the server said. */
  hint?: string | null;
  /** Typed details (`details.kind` names them), when there are any. */
  details?: unknown;
  /** The request id (also the `x-request-id` header). */
  requestId?: string | null;
  /** The HTTP status, when the server answered. */
  status?: number | null;
  /** What caused it, when it is not an answer of the server. */
  cause?: unknown;
}

/**
 * An error in the API's one shape: `code`, `message`, `hint`, `details` and
 * `requestId`, plus the HTTP `status` when the server answered.
 *
 * A failure to reach the server is one too (`unavailable`, with a hint), and
 * so is a call that took longer than its timeout (`timeout`).
 */
export class HolmError extends Error {
  /** The error code, such as `not_found` (the ErrorCode schema). */
  readonly code: string;
  /** What to do next, in REST's terms, when the server said. */
  readonly hint: string | null;
  /** Typed details (`details.kind` names them), when there are any. */
  readonly details: unknown;
  /** The request id, to quote in a report. */
  readonly requestId: string | null;
  /** The HTTP status, when the server answered. */
  readonly status: number | null;

  /** An error of the one shape. */
  constructor(message: string, init: HolmErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "HolmError";
    this.code = init.code ?? "internal";
    this.hint = init.hint ?? null;
    this.details = init.details ?? null;
    this.requestId = init.requestId ?? null;
    this.status = init.status ?? null;
  }

  /** The kind of the typed details (`no_such_box`, `browser_starting`...). */
  get kind(): string | null {
    const d = this.details as { kind?: unknown } | null;
    return d && typeof d === "object" && typeof d.kind === "string" ? d.kind : null;
  }

  /** The error as the API writes it: `{"error": {...}}`. */
  toJSON(): { error: Record<string, unknown> } {
    return {
      error: { code: this.code, message: this.message, hint: this.hint, details: this.details, request_id: this.requestId },
    };
  }

  /** `error[code]: message`, with the hint and request id on lines of their own. */
  toString(): string {
    let text = `error[${this.code}]: ${this.message}`;
    if (this.hint) text += `\n  hint: ${this.hint}`;
    if (this.requestId) text += `\n  request id: ${this.requestId}`;
    return text;
  }
}

/**
 * A box asked to run (created, started or forked with a wait) ended in
 * another state, such as `failed`; `details.box` is the box, and its reason
 * is the message.
 */
export class BoxNotRunningError extends HolmError {
  /** An error whose code is `not_running`. */
  constructor(message: string, init: HolmErrorInit = {}) {
    super(message, { ...init, code: "not_running" });
    this.name = "BoxNotRunningError";
  }
}
