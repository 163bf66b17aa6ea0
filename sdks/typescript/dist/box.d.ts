import { BoxTools } from "./box-tools.js";
import { type Screenshot, type ScreenshotOptions } from "./core.js";
import { Terminal } from "./terminal.js";
import type { Transport } from "./transport.js";
import type * as t from "./types.js";
/** A point: `[x, y]` or a Point. */
export type PointLike = readonly [number, number] | t.Point;
/** Where input goes and how points and waiting are read. */
export interface InputOptions {
    /** The screen, from 0 (default 0). */
    screen?: number;
    /** Maps points taken from a downscaled or cropped screenshot. */
    coordinate_space?: t.CoordinateSpace;
    /** Waits until the screen stops changing. */
    settle?: t.Settle;
}
/** How a command runs. */
export interface CommandOptions {
    /** The working directory. */
    cwd?: string;
    /** More environment variables. */
    env?: Record<string, string>;
    /** Text fed to its standard input. */
    stdin?: string;
    /** Its timeout in milliseconds (default 60 000): a timeout is a result with `timed_out`. */
    timeout_ms?: number;
    /** The most bytes of output kept. */
    output_limit?: number;
}
/** Throws `BoxNotRunningError` when a box that was waited for does not run. */
export declare function checkRunning(info: t.BoxInfo): void;
/**
 * One box, through holmd. Made by `Holm.create`, `get`, `box` or `boxes`;
 * `info` is the box as last seen (`refresh` reads it again).
 *
 * Screens are numbered from 0; every desktop method takes `screen`.
 */
export declare class Box extends BoxTools {
    #private;
    /** The box as last seen (BoxInfo). */
    info: t.BoxInfo;
    /** A box of a client's transport (use `Holm.box` rather). */
    constructor(transport: Transport, info: t.BoxInfo);
    /** The box's id. */
    get id(): string;
    /** The box's state when last seen. */
    get state(): t.BoxState | undefined;
    /** Reads the box again; with `waitFor`, once it is in that state (or at
     * `timeoutSecs`, as it is then). */
    refresh(options?: {
        waitFor?: t.BoxState;
        timeoutSecs?: number;
    }): Promise<t.BoxInfo>;
    /** Waits (on the server) until the box is in `state`, at most
     * `timeoutSecs`; answers the box as it is then. */
    waitFor(state: t.BoxState, timeoutSecs?: number): Promise<t.BoxInfo>;
    /** Stops the box, keeping its files. */
    stop(): Promise<t.BoxInfo>;
    /** Starts a stopped box: a new desktop on new ports; with `wait` (the
     * default), once it runs. */
    start(options?: {
        wait?: boolean;
        timeoutSecs?: number;
    }): Promise<t.BoxInfo>;
    /** Pauses the box, keeping its memory. */
    pause(): Promise<t.BoxInfo>;
    /** Resumes a paused box where it was. */
    resume(): Promise<t.BoxInfo>;
    /** A new box with a copy of this box's files, on the same runtime; with
     * `wait` (the default), once it runs. */
    fork(request?: t.ForkBox, options?: {
        wait?: boolean;
        timeoutSecs?: number;
        idempotencyKey?: string;
    }): Promise<Box>;
    /** Moves the end of the box's lifetime `bySecs` later (up to its runtime's maximum). */
    extend(bySecs: number): Promise<t.BoxInfo>;
    /** Removes the box. */
    remove(): Promise<t.BoxInfo>;
    /** The stages of the box's latest making or start, then each as it comes,
     * until it runs, fails or `timeoutSecs` pass; the box last. */
    progress(options?: {
        timeoutSecs?: number;
    }): AsyncGenerator<t.BoxEvent>;
    /** The guest's version, display profile, screens and capabilities. */
    guestInfo(): Promise<t.Info>;
    /** The box's screens. */
    screens(): Promise<t.Screen[]>;
    /** One screen: its size and whether it is ready. */
    screen(screen?: number): Promise<t.Screen>;
    /** Where the pointer is. */
    cursor(screen?: number): Promise<t.CursorPosition>;
    /** A screenshot as bytes with what its headers say (size, scale, region,
     * frame hash). `max_width`, `max_height` and `scale` downscale. */
    screenshot(options?: ScreenshotOptions & {
        screen?: number;
    }): Promise<Screenshot>;
    /** A screenshot, or null when the screen still shows `frame` (a
     * screenshot's `frame`): the server answers 304 without an image. */
    screenshotIfChanged(frame: string, options?: ScreenshotOptions & {
        screen?: number;
    }): Promise<Screenshot | null>;
    /** Runs input actions in order (build them with `actions`). */
    input(actions: readonly t.Action[], options?: InputOptions): Promise<t.InputResult>;
    /** Runs input actions, waits as `settle` says, and answers the screenshot
     * after them: act-then-see in one call. */
    actAndSee(actions: readonly t.Action[], options?: InputOptions & ScreenshotOptions): Promise<Screenshot>;
    /** Clicks at (x, y) (where the pointer is when left out). */
    click(x?: number, y?: number, options?: {
        button?: t.Button;
        count?: number;
        modifiers?: string[];
        screen?: number;
    }): Promise<t.InputResult>;
    /** Double-clicks with the left button. */
    doubleClick(x?: number, y?: number, options?: {
        screen?: number;
    }): Promise<t.InputResult>;
    /** Clicks with the right button. */
    rightClick(x?: number, y?: number, options?: {
        screen?: number;
    }): Promise<t.InputResult>;
    /** Moves the pointer. */
    move(x: number, y: number, options?: {
        screen?: number;
    }): Promise<t.InputResult>;
    /** Turns the wheel `dy` clicks down (negative: up) and `dx` right. */
    scroll(x?: number, y?: number, options?: {
        dx?: number;
        dy?: number;
        modifiers?: string[];
        screen?: number;
    }): Promise<t.InputResult>;
    /** Presses at the first point, moves through the others, releases at the last. */
    drag(path: readonly PointLike[], options?: {
        button?: t.Button;
        screen?: number;
    }): Promise<t.InputResult>;
    /** Types text: any Unicode; `\n` is Return. */
    type(text: string, options?: {
        screen?: number;
    }): Promise<t.InputResult>;
    /** Presses a key or chord such as `ctrl+l` (names in docs/keys.md). */
    key(chord: string, options?: {
        repeat?: number;
        screen?: number;
    }): Promise<t.InputResult>;
    /** Runs a command and waits for it: a string runs with `bash -c`, an array
     * without a shell. A timeout is a result with `timed_out`. */
    run(command: string | readonly string[], options?: CommandOptions): Promise<t.CommandResult>;
    /** Runs a command and yields its events as they happen: start, stdout and
     * stderr chunks, then exit. */
    stream(command: string | readonly string[], options?: CommandOptions): AsyncGenerator<t.CommandEvent>;
    /** Starts a background process (a string with `bash -c`, an array without a shell). */
    spawn(command: string | readonly string[], options?: {
        cwd?: string;
        env?: Record<string, string>;
        tag?: string;
    }): Promise<t.ProcessInfo>;
    /** The background processes. */
    processes(): Promise<t.ProcessInfo[]>;
    /** One background process. */
    process(process: string): Promise<t.ProcessInfo>;
    /** A process's output events after `cursor`, waiting up to `wait_ms` for a
     * first one; the page's `next_cursor` continues. */
    processOutput(process: string, query?: {
        cursor?: number;
        wait_ms?: number;
    }): Promise<t.OutputPage>;
    /** Yields a process's output events from `cursor` as they come, until it
     * ends (its exit event last). */
    follow(process: string, options?: {
        cursor?: number;
    }): AsyncGenerator<t.OutputEvent>;
    /** Writes to a process's standard input; `eof` closes it after. */
    writeStdin(process: string, data: Uint8Array | string, options?: {
        eof?: boolean;
    }): Promise<void>;
    /** Sends a signal, by name (`TERM`, `SIGINT`) or number. */
    signal(process: string, signal: string | number): Promise<void>;
    /** Kills a background process if it runs, and forgets it. */
    kill(process: string): Promise<void>;
    /** A file's bytes. */
    readFile(path: string): Promise<Uint8Array>;
    /** A file's text (UTF-8). */
    readText(path: string): Promise<string>;
    /** Writes a file atomically, making its parents; `mode` in octal such as `"755"`. */
    writeFile(path: string, data: Uint8Array | string, options?: {
        mode?: string;
    }): Promise<t.FileInfo>;
    /** A directory's entries, `depth` levels down, page after page. */
    listFiles(path: string, options?: {
        depth?: number;
    }): Promise<t.FileInfo[]>;
    /** Describes a path; `exists` is false when there is none. */
    stat(path: string): Promise<t.FileStat>;
    /** Makes a directory (and its parents). */
    mkdir(path: string, options?: {
        parents?: boolean;
    }): Promise<t.FileInfo>;
    /** Removes a path; `recursive` for a directory with contents. */
    removeFile(path: string, options?: {
        recursive?: boolean;
    }): Promise<void>;
    /** Renames a path. */
    rename(from: string, to: string, options?: {
        overwrite?: boolean;
    }): Promise<t.FileInfo>;
    /** Opens a terminal: a real pty in the box over a WebSocket (a login shell
     * unless `command` says otherwise). */
    terminal(query?: {
        cols?: number;
        rows?: number;
        command?: string;
        cwd?: string;
        term?: string;
    }): Promise<Terminal>;
}
