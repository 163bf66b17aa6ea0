// `Terminal`: a real pty in a box over a WebSocket. Binary frames carry its
// bytes both ways; text frames are JSON (resize from the client; ready,
// error and exit from the server).
//
// The WebSocket is the `ws` package's when it is installed (an optional
// peer dependency: Node 20 has no global WebSocket, and `ws` shows why a
// handshake was refused), else the global one given the Authorization
// header as undici's (Node 22+) takes it.
import { ERRORS, HolmError } from "./errors.js";
import { REQUEST_ID_HEADER, fromAnswer, queryOf, unreachable } from "./core.js";
/** The WebSocket to use: `ws` when it is installed, else the global one. */
async function socketMaker() {
    const name = "ws";
    try {
        const mod = (await import(name));
        return (url, headers, refused) => {
            const sock = new mod.default(url, { headers, maxPayload: 0 });
            // A refused handshake: its body is the one error shape.
            sock.on("unexpected-response", (req, res) => {
                const chunks = [];
                (async () => {
                    for await (const c of res)
                        chunks.push(c);
                    const decoder = new TextDecoder();
                    const body = chunks.map((c) => decoder.decode(c, { stream: true })).join("") + decoder.decode();
                    refused(fromAnswer(res.statusCode, body, res.headers[REQUEST_ID_HEADER] ?? null, url));
                    req.destroy();
                })().catch((e) => refused(unreachable(url, e)));
            });
            return sock;
        };
    }
    catch {
        const Global = globalThis.WebSocket;
        if (!Global) {
            throw new HolmError("no WebSocket: install the ws package (npm install ws), or use Node 22 or later", {
                code: "unsupported",
                hint: "the terminal needs a WebSocket client",
            });
        }
        return (url, headers) => new Global(url, { headers });
    }
}
/**
 * An open terminal in a box: `send` types, `read` answers what it printed,
 * `resize` changes its size, `close` ends it. After its program ends,
 * `read` answers an empty array and `exitCode` (or `signal`) says how.
 */
export class Terminal {
    /** The process id of its program in the box. */
    pid;
    /** Its size when it opened. */
    cols;
    /** Its size when it opened. */
    rows;
    /** Whether its program ended. */
    exited = false;
    /** The program's exit code, when it ended with one. */
    exitCode = null;
    /** The signal that ended the program, when one did. */
    signal = null;
    #sock;
    #queue;
    #pending = new Uint8Array(0);
    constructor(sock, queue, ready) {
        this.#sock = sock;
        this.#queue = queue;
        this.pid = ready.pid;
        this.cols = ready.cols;
        this.rows = ready.rows;
    }
    /** Opens a route's terminal (use `box.terminal()`). */
    static async open(transport, route, params, query) {
        const url = transport.url(route, params) + queryOf(route, query);
        const wsUrl = url.replace(/^http/, "ws");
        const make = await socketMaker();
        const queue = { frames: [], wake: null };
        const frames = queue.frames;
        let failure = null;
        const sock = make(wsUrl, { ...transport.config.headers, ...transport.config.auth() }, (e) => {
            failure = e;
            queue.wake?.();
        });
        sock.binaryType = "arraybuffer";
        const push = (f) => {
            frames.push(f);
            queue.wake?.();
        };
        sock.addEventListener("message", (e) => {
            push(typeof e.data === "string" ? e.data : new Uint8Array(e.data));
        });
        sock.addEventListener("close", () => push(null));
        sock.addEventListener("error", (e) => {
            failure ??= unreachable(url, e.error ?? e.message ?? "the WebSocket failed");
            push(null);
        });
        // The first frame is `ready`, or the connection fails.
        const deadline = Date.now() + transport.config.timeoutMs;
        while (!frames.length && !failure) {
            if (Date.now() > deadline) {
                sock.close();
                throw new ERRORS.timeout(`${url}: the terminal did not open in ${transport.config.timeoutMs / 1000} s`);
            }
            await new Promise((resolve) => {
                queue.wake = resolve;
                setTimeout(resolve, 250);
            });
        }
        if (failure)
            throw failure;
        const first = frames.shift();
        let ready = null;
        try {
            ready = typeof first === "string" ? JSON.parse(first) : null;
        }
        catch {
            ready = null;
        }
        if (!ready || ready.type !== "ready") {
            sock.close();
            throw new HolmError(`${url}: the terminal's first frame is not ready`);
        }
        return new Terminal(sock, queue, ready);
    }
    /** Types bytes (or text, as UTF-8) into the terminal. */
    send(data) {
        if (this.exited)
            throw new ERRORS.conflict("the terminal's program has ended", { hint: "open a new terminal" });
        this.#sock.send(typeof data === "string" ? new TextEncoder().encode(data) : data);
    }
    /** Changes the terminal's size (a refusal comes back from `read`). */
    resize(cols, rows) {
        this.#sock.send(JSON.stringify({ type: "resize", cols, rows }));
    }
    async #next(timeoutMs) {
        const until = timeoutMs === null ? Infinity : Date.now() + timeoutMs;
        const q = this.#queue;
        while (!q.frames.length) {
            const left = until - Date.now();
            if (left <= 0)
                return undefined;
            let timer;
            await new Promise((resolve) => {
                q.wake = resolve;
                if (left !== Infinity)
                    timer = setTimeout(resolve, left);
            });
            clearTimeout(timer);
            q.wake = null;
        }
        return q.frames.shift();
    }
    /** The next bytes the terminal printed, waiting at most `timeoutMs` (null:
     * as long as it takes); an empty array once it ended. A refused frame
     * throws its error. */
    async read(timeoutMs = null) {
        if (this.#pending.length) {
            const data = this.#pending;
            this.#pending = new Uint8Array(0);
            return data;
        }
        while (!this.exited) {
            const frame = await this.#next(timeoutMs);
            if (frame === undefined)
                throw new ERRORS.timeout(`the terminal printed nothing in ${timeoutMs} ms`);
            if (frame === null) {
                this.exited = true;
                break;
            }
            if (typeof frame !== "string")
                return frame;
            const event = JSON.parse(frame);
            if (event.type === "exit") {
                this.exited = true;
                this.exitCode = event.exit_code ?? null;
                this.signal = event.signal ?? null;
            }
            else if (event.type === "error") {
                const e = event.error ?? {};
                const code = String(e.code ?? "internal");
                throw new (ERRORS[code] ?? HolmError)(String(e.message ?? "refused"), {
                    code,
                    hint: e.hint ?? null,
                    details: e.details ?? null,
                });
            }
        }
        return new Uint8Array(0);
    }
    /** Reads until the output holds `pattern`; answers everything read up to
     * and including it as text (the rest is kept for the next read). */
    async readUntil(pattern, timeoutMs = 30_000) {
        const deadline = Date.now() + timeoutMs;
        const decoder = new TextDecoder();
        let seen = "";
        while (!seen.includes(pattern)) {
            const left = deadline - Date.now();
            if (left <= 0) {
                throw new ERRORS.timeout(`the terminal did not print ${JSON.stringify(pattern)} in ${timeoutMs} ms; it printed ${JSON.stringify(seen.slice(-300))}`);
            }
            const chunk = await this.read(left);
            if (!chunk.length && this.exited) {
                throw new ERRORS.conflict(`the terminal ended before it printed ${JSON.stringify(pattern)}; it printed ${JSON.stringify(seen.slice(-300))}`);
            }
            seen += decoder.decode(chunk, { stream: true });
        }
        const end = seen.indexOf(pattern) + pattern.length;
        const rest = new TextEncoder().encode(seen.slice(end));
        const pending = new Uint8Array(rest.length + this.#pending.length);
        pending.set(rest);
        pending.set(this.#pending, rest.length);
        this.#pending = pending;
        return seen.slice(0, end);
    }
    /** Reads until the program ends; answers its exit code. */
    async wait(timeoutMs = 60_000) {
        const deadline = Date.now() + timeoutMs;
        while (!this.exited) {
            const left = deadline - Date.now();
            if (left <= 0)
                throw new ERRORS.timeout(`the terminal's program did not end in ${timeoutMs} ms`);
            this.#pending = new Uint8Array(0);
            await this.read(left);
        }
        return this.exitCode;
    }
    /** Closes the connection (the program gets a hang-up). */
    close() {
        this.#sock.close();
    }
}
