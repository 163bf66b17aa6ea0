// `Box`: one box through holmd: its lifecycle and lifetime, screens,
// screenshots, input (the whole grammar, and act-then-see), commands,
// background processes, files and the terminal. The page tools, bridge,
// viewers, recordings, timeline and the rest are in `box-tools.ts`.
import * as a from "./actions.js";
import { BoxTools } from "./box-tools.js";
import { defined, readScreenshot, screenshotQuery, toBytes } from "./core.js";
import { BoxNotRunningError } from "./errors.js";
import * as r from "./routes.js";
import { Terminal } from "./terminal.js";
/** Throws `BoxNotRunningError` when a box that was waited for does not run. */
export function checkRunning(info) {
    if (info.state !== "running") {
        throw new BoxNotRunningError(`box ${info.id} is ${info.state}, not running: ${info.reason ?? "no reason given"}`, {
            hint: `GET /v1/boxes/${info.id} shows it; remove it when done`,
            details: { kind: "box_not_running", box: info },
        });
    }
}
function commandBody(command, fields) {
    const head = typeof command === "string" ? { command } : { argv: [...command] };
    return { ...head, ...defined(fields) };
}
/**
 * One box, through holmd. Made by `Holm.create`, `get`, `box` or `boxes`;
 * `info` is the box as last seen (`refresh` reads it again).
 *
 * Screens are numbered from 0; every desktop method takes `screen`.
 */
export class Box extends BoxTools {
    /** The box as last seen (BoxInfo). */
    info;
    /** A box of a client's transport (use `Holm.box` rather). */
    constructor(transport, info) {
        super(transport, info.id);
        this.info = info;
    }
    /** The box's id. */
    get id() {
        return this.info.id;
    }
    /** The box's state when last seen. */
    get state() {
        return this.info.state;
    }
    #set(info) {
        this.info = info;
        return info;
    }
    /** Reads the box again; with `waitFor`, once it is in that state (or at
     * `timeoutSecs`, as it is then). */
    async refresh(options = {}) {
        const secs = options.timeoutSecs ?? 60;
        const query = options.waitFor ? { wait_for: options.waitFor, timeout_secs: secs } : {};
        const timeoutMs = options.waitFor ? (secs + 30) * 1000 : undefined;
        return this.#set(await this.transport.json(r.GET_V1_BOXES_ID, this.p, { query, timeoutMs }));
    }
    /** Waits (on the server) until the box is in `state`, at most
     * `timeoutSecs`; answers the box as it is then. */
    async waitFor(state, timeoutSecs = 60) {
        return this.refresh({ waitFor: state, timeoutSecs });
    }
    /** Stops the box, keeping its files. */
    async stop() {
        return this.#set(await this.transport.json(r.POST_V1_BOXES_ID_STOP, this.p));
    }
    /** Starts a stopped box: a new desktop on new ports; with `wait` (the
     * default), once it runs. */
    async start(options = {}) {
        const { wait = true, timeoutSecs = 600 } = options;
        const query = wait ? { wait_for: "running", timeout_secs: timeoutSecs } : {};
        const timeoutMs = wait ? (timeoutSecs + 30) * 1000 : undefined;
        const info = this.#set(await this.transport.json(r.POST_V1_BOXES_ID_START, this.p, { query, timeoutMs }));
        if (wait)
            checkRunning(info);
        return info;
    }
    /** Pauses the box, keeping its memory. */
    async pause() {
        return this.#set(await this.transport.json(r.POST_V1_BOXES_ID_PAUSE, this.p));
    }
    /** Resumes a paused box where it was. */
    async resume() {
        return this.#set(await this.transport.json(r.POST_V1_BOXES_ID_RESUME, this.p));
    }
    /** A new box with a copy of this box's files, on the same runtime; with
     * `wait` (the default), once it runs. */
    async fork(request = {}, options = {}) {
        const { wait = true, timeoutSecs = 600, idempotencyKey } = options;
        const info = await this.transport.json(r.POST_V1_BOXES_ID_FORK, this.p, {
            query: wait ? { wait_for: "running", timeout_secs: timeoutSecs } : {},
            json: request,
            headers: idempotencyKey ? { "idempotency-key": idempotencyKey } : undefined,
            timeoutMs: wait ? (timeoutSecs + 30) * 1000 : undefined,
        });
        if (wait)
            checkRunning(info);
        return new Box(this.transport, info);
    }
    /** Moves the end of the box's lifetime `bySecs` later (up to its runtime's maximum). */
    async extend(bySecs) {
        return this.#set(await this.transport.json(r.POST_V1_BOXES_ID_EXTEND, this.p, { json: { by_secs: bySecs } }));
    }
    /** Removes the box. */
    async remove() {
        return this.#set(await this.transport.json(r.DELETE_V1_BOXES_ID, this.p));
    }
    /** The stages of the box's latest making or start, then each as it comes,
     * until it runs, fails or `timeoutSecs` pass; the box last. */
    async *progress(options = {}) {
        const query = { timeout_secs: options.timeoutSecs ?? 600 };
        yield* this.transport.ndjson(r.GET_V1_BOXES_ID_PROGRESS, this.p, { query });
    }
    /** The guest's version, display profile, screens and capabilities. */
    async guestInfo() {
        return this.transport.json(r.GET_V1_BOXES_ID_INFO, this.p);
    }
    /** The box's screens. */
    async screens() {
        return (await this.transport.json(r.GET_V1_BOXES_ID_SCREENS, this.p)).data;
    }
    /** One screen: its size and whether it is ready. */
    async screen(screen = 0) {
        return this.transport.json(r.GET_V1_BOXES_ID_SCREENS_SCREEN, { ...this.p, screen });
    }
    /** Where the pointer is. */
    async cursor(screen = 0) {
        return this.transport.json(r.GET_V1_BOXES_ID_SCREENS_SCREEN_CURSOR, { ...this.p, screen });
    }
    /** A screenshot as bytes with what its headers say (size, scale, region,
     * frame hash). `max_width`, `max_height` and `scale` downscale. */
    async screenshot(options = {}) {
        const { screen = 0, ...rest } = options;
        const params = { ...this.p, screen };
        const { response, data, url } = await this.transport.full(r.GET_V1_BOXES_ID_SCREENS_SCREEN_SCREENSHOT, params, {
            query: screenshotQuery(rest),
        });
        return readScreenshot(response.headers, data, url);
    }
    /** A screenshot, or null when the screen still shows `frame` (a
     * screenshot's `frame`): the server answers 304 without an image. */
    async screenshotIfChanged(frame, options = {}) {
        const { screen = 0, ...rest } = options;
        const { response, data, url } = await this.transport.full(r.GET_V1_BOXES_ID_SCREENS_SCREEN_SCREENSHOT, { ...this.p, screen }, { query: screenshotQuery(rest), headers: { "if-none-match": `"${frame}"` }, accept: [304] });
        return response.status === 304 ? null : readScreenshot(response.headers, data, url);
    }
    /** Runs input actions in order (build them with `actions`). */
    async input(actions, options = {}) {
        const { screen = 0, coordinate_space, settle } = options;
        const body = defined({ actions: [...actions], coordinate_space, settle });
        return this.transport.json(r.POST_V1_BOXES_ID_SCREENS_SCREEN_INPUT, { ...this.p, screen }, { json: body });
    }
    /** Runs input actions, waits as `settle` says, and answers the screenshot
     * after them: act-then-see in one call. */
    async actAndSee(actions, options = {}) {
        const { screen = 0, coordinate_space, settle, ...shot } = options;
        const body = defined({ actions: [...actions], coordinate_space, settle, screenshot: screenshotQuery(shot) });
        const { response, data, url } = await this.transport.full(r.POST_V1_BOXES_ID_SCREENS_SCREEN_INPUT, { ...this.p, screen }, { json: body });
        return readScreenshot(response.headers, data, url);
    }
    /** Clicks at (x, y) (where the pointer is when left out). */
    async click(x, y, options = {}) {
        const { screen, ...rest } = options;
        return this.input([a.click(x, y, rest)], { screen });
    }
    /** Double-clicks with the left button. */
    async doubleClick(x, y, options = {}) {
        return this.input([a.click(x, y, { count: 2 })], options);
    }
    /** Clicks with the right button. */
    async rightClick(x, y, options = {}) {
        return this.input([a.click(x, y, { button: "right" })], options);
    }
    /** Moves the pointer. */
    async move(x, y, options = {}) {
        return this.input([a.move(x, y)], options);
    }
    /** Turns the wheel `dy` clicks down (negative: up) and `dx` right. */
    async scroll(x, y, options = {}) {
        const { screen, ...rest } = options;
        return this.input([a.scroll(x, y, rest)], { screen });
    }
    /** Presses at the first point, moves through the others, releases at the last. */
    async drag(path, options = {}) {
        const points = path.map((p) => ("x" in p ? p : { x: p[0], y: p[1] }));
        return this.input([a.drag(points, { button: options.button })], { screen: options.screen });
    }
    /** Types text: any Unicode; `\n` is Return. */
    async type(text, options = {}) {
        return this.input([a.type(text)], options);
    }
    /** Presses a key or chord such as `ctrl+l` (names in docs/keys.md). */
    async key(chord, options = {}) {
        return this.input([a.key(chord, { repeat: options.repeat })], { screen: options.screen });
    }
    /** Runs a command and waits for it: a string runs with `bash -c`, an array
     * without a shell. A timeout is a result with `timed_out`. */
    async run(command, options = {}) {
        const timeoutMs = Math.max(this.transport.config.timeoutMs, (options.timeout_ms ?? 60_000) + 30_000);
        return this.transport.json(r.POST_V1_BOXES_ID_COMMANDS_RUN, this.p, {
            json: commandBody(command, { ...options }),
            timeoutMs,
        });
    }
    /** Runs a command and yields its events as they happen: start, stdout and
     * stderr chunks, then exit. */
    async *stream(command, options = {}) {
        yield* this.transport.ndjson(r.POST_V1_BOXES_ID_COMMANDS_STREAM, this.p, {
            json: commandBody(command, { ...options }),
        });
    }
    /** Starts a background process (a string with `bash -c`, an array without a shell). */
    async spawn(command, options = {}) {
        return this.transport.json(r.POST_V1_BOXES_ID_PROCESSES, this.p, { json: commandBody(command, { ...options }) });
    }
    /** The background processes. */
    async processes() {
        return (await this.transport.json(r.GET_V1_BOXES_ID_PROCESSES, this.p)).data;
    }
    /** One background process. */
    async process(process) {
        return this.transport.json(r.GET_V1_BOXES_ID_PROCESSES_PROCESS, { ...this.p, process });
    }
    /** A process's output events after `cursor`, waiting up to `wait_ms` for a
     * first one; the page's `next_cursor` continues. */
    async processOutput(process, query = {}) {
        const timeoutMs = this.transport.config.timeoutMs + (query.wait_ms ?? 0);
        return this.transport.json(r.GET_V1_BOXES_ID_PROCESSES_PROCESS_OUTPUT, { ...this.p, process }, { query, timeoutMs });
    }
    /** Yields a process's output events from `cursor` as they come, until it
     * ends (its exit event last). */
    async *follow(process, options = {}) {
        const query = { cursor: options.cursor ?? 0, follow: true };
        yield* this.transport.ndjson(r.GET_V1_BOXES_ID_PROCESSES_PROCESS_OUTPUT, { ...this.p, process }, { query });
    }
    /** Writes to a process's standard input; `eof` closes it after. */
    async writeStdin(process, data, options = {}) {
        await this.transport.json(r.POST_V1_BOXES_ID_PROCESSES_PROCESS_STDIN, { ...this.p, process }, {
            query: { eof: options.eof ?? false },
            body: toBytes(data),
        });
    }
    /** Sends a signal, by name (`TERM`, `SIGINT`) or number. */
    async signal(process, signal) {
        await this.transport.json(r.POST_V1_BOXES_ID_PROCESSES_PROCESS_SIGNAL, { ...this.p, process }, { json: { signal } });
    }
    /** Kills a background process if it runs, and forgets it. */
    async kill(process) {
        await this.transport.json(r.DELETE_V1_BOXES_ID_PROCESSES_PROCESS, { ...this.p, process });
    }
    /** A file's bytes. */
    async readFile(path) {
        return this.transport.data(r.GET_V1_BOXES_ID_FILES_CONTENT, this.p, { query: { path } });
    }
    /** A file's text (UTF-8). */
    async readText(path) {
        return new TextDecoder().decode(await this.readFile(path));
    }
    /** Writes a file atomically, making its parents; `mode` in octal such as `"755"`. */
    async writeFile(path, data, options = {}) {
        return this.transport.json(r.PUT_V1_BOXES_ID_FILES_CONTENT, this.p, {
            query: { path, mode: options.mode },
            body: toBytes(data),
        });
    }
    /** A directory's entries, `depth` levels down, page after page. */
    async listFiles(path, options = {}) {
        const out = [];
        let cursor;
        for (;;) {
            const page = await this.transport.json(r.GET_V1_BOXES_ID_FILES_LIST, this.p, {
                query: { path, depth: options.depth, cursor },
            });
            out.push(...page.data);
            cursor = page.next_cursor ?? undefined;
            if (!cursor)
                return out;
        }
    }
    /** Describes a path; `exists` is false when there is none. */
    async stat(path) {
        return this.transport.json(r.GET_V1_BOXES_ID_FILES_STAT, this.p, { query: { path } });
    }
    /** Makes a directory (and its parents). */
    async mkdir(path, options = {}) {
        return this.transport.json(r.POST_V1_BOXES_ID_FILES_MKDIR, this.p, { json: { path, parents: options.parents ?? true } });
    }
    /** Removes a path; `recursive` for a directory with contents. */
    async removeFile(path, options = {}) {
        await this.transport.json(r.POST_V1_BOXES_ID_FILES_REMOVE, this.p, {
            json: { path, recursive: options.recursive ?? false },
        });
    }
    /** Renames a path. */
    async rename(from, to, options = {}) {
        return this.transport.json(r.POST_V1_BOXES_ID_FILES_RENAME, this.p, {
            json: { from, to, overwrite: options.overwrite ?? false },
        });
    }
    /** Opens a terminal: a real pty in the box over a WebSocket (a login shell
     * unless `command` says otherwise). */
    async terminal(query = {}) {
        return Terminal.open(this.transport, r.GET_V1_BOXES_ID_TERMINAL, this.p, query);
    }
}
