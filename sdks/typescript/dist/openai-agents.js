// The OpenAI Agents SDK's computer on a holm box.
//
//   import { Agent, computerTool } from "@openai/agents";
//   import { HolmComputer } from "@holm/sdk";
//
//   const agent = new Agent({ name: "desk", tools: [computerTool({ computer: new HolmComputer(box) })] });
//
// `HolmComputer` implements the SDK's `Computer` interface by its shape
// (structural typing): this package does not import `@openai/agents`, so it
// keeps no runtime dependency and users of the rest of the SDK need not
// install it. It mirrors the Python SDK's `holm.compat.openai_agents`.
import * as a from "./actions.js";
/** The Agents SDK's buttons, as the box names them ("wheel" is the middle one). */
export const AGENT_BUTTONS = {
    left: "left",
    right: "right",
    wheel: "middle",
    back: "back",
    forward: "forward",
};
/** `wait`: until the screen is still for this long, at most this long. */
export const AGENT_WAIT_SETTLE = { quiet_ms: 300, timeout_ms: 2000 };
/** Wheel clicks for a scroll of `pixels` (sign kept; at least one when
 * `pixels` is not 0): one click per `perClick` pixels. */
export function wheelClicks(pixels, perClick) {
    if (pixels === 0)
        return 0;
    const n = Math.max(1, pyRound(Math.abs(pixels) / perClick));
    return pixels > 0 ? n : -n;
}
/** Rounds half to even, as Python's `round` does (so both SDKs agree). */
export function pyRound(v) {
    const f = Math.floor(v);
    const d = v - f;
    if (d > 0.5)
        return f + 1;
    if (d < 0.5)
        return f;
    return f % 2 === 0 ? f : f + 1;
}
/**
 * The OpenAI Agents SDK's `Computer` on a holm `Box` (one of its screens).
 * Coordinates are screen pixels, as the SDK's are. Scroll amounts come in
 * pixels and the box scrolls in wheel clicks: one click per
 * `pixelsPerClick` (default 100), at least one. `wait` waits until the
 * screen stops changing (bounded at two seconds). `dimensions` is read
 * when a run starts (`initRun`), or at once by `HolmComputer.open`.
 */
export class HolmComputer {
    /** The box. */
    box;
    /** The screen's index. */
    screen;
    /** Pixels of a scroll per wheel click. */
    pixelsPerClick;
    /** What the SDK tells the model the computer is. */
    environment = "ubuntu";
    /** The screen's size (width, height), once read. */
    dimensions;
    /** The computer on `box`'s screen `screen`; `size` skips reading it. */
    constructor(box, options = {}) {
        this.box = box;
        this.screen = options.screen ?? 0;
        this.pixelsPerClick = options.pixelsPerClick ?? 100;
        this.dimensions = options.size;
    }
    /** The computer, with the screen's size read (for `dimensions`). */
    static async open(box, options = {}) {
        const s = await box.screen(options.screen ?? 0);
        return new HolmComputer(box, { ...options, size: [s.width, s.height] });
    }
    /** Reads the screen's size; the SDK's runner calls it as a run starts. */
    async initRun() {
        if (!this.dimensions) {
            const s = await this.box.screen(this.screen);
            this.dimensions = [s.width, s.height];
        }
    }
    /** A PNG screenshot of the screen, in base64. */
    async screenshot() {
        return (await this.box.screenshot({ screen: this.screen })).base64();
    }
    /** Clicks `button` at (x, y). */
    async click(x, y, button = "left") {
        await this.act([a.click(x, y, { button: AGENT_BUTTONS[button] ?? button })]);
    }
    /** Double-clicks at (x, y). */
    async doubleClick(x, y) {
        await this.act([a.click(x, y, { count: 2 })]);
    }
    /** Scrolls at (x, y) by pixels (as wheel clicks). */
    async scroll(x, y, scrollX, scrollY) {
        const dx = wheelClicks(scrollX, this.pixelsPerClick);
        const dy = wheelClicks(scrollY, this.pixelsPerClick);
        await this.act([a.scroll(x, y, { dx, dy })]);
    }
    /** Types text. */
    async type(text) {
        await this.act([a.type(text)]);
    }
    /** Waits until the screen stops changing (at most two seconds). */
    async wait() {
        await this.box.input([a.wait(0)], { screen: this.screen, settle: AGENT_WAIT_SETTLE });
    }
    /** Moves the pointer to (x, y). */
    async move(x, y) {
        await this.act([a.move(x, y)]);
    }
    /** Presses the keys together, as one chord (`["ctrl", "c"]`: `ctrl+c`). */
    async keypress(keys) {
        await this.act([a.key(keys.join("+"))]);
    }
    /** Drags the left button along the path of [x, y] points. */
    async drag(path) {
        await this.act([a.drag(path.map(([x, y]) => ({ x, y })))]);
    }
    async act(actions) {
        await this.box.input(actions, { screen: this.screen });
    }
}
