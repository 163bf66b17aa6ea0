import type { Route } from "./routes.js";
import type { Transport } from "./transport.js";
/**
 * An open terminal in a box: `send` types, `read` answers what it printed,
 * `resize` changes its size, `close` ends it. After its program ends,
 * `read` answers an empty array and `exitCode` (or `signal`) says how.
 */
export declare class Terminal {
    #private;
    /** The process id of its program in the box. */
    readonly pid: number;
    /** Its size when it opened. */
    readonly cols: number;
    /** Its size when it opened. */
    readonly rows: number;
    /** Whether its program ended. */
    exited: boolean;
    /** The program's exit code, when it ended with one. */
    exitCode: number | null;
    /** The signal that ended the program, when one did. */
    signal: string | null;
    private constructor();
    /** Opens a route's terminal (use `box.terminal()`). */
    static open(transport: Transport, route: Route, params: {
        id: string;
    }, query: Record<string, unknown>): Promise<Terminal>;
    /** Types bytes (or text, as UTF-8) into the terminal. */
    send(data: Uint8Array | string): void;
    /** Changes the terminal's size (a refusal comes back from `read`). */
    resize(cols: number, rows: number): void;
    /** The next bytes the terminal printed, waiting at most `timeoutMs` (null:
     * as long as it takes); an empty array once it ended. A refused frame
     * throws its error. */
    read(timeoutMs?: number | null): Promise<Uint8Array>;
    /** Reads until the output holds `pattern`; answers everything read up to
     * and including it as text (the rest is kept for the next read). */
    readUntil(pattern: string, timeoutMs?: number): Promise<string>;
    /** Reads until the program ends; answers its exit code. */
    wait(timeoutMs?: number): Promise<number | null>;
    /** Closes the connection (the program gets a hang-up). */
    close(): void;
}
