import { BoxCalls } from "./box-calls.js";
import { type Screenshot } from "./core.js";
import type { Transport } from "./transport.js";
import type * as t from "./types.js";
/** Playwright's `chromium` (or anything with its `connectOverCDP`). */
export interface CdpConnector<B> {
    connectOverCDP(endpointURL: string, options?: {
        headers?: Record<string, string>;
    } & Record<string, unknown>): Promise<B>;
}
/** Page tools, bridge, viewers, records and desk tools of a box. */
export declare abstract class BoxTools extends BoxCalls {
    protected constructor(transport: Transport, id: string);
    /** The browser's tabs. */
    tabs(): Promise<t.Tab[]>;
    /** Opens a tab, makes it current, and waits for its page to load. */
    openTab(url?: string, options?: Omit<t.OpenTab, "url">): Promise<t.Tab>;
    /** Closes a tab. */
    closeTab(tab: string): Promise<void>;
    /** Brings a tab to the front and makes it current. */
    activateTab(tab: string): Promise<void>;
    /** Loads a URL and waits for load (or DOMContentLoaded, or commit). */
    navigate(url: string, options?: Omit<t.NavigateRequest, "url">): Promise<t.PageResult>;
    /** Clicks the first visible element matching a CSS selector, with real mouse events. */
    pageClick(selector: string, options?: Omit<t.ClickRequest, "selector">): Promise<t.PageResult>;
    /** Types text as key presses, into the element matching `selector` or where the focus is. */
    pageType(text: string, options?: Omit<t.TypeRequest, "text">): Promise<t.PageResult>;
    /** Sets a field's value at once, firing input and change. */
    pageFill(selector: string, value: string, options?: Omit<t.FillRequest, "selector" | "value">): Promise<t.PageResult>;
    /** Presses a key or chord such as `Enter` or `Control+a` in the page. */
    pagePress(key: string, options?: Omit<t.PressRequest, "key">): Promise<t.PageResult>;
    /** Waits (bounded) until an element is visible, attached, hidden or detached. */
    pageWait(selector: string, options?: Omit<t.WaitRequest, "selector">): Promise<t.PageResult>;
    /** Evaluates a JavaScript expression in a tab; an exception is a `PageErrorError`. */
    evaluate(expression: string, options?: Omit<t.EvaluateRequest, "expression">): Promise<t.EvaluateResult>;
    /** A screenshot of a tab (the viewport, or the whole page). */
    pageScreenshot(query?: {
        tab?: string;
        format?: t.ImageFormat;
        quality?: number;
        full_page?: boolean;
    }): Promise<Screenshot>;
    /** The text a person sees in a tab. */
    pageText(tab?: string): Promise<t.PageContent>;
    /** The HTML of a tab. */
    pageHtml(tab?: string): Promise<t.PageContent>;
    /** The cookies and local and session storage of every origin open in a tab. */
    saveState(): Promise<t.StorageState>;
    /** Puts cookies and storage (from any box's `saveState`) into this browser. */
    loadState(state: t.StorageState): Promise<t.LoadStateResult>;
    /** How to reach the box's Chromium (DevTools) from the server's host: the
     * bridge's URLs, the headers with its own secret (not the box's), and a
     * one-connection ticket URL. `rotate` makes a new secret first. */
    bridge(request?: t.BridgeRequest): Promise<t.BridgeAccess>;
    /** Playwright's Browser, connected to the box's Chromium through the
     * bridge: `const browser = await box.connectOverCdp(chromium)`. Its
     * `close` only disconnects; the box's browser keeps running. */
    connectOverCdp<B>(browserType: CdpConnector<B>, options?: Record<string, unknown>): Promise<B>;
    /** The box's guest API URL and an Authorization header with a new
     * credential that opens only this box's guest and expires. */
    agent(request?: t.AgentRequest): Promise<t.AgentAccess>;
    /** Revokes every agent credential of the box. */
    revokeAgent(): Promise<void>;
    /** The viewer URLs of the box's current desktop. */
    viewers(): Promise<t.ViewerGrant[]>;
    /** A new viewer URL for one screen: watch only (`view`) or takeover
     * (`control`), with its own token, expiring. */
    createViewer(request?: t.CreateViewer): Promise<t.ViewerGrant>;
    /** Revokes a viewer URL: it opens nothing more, and its connections close. */
    revokeViewer(grant: string): Promise<t.ViewerGrant>;
    /** Who held control through a takeover URL, and when; waits up to
     * `timeout_secs` for an event after `after`. */
    viewerEvents(query?: {
        after?: number;
        timeout_secs?: number;
    }): Promise<t.ControlEvents>;
    /** Asks a person for help: answers a takeover URL whose page shows the
     * reason; the agent's input is refused while the person is in control. */
    askForHelp(reason: string, options?: Omit<t.AskForHelp, "reason">): Promise<t.Handoff>;
    /** The handoff between agent and person; with `wait_for: "handed_back"`,
     * once the person hands back (or at `timeout_secs`, as it is then). */
    handoff(query?: {
        wait_for?: string;
        timeout_secs?: number;
    }): Promise<t.Handoff>;
    /** Starts recording a screen to a video kept in the box. */
    startRecording(request?: t.RecordingStart): Promise<t.Recording>;
    /** Stops a screen's recording; answers it once its file is complete. */
    stopRecording(screen?: number): Promise<t.Recording>;
    /** The box's recordings, oldest first. */
    recordings(): Promise<t.Recording[]>;
    /** A recording's video (MP4); a running one as written so far. */
    downloadRecording(file: string): Promise<Uint8Array>;
    /** Removes a recording that is not running, and its file. */
    removeRecording(file: string): Promise<void>;
    /** One page of what was done to the box, oldest first, each step with the
     * screenshot after it. */
    timeline(query?: {
        cursor?: string;
        limit?: number;
    }): Promise<t.PageOfStep>;
    /** The whole timeline, page after page. */
    steps(): Promise<t.Step[]>;
    /** The whole timeline as one HTML page that plays it back, or as JSONL. */
    exportTimeline(format?: "html" | "jsonl"): Promise<Uint8Array>;
    /** One screenshot the timeline keeps, by its id. */
    timelineScreenshot(shot: string): Promise<Uint8Array>;
    /** One page of the requests through the server to the box. */
    traces(query?: {
        cursor?: string;
        limit?: number;
    }): Promise<t.PageOfTrace>;
    /** The accessibility tree of the focused window (or, with `all`, the whole
     * screen): role, name, value, states and rectangle per node. */
    accessibility(query?: {
        screen?: number;
        all?: boolean;
        depth?: number;
        max_nodes?: number;
    }): Promise<t.Tree>;
    /** Clicks a node or sets its value, found by `node` id or by `role` and `name`. */
    accessibilityAct(action: t.NodeAction): Promise<t.NodeActed>;
    /** The top-level windows of every screen: title, app, rectangle, focus. */
    windows(): Promise<t.Window[]>;
    /** Focuses, moves, resizes or closes a window, and waits (bounded) until the change shows. */
    windowAction(window: number, action: t.WindowAction): Promise<t.WindowActed>;
    /** Gives a window the focus. */
    focusWindow(window: number): Promise<t.WindowActed>;
    /** Moves a window's top-left corner to (x, y). */
    moveWindow(window: number, x: number, y: number): Promise<t.WindowActed>;
    /** Resizes a window. */
    resizeWindow(window: number, width: number, height: number): Promise<t.WindowActed>;
    /** Closes a window. */
    closeWindow(window: number): Promise<t.WindowActed>;
    /** The clipboard's types, text and PNG image (base64), as apps see it. */
    clipboard(): Promise<t.Clipboard>;
    /** Puts text, a PNG image, or both on the clipboard. */
    setClipboard(content: {
        text?: string;
        png?: Uint8Array;
    }): Promise<t.Clipboard>;
}
