import type { Box } from "./box.js";
import type * as t from "./types.js";
/** The tool version this module implements. */
export declare const ANTHROPIC_TOOL_TYPE = "computer_20251124";
/** The beta header value the tool version needs. */
export declare const ANTHROPIC_BETA = "computer-use-2025-11-24";
/** The largest long edge of an image the model takes, in pixels. */
export declare const ANTHROPIC_MAX_LONG_EDGE = 1568;
/** The most pixels of an image the model takes. */
export declare const ANTHROPIC_MAX_PIXELS = 1150000;
/** How long the screen must stay still before the screenshot after an action. */
export declare const ANTHROPIC_SETTLE: t.Settle;
/** A tool input the action cannot take (the model gets it as an error result). */
export declare class ToolError extends Error {
    name: string;
}
/** The tool definition sent with a request. */
export interface AnthropicComputerTool {
    type: typeof ANTHROPIC_TOOL_TYPE;
    name: "computer";
    display_width_px: number;
    display_height_px: number;
    enable_zoom: true;
    display_number?: number;
}
/** A block of a tool result's content: an image or text. */
export type AnthropicResultBlock = {
    type: "image";
    source: {
        type: "base64";
        media_type: "image/png" | "image/jpeg" | "image/webp";
        data: string;
    };
} | {
    type: "text";
    text: string;
};
/** The `tool_result` block answering a `tool_use` block. */
export interface AnthropicToolResult {
    type: "tool_result";
    tool_use_id: string;
    content: AnthropicResultBlock[] | string;
    is_error?: true;
}
/**
 * The scale of every screenshot of a `width` x `height` screen: 1 when it
 * fits the limits, else the largest scale, to six decimals, whose rounded
 * image fits them (holm_mcp::scale::scale_for).
 */
export declare function scaleFor(width: number, height: number, maxLongEdge?: number, maxPixels?: number): number;
/** The size of the image the box makes of a screen at `scale`. */
export declare function imageSize(width: number, height: number, scale: number): [number, number];
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
export declare class AnthropicComputer {
    /** The box. */
    readonly box: Box;
    /** The screen's index. */
    readonly screen: number;
    /** The model's longest image edge. */
    readonly maxLongEdge: number;
    /** The model's most image pixels. */
    readonly maxPixels: number;
    /** The X display number to tell the model, if any. */
    readonly displayNumber?: number;
    /** The screen's size, once read. */
    screenSize: [number, number] | null;
    /** The screenshots' scale (1: not downscaled). */
    scale: number;
    /** The executor on `box`'s screen `screen`. */
    constructor(box: Box, options?: {
        screen?: number;
        maxLongEdge?: number;
        maxPixels?: number;
        displayNumber?: number;
    });
    /** The tool definition to send with the request. */
    tool(): Promise<AnthropicComputerTool>;
    /** Runs one action (a `tool_use` block's input) and answers the tool
     * result's content: the screenshot after it, or the cursor as text. An
     * input the tool cannot take throws `ToolError`. */
    run(input: unknown): Promise<AnthropicResultBlock[]>;
    /** The `tool_result` block answering a `tool_use` block: its content, or
     * the refusal (a `ToolError` or a `HolmError`) with `is_error`. */
    toolResult(toolUse: {
        id: string;
        input: unknown;
    }): Promise<AnthropicToolResult>;
    private imageSize;
    private point;
    private maybePoint;
    private plan;
    /** A zoom's region, from the model's image pixels to screen pixels. */
    private zoomRegion;
}
