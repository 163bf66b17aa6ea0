// Anthropic's computer-use tool on a holm box: the same executor as the
// Python SDK's `holm.compat.anthropic` (same actions, same checks, same
// scaling), typed by shape so the package needs no `@anthropic-ai/sdk`.
//
//   const computer = new AnthropicComputer(box);
//   const response = await client.beta.messages.create({
//     model, max_tokens, betas: [ANTHROPIC_BETA], tools: [await computer.tool()], messages });
//   for (const block of response.content)
//     if (block.type === "tool_use") results.push(await computer.toolResult(block));
import * as a from "./actions.js";
import { HolmError } from "./holm-error.js";
import { pyRound } from "./openai-agents.js";
/** The tool version this module implements. */
export const ANTHROPIC_TOOL_TYPE = "computer_20251124";
/** The beta header value the tool version needs. */
export const ANTHROPIC_BETA = "computer-use-2025-11-24";
/** The largest long edge of an image the model takes, in pixels. */
export const ANTHROPIC_MAX_LONG_EDGE = 1568;
/** The most pixels of an image the model takes. */
export const ANTHROPIC_MAX_PIXELS = 1_150_000;
/** How long the screen must stay still before the screenshot after an action. */
export const ANTHROPIC_SETTLE = { quiet_ms: 150, timeout_ms: 2000 };
const CLICKS = {
    left_click: ["left", 1],
    right_click: ["right", 1],
    middle_click: ["middle", 1],
    double_click: ["left", 2],
    triple_click: ["left", 3],
};
const SCROLLS = { up: [0, -1], down: [0, 1], left: [-1, 0], right: [1, 0] };
/** A tool input the action cannot take (the model gets it as an error result). */
export class ToolError extends Error {
    name = "ToolError";
}
/**
 * The scale of every screenshot of a `width` x `height` screen: 1 when it
 * fits the limits, else the largest scale, to six decimals, whose rounded
 * image fits them (holm_mcp::scale::scale_for).
 */
export function scaleFor(width, height, maxLongEdge = ANTHROPIC_MAX_LONG_EDGE, maxPixels = ANTHROPIC_MAX_PIXELS) {
    const fits = (w, h) => Math.max(w, h) <= maxLongEdge && w * h <= maxPixels;
    if (width === 0 || height === 0 || fits(width, height))
        return 1;
    const ideal = Math.min(maxLongEdge / Math.max(width, height), Math.sqrt(maxPixels / (width * height)));
    for (let micro = Math.floor(ideal * 1e6); micro > 1; micro--) {
        const s = micro / 1e6;
        if (fits(...imageSize(width, height, s)))
            return s;
    }
    return 1e-6;
}
/** The size of the image the box makes of a screen at `scale`. */
export function imageSize(width, height, scale) {
    const edge = (n) => Math.min(n, Math.max(1, Math.floor(n * scale + 0.5)));
    return [edge(width), edge(height)];
}
const isInt = (v) => typeof v === "number" && Number.isInteger(v);
const show = (v) => JSON.stringify(v) ?? String(v);
/**
 * Anthropic's computer-use tool (`computer_20251124`, zoom on) on a holm
 * `Box`. Every action of the tool is taken: `screenshot`, `left_click`,
 * `right_click`, `middle_click`, `double_click`, `triple_click`,
 * `left_click_drag`, `left_mouse_down`, `left_mouse_up`, `mouse_move`,
 * `scroll`, `type`, `key`, `hold_key`, `wait`, `cursor_position` and `zoom`.
 * Clicks and scrolls hold the modifier keys given in `text` (or `key`).
 *
 * Scaling, as the tool requires: the model takes images of at most 1568
 * pixels on the long edge and about 1.15 megapixels, so screenshots are
 * downscaled by one scale per screen, the tool's display size is the
 * downscaled size, and the model's coordinates go to the box with that
 * scale as their coordinate space. `zoom` answers its region at full
 * resolution (made smaller only when larger than the limits). Each action
 * answers the screenshot after it, once the screen stops changing;
 * `cursor_position` answers text.
 */
export class AnthropicComputer {
    /** The box. */
    box;
    /** The screen's index. */
    screen;
    /** The model's longest image edge. */
    maxLongEdge;
    /** The model's most image pixels. */
    maxPixels;
    /** The X display number to tell the model, if any. */
    displayNumber;
    /** The screen's size, once read. */
    screenSize = null;
    /** The screenshots' scale (1: not downscaled). */
    scale = 1;
    /** The executor on `box`'s screen `screen`. */
    constructor(box, options = {}) {
        this.box = box;
        this.screen = options.screen ?? 0;
        this.maxLongEdge = options.maxLongEdge ?? ANTHROPIC_MAX_LONG_EDGE;
        this.maxPixels = options.maxPixels ?? ANTHROPIC_MAX_PIXELS;
        this.displayNumber = options.displayNumber;
    }
    /** The tool definition to send with the request. */
    async tool() {
        const [w, h] = await this.imageSize();
        const tool = {
            type: ANTHROPIC_TOOL_TYPE,
            name: "computer",
            display_width_px: w,
            display_height_px: h,
            enable_zoom: true,
        };
        if (this.displayNumber !== undefined)
            tool.display_number = this.displayNumber;
        return tool;
    }
    /** Runs one action (a `tool_use` block's input) and answers the tool
     * result's content: the screenshot after it, or the cursor as text. An
     * input the tool cannot take throws `ToolError`. */
    async run(input) {
        await this.imageSize();
        const plan = this.plan(input);
        if (plan.kind === "see")
            return image(await this.box.screenshot({ screen: this.screen, scale: this.scale }));
        if (plan.kind === "cursor") {
            const p = await this.box.cursor(this.screen);
            return [{ type: "text", text: `X=${pyRound(p.x * this.scale)},Y=${pyRound(p.y * this.scale)}` }];
        }
        if (plan.kind === "zoom") {
            const [, , w, h] = plan.region;
            const zoom = scaleFor(w, h, this.maxLongEdge, this.maxPixels);
            return image(await this.box.screenshot({ screen: this.screen, region: plan.region, scale: zoom }));
        }
        const shot = await this.box.actAndSee(plan.actions, {
            screen: this.screen,
            coordinate_space: { scale: this.scale },
            settle: ANTHROPIC_SETTLE,
            scale: this.scale,
        });
        return image(shot);
    }
    /** The `tool_result` block answering a `tool_use` block: its content, or
     * the refusal (a `ToolError` or a `HolmError`) with `is_error`. */
    async toolResult(toolUse) {
        try {
            return { type: "tool_result", tool_use_id: toolUse.id, content: await this.run(toolUse.input) };
        }
        catch (e) {
            if (e instanceof ToolError || e instanceof HolmError) {
                return { type: "tool_result", tool_use_id: toolUse.id, content: e.message, is_error: true };
            }
            throw e;
        }
    }
    async imageSize() {
        if (!this.screenSize) {
            const s = await this.box.screen(this.screen);
            this.screenSize = [s.width, s.height];
            this.scale = scaleFor(s.width, s.height, this.maxLongEdge, this.maxPixels);
        }
        return imageSize(...this.screenSize, this.scale);
    }
    point(value, name = "coordinate") {
        const [w, h] = imageSize(...this.screenSize, this.scale);
        if (!Array.isArray(value) || value.length !== 2)
            throw new ToolError(`${name} must be [x, y], not ${show(value)}`);
        if (!value.every((v) => isInt(v) && v >= 0)) {
            throw new ToolError(`${name} must hold non-negative integers, not ${show(value)}`);
        }
        const [x, y] = value;
        if (x >= w || y >= h)
            throw new ToolError(`${name} ${show(value)} is outside the screen (${w}x${h})`);
        return [x, y];
    }
    maybePoint(value) {
        return value === undefined || value === null ? [undefined, undefined] : this.point(value);
    }
    plan(input) {
        if (typeof input !== "object" || input === null || Array.isArray(input)) {
            throw new ToolError("the tool input must be an object");
        }
        const i = input;
        const action = i["action"];
        const coordinate = i["coordinate"];
        const withMods = typeof action === "string" && (action in CLICKS || action === "scroll");
        const modifiers = withMods ? mods(i["text"] || i["key"]) : undefined;
        if (action === "screenshot")
            return { kind: "see" };
        if (action === "cursor_position")
            return { kind: "cursor" };
        if (typeof action === "string" && action in CLICKS) {
            const [button, count] = CLICKS[action];
            const [x, y] = this.maybePoint(coordinate);
            return act(a.click(x, y, { button, count, ...(modifiers ? { modifiers } : {}) }));
        }
        if (action === "mouse_move")
            return act(a.move(...this.point(coordinate)));
        if (action === "left_click_drag") {
            const [sx, sy] = this.point(i["start_coordinate"], "start_coordinate");
            const [ex, ey] = this.point(coordinate);
            return act(a.drag([{ x: sx, y: sy }, { x: ex, y: ey }]));
        }
        if (action === "left_mouse_down" || action === "left_mouse_up") {
            const [x, y] = this.maybePoint(coordinate);
            const make = action === "left_mouse_down" ? a.mouse_down : a.mouse_up;
            return act(make(x, y, { button: "left" }));
        }
        if (action === "scroll") {
            const direction = i["scroll_direction"];
            if (typeof direction !== "string" || !(direction in SCROLLS)) {
                throw new ToolError(`scroll_direction must be up, down, left or right, not ${show(direction)}`);
            }
            const amount = "scroll_amount" in i ? i["scroll_amount"] : 1;
            if (!isInt(amount) || amount < 0) {
                throw new ToolError(`scroll_amount must be a non-negative integer, not ${show(amount)}`);
            }
            const [x, y] = this.maybePoint(coordinate);
            const [dx, dy] = SCROLLS[direction];
            return act(a.scroll(x, y, { dx: dx * amount, dy: dy * amount, ...(modifiers ? { modifiers } : {}) }));
        }
        if (action === "type")
            return act(a.type(text(i["text"], action)));
        if (action === "key")
            return act(a.key(text(i["text"], action)));
        if (action === "hold_key")
            return act(a.hold(text(i["text"], action), seconds(i["duration"])));
        if (action === "wait")
            return act(a.wait(seconds("duration" in i ? i["duration"] : 1)));
        if (action === "zoom")
            return { kind: "zoom", region: this.zoomRegion(i["region"]) };
        throw new ToolError(`unknown action ${show(action)} for ${ANTHROPIC_TOOL_TYPE}`);
    }
    /** A zoom's region, from the model's image pixels to screen pixels. */
    zoomRegion(region) {
        if (!Array.isArray(region) || region.length !== 4) {
            throw new ToolError(`region must be [x0, y0, x1, y1], not ${show(region)}`);
        }
        const [x0, y0] = this.point(region.slice(0, 2), "region");
        const [x1, y1] = region.slice(2);
        if (!isInt(x1) || !isInt(y1) || x1 <= x0 || y1 <= y0) {
            throw new ToolError(`region ${show(region)} must have x1 > x0 and y1 > y0`);
        }
        const [sw, sh] = this.screenSize;
        const left = pyRound(x0 / this.scale);
        const top = pyRound(y0 / this.scale);
        const right = Math.min(sw, pyRound(x1 / this.scale));
        const bottom = Math.min(sh, pyRound(y1 / this.scale));
        return [left, top, Math.max(1, right - left), Math.max(1, bottom - top)];
    }
}
function act(action) {
    return { kind: "act", actions: [action] };
}
function image(shot) {
    return [{ type: "image", source: { type: "base64", media_type: shot.mediaType, data: shot.base64() } }];
}
function mods(value) {
    if (value === undefined || value === null || value === "")
        return undefined;
    if (typeof value !== "string")
        throw new ToolError(`modifier keys must be text such as 'shift', not ${show(value)}`);
    return value.split("+").filter(Boolean);
}
function seconds(value, name = "duration") {
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
        throw new ToolError(`${name} must be a non-negative number of seconds, not ${show(value)}`);
    }
    if (value > 100)
        throw new ToolError(`${name} ${value} is too long (at most 100 seconds)`);
    return pyRound(value * 1000);
}
function text(value, action) {
    if (typeof value !== "string" || value === "")
        throw new ToolError(`${action} needs text`);
    return value;
}
