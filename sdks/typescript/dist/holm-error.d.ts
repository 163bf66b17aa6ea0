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
export declare class HolmError extends Error {
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
    constructor(message: string, init?: HolmErrorInit);
    /** The kind of the typed details (`no_such_box`, `browser_starting`...). */
    get kind(): string | null;
    /** The error as the API writes it: `{"error": {...}}`. */
    toJSON(): {
        error: Record<string, unknown>;
    };
    /** `error[code]: message`, with the hint and request id on lines of their own. */
    toString(): string;
}
/**
 * A box asked to run (created, started or forked with a wait) ended in
 * another state, such as `failed`; `details.box` is the box, and its reason
 * is the message.
 */
export declare class BoxNotRunningError extends HolmError {
    /** An error whose code is `not_running`. */
    constructor(message: string, init?: HolmErrorInit);
}
