import type * as t from "./types.js";
/**
 * Move the pointer.
 *
 * @param x Horizontal position.
 * @param y Vertical position.
 */
export declare function move(x: number, y: number): t.MoveAction;
/**
 * Click: press and release, `count` times (2 is a double click).
 *
 * @param x Where; the pointer's position when left out.
 * @param y Where; the pointer's position when left out.
 * @param options.button Which button (default left).
 * @param options.count 1 to 3 (default 1).
 * @param options.modifiers Keys held during the click, such as `["ctrl"]` or `["shift","alt"]`.
 */
export declare function click(x?: number, y?: number, options?: {
    button?: t.Button;
    count?: number;
    modifiers?: string[];
}): t.ClickAction;
/**
 * Press a button and keep it down.
 *
 * @param x Where; the pointer's position when left out.
 * @param y Where; the pointer's position when left out.
 * @param options.button Which button (default left).
 */
export declare function mouse_down(x?: number, y?: number, options?: {
    button?: t.Button;
}): t.MouseDownAction;
/**
 * Release a button.
 *
 * @param x Where; the pointer's position when left out.
 * @param y Where; the pointer's position when left out.
 * @param options.button Which button (default left).
 */
export declare function mouse_up(x?: number, y?: number, options?: {
    button?: t.Button;
}): t.MouseUpAction;
/**
 * Press at the first point, move through the others, release at the last.
 *
 * @param path At least two points.
 * @param options.button Which button (default left).
 * @param options.modifiers Keys held during the drag.
 * @param options.step_ms How long to stay at each point, in milliseconds (default 0).
 */
export declare function drag(path: t.Point[], options?: {
    button?: t.Button;
    modifiers?: string[];
    step_ms?: number;
}): t.DragAction;
/**
 * Turn the wheel: `dy` clicks down (negative: up), `dx` clicks right
 * (negative: left).
 *
 * @param x Where; the pointer's position when left out.
 * @param y Where; the pointer's position when left out.
 * @param options.dx Horizontal clicks.
 * @param options.dy Vertical clicks.
 * @param options.modifiers Keys held while scrolling.
 */
export declare function scroll(x?: number, y?: number, options?: {
    dx?: number;
    dy?: number;
    modifiers?: string[];
}): t.ScrollAction;
/**
 * Type text: any Unicode, whatever the keyboard layout. `\n` is Return
 * and `\t` is Tab.
 *
 * @param text The text.
 */
export declare function type(text: string): t.TypeAction;
/**
 * Press a key or a chord such as `ctrl+shift+t`, and release it.
 *
 * @param key The chord; key names are in the key table, case-insensitive.
 * @param options.repeat How many times (default 1).
 */
export declare function key(key: string, options?: {
    repeat?: number;
}): t.KeyAction;
/**
 * Press a key or chord and keep it down.
 *
 * @param key The key or chord.
 */
export declare function key_down(key: string): t.KeyDownAction;
/**
 * Release a key or chord.
 *
 * @param key The key or chord.
 */
export declare function key_up(key: string): t.KeyUpAction;
/**
 * Hold a key or chord down for a time, then release it.
 *
 * @param key The key or chord.
 * @param duration_ms How long, in milliseconds (at most 60000).
 */
export declare function hold(key: string, duration_ms: number): t.HoldAction;
/**
 * Do nothing for a time.
 *
 * @param ms How long, in milliseconds (at most 60000).
 */
export declare function wait(ms: number): t.WaitAction;
/** The name of every action builder, as the grammar names the actions. */
export declare const ACTIONS: readonly ["move", "click", "mouse_down", "mouse_up", "drag", "scroll", "type", "key", "key_down", "key_up", "hold", "wait"];
