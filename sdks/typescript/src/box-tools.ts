// The rest of a box's capabilities, as the base of `Box`: Chromium's page
// tools and state, the bridge (and Playwright over it), the guest's agent
// credential, viewers, takeover and handoff, recordings, the timeline and
// traces, the accessibility tree, windows and the clipboard.

import { BoxCalls } from "./box-calls.js";
import { type Screenshot, defined, readScreenshot, toBase64 } from "./core.js";
import * as r from "./routes.js";
import type { Transport } from "./transport.js";
import type * as t from "./types.js";

/** Playwright's `chromium` (or anything with its `connectOverCDP`). */
export interface CdpConnector<B> {
  connectOverCDP(endpointURL: string, options?: { headers?: Record<string, string> } & Record<string, unknown>): Promise<B>;
}

/** Page tools, bridge, viewers, records and desk tools of a box. */
export abstract class BoxTools extends BoxCalls {
  protected constructor(transport: Transport, id: string) {
    super(transport, id);
  }

  /** The browser's tabs. */
  async tabs(): Promise<t.Tab[]> {
    return (await this.transport.json<t.PageOfTab>(r.GET_V1_BOXES_ID_BROWSER_TABS, this.p)).data;
  }

  /** Opens a tab, makes it current, and waits for its page to load. */
  async openTab(url?: string, options: Omit<t.OpenTab, "url"> = {}): Promise<t.Tab> {
    return this.transport.json(r.POST_V1_BOXES_ID_BROWSER_TABS, this.p, { json: defined({ url, ...options }) });
  }

  /** Closes a tab. */
  async closeTab(tab: string): Promise<void> {
    await this.transport.json(r.DELETE_V1_BOXES_ID_BROWSER_TABS_TAB, { ...this.p, tab });
  }

  /** Brings a tab to the front and makes it current. */
  async activateTab(tab: string): Promise<void> {
    await this.transport.json(r.POST_V1_BOXES_ID_BROWSER_TABS_TAB_ACTIVATE, { ...this.p, tab });
  }

  /** Loads a URL and waits for load (or DOMContentLoaded, or commit). */
  async navigate(url: string, options: Omit<t.NavigateRequest, "url"> = {}): Promise<t.PageResult> {
    return this.transport.json(r.POST_V1_BOXES_ID_BROWSER_NAVIGATE, this.p, { json: { url, ...options } });
  }

  /** Clicks the first visible element matching a CSS selector, with real mouse events. */
  async pageClick(selector: string, options: Omit<t.ClickRequest, "selector"> = {}): Promise<t.PageResult> {
    return this.transport.json(r.POST_V1_BOXES_ID_BROWSER_CLICK, this.p, { json: { selector, ...options } });
  }

  /** Types text as key presses, into the element matching `selector` or where the focus is. */
  async pageType(text: string, options: Omit<t.TypeRequest, "text"> = {}): Promise<t.PageResult> {
    return this.transport.json(r.POST_V1_BOXES_ID_BROWSER_TYPE, this.p, { json: { text, ...options } });
  }

  /** Sets a field's value at once, firing input and change. */
  async pageFill(selector: string, value: string, options: Omit<t.FillRequest, "selector" | "value"> = {}): Promise<t.PageResult> {
    return this.transport.json(r.POST_V1_BOXES_ID_BROWSER_FILL, this.p, { json: { selector, value, ...options } });
  }

  /** Presses a key or chord such as `Enter` or `Control+a` in the page. */
  async pagePress(key: string, options: Omit<t.PressRequest, "key"> = {}): Promise<t.PageResult> {
    return this.transport.json(r.POST_V1_BOXES_ID_BROWSER_PRESS, this.p, { json: { key, ...options } });
  }

  /** Waits (bounded) until an element is visible, attached, hidden or detached. */
  async pageWait(selector: string, options: Omit<t.WaitRequest, "selector"> = {}): Promise<t.PageResult> {
    const timeoutMs = Math.max(this.transport.config.timeoutMs, (options.timeout_ms ?? 0) + 30_000);
    return this.transport.json(r.POST_V1_BOXES_ID_BROWSER_WAIT, this.p, { json: { selector, ...options }, timeoutMs });
  }

  /** Evaluates a JavaScript expression in a tab; an exception is a `PageErrorError`. */
  async evaluate(expression: string, options: Omit<t.EvaluateRequest, "expression"> = {}): Promise<t.EvaluateResult> {
    return this.transport.json(r.POST_V1_BOXES_ID_BROWSER_EVALUATE, this.p, { json: { expression, ...options } });
  }

  /** A screenshot of a tab (the viewport, or the whole page). */
  async pageScreenshot(
    query: { tab?: string; format?: t.ImageFormat; quality?: number; full_page?: boolean } = {},
  ): Promise<Screenshot> {
    const { response, data, url } = await this.transport.full(r.GET_V1_BOXES_ID_BROWSER_SCREENSHOT, this.p, { query });
    return readScreenshot(response.headers, data, url);
  }

  /** The text a person sees in a tab. */
  async pageText(tab?: string): Promise<t.PageContent> {
    return this.transport.json(r.GET_V1_BOXES_ID_BROWSER_TEXT, this.p, { query: { tab } });
  }

  /** The HTML of a tab. */
  async pageHtml(tab?: string): Promise<t.PageContent> {
    return this.transport.json(r.GET_V1_BOXES_ID_BROWSER_HTML, this.p, { query: { tab } });
  }

  /** The cookies and local and session storage of every origin open in a tab. */
  async saveState(): Promise<t.StorageState> {
    return this.transport.json(r.GET_V1_BOXES_ID_BROWSER_STATE, this.p);
  }

  /** Puts cookies and storage (from any box's `saveState`) into this browser. */
  async loadState(state: t.StorageState): Promise<t.LoadStateResult> {
    return this.transport.json(r.POST_V1_BOXES_ID_BROWSER_STATE, this.p, { json: state });
  }

  /** How to reach the box's Chromium (DevTools) from the server's host: the
   * bridge's URLs, the headers with its own secret (not the box's), and a
   * one-connection ticket URL. `rotate` makes a new secret first. */
  async bridge(request: t.BridgeRequest = {}): Promise<t.BridgeAccess> {
    return this.transport.json(r.POST_V1_BOXES_ID_BRIDGE, this.p, { json: request });
  }

  /** Playwright's Browser, connected to the box's Chromium through the
   * bridge: `const browser = await box.connectOverCdp(chromium)`. Its
   * `close` only disconnects; the box's browser keeps running. */
  async connectOverCdp<B>(browserType: CdpConnector<B>, options: Record<string, unknown> = {}): Promise<B> {
    const access = await this.bridge();
    return browserType.connectOverCDP(access.http_url, { ...options, headers: access.headers });
  }

  /** The box's guest API URL and an Authorization header with a new
   * credential that opens only this box's guest and expires. */
  async agent(request: t.AgentRequest = {}): Promise<t.AgentAccess> {
    return this.transport.json(r.POST_V1_BOXES_ID_AGENT, this.p, { json: request });
  }

  /** Revokes every agent credential of the box. */
  async revokeAgent(): Promise<void> {
    await this.transport.json(r.DELETE_V1_BOXES_ID_AGENT, this.p);
  }

  /** The viewer URLs of the box's current desktop. */
  async viewers(): Promise<t.ViewerGrant[]> {
    return (await this.transport.json<t.PageOfViewerGrant>(r.GET_V1_BOXES_ID_VIEWERS, this.p)).data;
  }

  /** A new viewer URL for one screen: watch only (`view`) or takeover
   * (`control`), with its own token, expiring. */
  async createViewer(request: t.CreateViewer = {}): Promise<t.ViewerGrant> {
    return this.transport.json(r.POST_V1_BOXES_ID_VIEWERS, this.p, { json: request });
  }

  /** Revokes a viewer URL: it opens nothing more, and its connections close. */
  async revokeViewer(grant: string): Promise<t.ViewerGrant> {
    return this.transport.json(r.DELETE_V1_BOXES_ID_VIEWERS_GRANT, { ...this.p, grant });
  }

  /** Who held control through a takeover URL, and when; waits up to
   * `timeout_secs` for an event after `after`. */
  async viewerEvents(query: { after?: number; timeout_secs?: number } = {}): Promise<t.ControlEvents> {
    const timeoutMs = this.transport.config.timeoutMs + (query.timeout_secs ?? 0) * 1000;
    return this.transport.json(r.GET_V1_BOXES_ID_VIEWERS_EVENTS, this.p, { query, timeoutMs });
  }

  /** Asks a person for help: answers a takeover URL whose page shows the
   * reason; the agent's input is refused while the person is in control. */
  async askForHelp(reason: string, options: Omit<t.AskForHelp, "reason"> = {}): Promise<t.Handoff> {
    return this.transport.json(r.POST_V1_BOXES_ID_HANDOFF, this.p, { json: { reason, ...options } });
  }

  /** The handoff between agent and person; with `wait_for: "handed_back"`,
   * once the person hands back (or at `timeout_secs`, as it is then). */
  async handoff(query: { wait_for?: string; timeout_secs?: number } = {}): Promise<t.Handoff> {
    const timeoutMs = this.transport.config.timeoutMs + (query.timeout_secs ?? 0) * 1000;
    return this.transport.json(r.GET_V1_BOXES_ID_HANDOFF, this.p, { query, timeoutMs });
  }

  /** Starts recording a screen to a video kept in the box. */
  async startRecording(request: t.RecordingStart = {}): Promise<t.Recording> {
    return this.transport.json(r.POST_V1_BOXES_ID_RECORDINGS, this.p, { json: request });
  }

  /** Stops a screen's recording; answers it once its file is complete. */
  async stopRecording(screen = 0): Promise<t.Recording> {
    return this.transport.json(r.POST_V1_BOXES_ID_RECORDINGS_STOP, this.p, { json: { screen } });
  }

  /** The box's recordings, oldest first. */
  async recordings(): Promise<t.Recording[]> {
    return (await this.transport.json<t.PageOfRecording>(r.GET_V1_BOXES_ID_RECORDINGS, this.p)).data;
  }

  /** A recording's video (MP4); a running one as written so far. */
  async downloadRecording(file: string): Promise<Uint8Array> {
    return this.transport.data(r.GET_V1_BOXES_ID_RECORDINGS_FILE, { ...this.p, file }, { timeoutMs: null });
  }

  /** Removes a recording that is not running, and its file. */
  async removeRecording(file: string): Promise<void> {
    await this.transport.json(r.DELETE_V1_BOXES_ID_RECORDINGS_FILE, { ...this.p, file });
  }

  /** One page of what was done to the box, oldest first, each step with the
   * screenshot after it. */
  async timeline(query: { cursor?: string; limit?: number } = {}): Promise<t.PageOfStep> {
    return this.transport.json(r.GET_V1_BOXES_ID_TIMELINE, this.p, { query });
  }

  /** The whole timeline, page after page. */
  async steps(): Promise<t.Step[]> {
    const out: t.Step[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await this.timeline({ cursor, limit: 1000 });
      out.push(...page.data);
      cursor = page.next_cursor ?? undefined;
      if (!cursor) return out;
    }
  }

  /** The whole timeline as one HTML page that plays it back, or as JSONL. */
  async exportTimeline(format: "html" | "jsonl" = "html"): Promise<Uint8Array> {
    return this.transport.data(r.GET_V1_BOXES_ID_TIMELINE_EXPORT, this.p, { query: { format }, timeoutMs: null });
  }

  /** One screenshot the timeline keeps, by its id. */
  async timelineScreenshot(shot: string): Promise<Uint8Array> {
    return this.transport.data(r.GET_V1_BOXES_ID_TIMELINE_SCREENSHOTS_SHOT, { ...this.p, shot });
  }

  /** One page of the requests through the server to the box. */
  async traces(query: { cursor?: string; limit?: number } = {}): Promise<t.PageOfTrace> {
    return this.transport.json(r.GET_V1_BOXES_ID_TRACES, this.p, { query });
  }

  /** The accessibility tree of the focused window (or, with `all`, the whole
   * screen): role, name, value, states and rectangle per node. */
  async accessibility(query: { screen?: number; all?: boolean; depth?: number; max_nodes?: number } = {}): Promise<t.Tree> {
    return this.transport.json(r.GET_V1_BOXES_ID_ACCESSIBILITY, this.p, { query });
  }

  /** Clicks a node or sets its value, found by `node` id or by `role` and `name`. */
  async accessibilityAct(action: t.NodeAction): Promise<t.NodeActed> {
    return this.transport.json(r.POST_V1_BOXES_ID_ACCESSIBILITY_ACT, this.p, { json: action });
  }

  /** The top-level windows of every screen: title, app, rectangle, focus. */
  async windows(): Promise<t.Window[]> {
    return (await this.transport.json<t.PageOfWindow>(r.GET_V1_BOXES_ID_WINDOWS, this.p)).data;
  }

  /** Focuses, moves, resizes or closes a window, and waits (bounded) until the change shows. */
  async windowAction(window: number, action: t.WindowAction): Promise<t.WindowActed> {
    return this.transport.json(r.POST_V1_BOXES_ID_WINDOWS_WINDOW, { ...this.p, window }, { json: action });
  }

  /** Gives a window the focus. */
  async focusWindow(window: number): Promise<t.WindowActed> {
    return this.windowAction(window, { action: "focus" });
  }

  /** Moves a window's top-left corner to (x, y). */
  async moveWindow(window: number, x: number, y: number): Promise<t.WindowActed> {
    return this.windowAction(window, { action: "move", x, y });
  }

  /** Resizes a window. */
  async resizeWindow(window: number, width: number, height: number): Promise<t.WindowActed> {
    return this.windowAction(window, { action: "resize", width, height });
  }

  /** Closes a window. */
  async closeWindow(window: number): Promise<t.WindowActed> {
    return this.windowAction(window, { action: "close" });
  }

  /** The clipboard's types, text and PNG image (base64), as apps see it. */
  async clipboard(): Promise<t.Clipboard> {
    return this.transport.json(r.GET_V1_BOXES_ID_CLIPBOARD, this.p);
  }

  /** Puts text, a PNG image, or both on the clipboard. */
  async setClipboard(content: { text?: string; png?: Uint8Array }): Promise<t.Clipboard> {
    const body = defined({ text: content.text, png_base64: content.png ? toBase64(content.png) : undefined });
    return this.transport.json(r.PUT_V1_BOXES_ID_CLIPBOARD, this.p, { json: body });
  }
}
