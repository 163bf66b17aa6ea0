import type { Box } from "./box.js";
import type * as t from "./types.js";
/** The Agents SDK's buttons, as the box names them ("wheel" is the middle one). */
export declare const AGENT_BUTTONS: Record<string, t.Button>;
/** `wait`: until the screen is still for this long, at most this long. */
export declare const AGENT_WAIT_SETTLE: t.Settle;
/** Wheel clicks for a scroll of `pixels` (sign kept; at least one when
 * `pixels` is not 0): one click per `perClick` pixels. */
export declare function wheelClicks(pixels: number, perClick: number): number;
/** Rounds half to even, as Python's `round` does (so both SDKs agree). */
export declare function pyRound(v: number): number;
/**
 * The OpenAI Agents SDK's `Computer` on a holm `Box` (one of its screens).
 * Coordinates are screen pixels, as the SDK's are. Scroll amounts come in
 * pixels and the box scrolls in wheel clicks: one click per
 * `pixelsPerClick` (default 100), at least one. `wait` waits until the
 * screen stops changing (bounded at two seconds). `dimensions` is read
 * when a run starts (`initRun`), or at once by `HolmComputer.open`.
 */
export declare class HolmComputer {
    /** The box. */
    readonly box: Box;
    /** The screen's index. */
    readonly screen: number;
    /** Pixels of a scroll per wheel click. */
    readonly pixelsPerClick: number;
    /** What the SDK tells the model the computer is. */
    readonly environment: "ubuntu";
    /** The screen's size (width, height), once read. */
    dimensions?: [number, number];
    /** The computer on `box`'s screen `screen`; `size` skips reading it. */
    constructor(box: Box, options?: {
        screen?: number;
        pixelsPerClick?: number;
        size?: [number, number];
    });
    /** The computer, with the screen's size read (for `dimensions`). */
    static open(box: Box, options?: {
        screen?: number;
        pixelsPerClick?: number;
    }): Promise<HolmComputer>;
    /** Reads the screen's size; the SDK's runner calls it as a run starts. */
    initRun(): Promise<void>;
    /** A PNG screenshot of the screen, in base64. */
    screenshot(): Promise<string>;
    /** Clicks `button` at (x, y). */
    click(x: number, y: number, button?: string): Promise<void>;
    /** Double-clicks at (x, y). */
    doubleClick(x: number, y: number): Promise<void>;
    /** Scrolls at (x, y) by pixels (as wheel clicks). */
    scroll(x: number, y: number, scrollX: number, scrollY: number): Promise<void>;
    /** Types text. */
    type(text: string): Promise<void>;
    /** Waits until the screen stops changing (at most two seconds). */
    wait(): Promise<void>;
    /** Moves the pointer to (x, y). */
    move(x: number, y: number): Promise<void>;
    /** Presses the keys together, as one chord (`["ctrl", "c"]`: `ctrl+c`). */
    keypress(keys: string[]): Promise<void>;
    /** Drags the left button along the path of [x, y] points. */
    drag(path: [number, number][]): Promise<void>;
    private act;
}
