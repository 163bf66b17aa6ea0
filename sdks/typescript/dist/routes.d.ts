/** One operation of the API. */
export interface Route {
    readonly method: string;
    readonly path: string;
    readonly query: readonly string[];
    readonly summary: string;
}
/** The app catalogue */
export declare const GET_V1_APPS: Route;
/** The boxes, a page at a time */
export declare const GET_V1_BOXES: Route;
/** Create a box; with wait_for=running, answer once it runs. With an Idempotency-Key, the same key and body answer the first box again (Idempotency-Replayed: true, "replayed": true) for 24 hours; another body with the key is refused (422) */
export declare const POST_V1_BOXES: Route;
/** Remove a box */
export declare const DELETE_V1_BOXES_ID: Route;
/** One box; with wait_for, answer once it is in that state */
export declare const GET_V1_BOXES_ID: Route;
/** The accessibility tree (AT-SPI) of the focused window or of the whole screen: role, name, value, states and screen rectangle of each node, bounded in depth and count */
export declare const GET_V1_BOXES_ID_ACCESSIBILITY: Route;
/** Click a node or set its value, found by id or by role and name: the app's own action, else the pointer and keyboard at its rectangle */
export declare const POST_V1_BOXES_ID_ACCESSIBILITY_ACT: Route;
/** Revoke every agent credential of the box: its guest refuses them from now on */
export declare const DELETE_V1_BOXES_ID_AGENT: Route;
/** How to reach the box's guest API straight from the server's host: its URL, and an Authorization header with a new credential that opens only this box's guest, is not the box secret, cannot manage credentials, and expires after ttl_secs (default 300, at most 3600). The one response that carries a secret, with the bridge's */
export declare const POST_V1_BOXES_ID_AGENT: Route;
/** How to reach the box's Chromium (DevTools) from the server's host: the bridge's URL, the Authorization header with the bridge's own secret, and a ticket URL that opens one connection without headers before expires_at */
export declare const POST_V1_BOXES_ID_BRIDGE: Route;
/** Go back one page in a tab's history and wait for it to load */
export declare const POST_V1_BOXES_ID_BROWSER_BACK: Route;
/** Click the first visible element that matches a CSS selector, with real mouse events */
export declare const POST_V1_BOXES_ID_BROWSER_CLICK: Route;
/** Evaluate a JavaScript expression; an exception is a page_error */
export declare const POST_V1_BOXES_ID_BROWSER_EVALUATE: Route;
/** Set a field's value at once, firing input and change */
export declare const POST_V1_BOXES_ID_BROWSER_FILL: Route;
/** Go forward one page in a tab's history and wait for it to load */
export declare const POST_V1_BOXES_ID_BROWSER_FORWARD: Route;
/** The HTML of a tab */
export declare const GET_V1_BOXES_ID_BROWSER_HTML: Route;
/** Load a URL and wait for load, DOMContentLoaded or commit */
export declare const POST_V1_BOXES_ID_BROWSER_NAVIGATE: Route;
/** Press a key or chord such as Enter or Control+a */
export declare const POST_V1_BOXES_ID_BROWSER_PRESS: Route;
/** Load a tab's page again and wait for it to load */
export declare const POST_V1_BOXES_ID_BROWSER_RELOAD: Route;
/** A screenshot of a tab (viewport or full page): the raw PNG or JPEG with x-holm-width and x-holm-height */
export declare const GET_V1_BOXES_ID_BROWSER_SCREENSHOT: Route;
/** save_state: the cookies and the local and session storage of every origin open in a tab */
export declare const GET_V1_BOXES_ID_BROWSER_STATE: Route;
/** load_state: put cookies and storage (from any box) into this box's browser */
export declare const POST_V1_BOXES_ID_BROWSER_STATE: Route;
/** The browser's tabs */
export declare const GET_V1_BOXES_ID_BROWSER_TABS: Route;
/** Open a tab, make it current, and wait for its page to load */
export declare const POST_V1_BOXES_ID_BROWSER_TABS: Route;
/** Close a tab */
export declare const DELETE_V1_BOXES_ID_BROWSER_TABS_TAB: Route;
/** Bring a tab to the front and make it current */
export declare const POST_V1_BOXES_ID_BROWSER_TABS_TAB_ACTIVATE: Route;
/** The text a person sees in a tab */
export declare const GET_V1_BOXES_ID_BROWSER_TEXT: Route;
/** Type text as key presses, into the element that matches or where the focus is */
export declare const POST_V1_BOXES_ID_BROWSER_TYPE: Route;
/** Wait (bounded) until an element is visible, attached, hidden or detached */
export declare const POST_V1_BOXES_ID_BROWSER_WAIT: Route;
/** The clipboard's types, its text and its PNG image (base64), as the apps see it */
export declare const GET_V1_BOXES_ID_CLIPBOARD: Route;
/** Put text, a PNG image (base64), or both on the clipboard; the guest owns it until an app copies */
export declare const PUT_V1_BOXES_ID_CLIPBOARD: Route;
/** Run a command and wait for it */
export declare const POST_V1_BOXES_ID_COMMANDS_RUN: Route;
/** Run a command and stream its events */
export declare const POST_V1_BOXES_ID_COMMANDS_STREAM: Route;
/** Move the end of a box's lifetime later, up to its runtime's maximum */
export declare const POST_V1_BOXES_ID_EXTEND: Route;
/** Read a file */
export declare const GET_V1_BOXES_ID_FILES_CONTENT: Route;
/** Write a file atomically, making parents */
export declare const PUT_V1_BOXES_ID_FILES_CONTENT: Route;
/** List a directory */
export declare const GET_V1_BOXES_ID_FILES_LIST: Route;
/** Make a directory */
export declare const POST_V1_BOXES_ID_FILES_MKDIR: Route;
/** Remove a path */
export declare const POST_V1_BOXES_ID_FILES_REMOVE: Route;
/** Rename a path */
export declare const POST_V1_BOXES_ID_FILES_RENAME: Route;
/** Describe a path */
export declare const GET_V1_BOXES_ID_FILES_STAT: Route;
/** A new box with a copy of this box's files, on the same runtime; takes an Idempotency-Key */
export declare const POST_V1_BOXES_ID_FORK: Route;
/** The handoff between agent and person; with wait_for=handed_back, answer once the person hands back (or at timeout_secs, at most 900, as it is then) */
export declare const GET_V1_BOXES_ID_HANDOFF: Route;
/** Ask a person for help: answers a takeover URL whose page shows the reason; the agent's input is refused while the person is in control */
export declare const POST_V1_BOXES_ID_HANDOFF: Route;
/** The guest's version, screens and capabilities */
export declare const GET_V1_BOXES_ID_INFO: Route;
/** Pause a box, keeping its memory */
export declare const POST_V1_BOXES_ID_PAUSE: Route;
/** The background processes */
export declare const GET_V1_BOXES_ID_PROCESSES: Route;
/** Start a background process */
export declare const POST_V1_BOXES_ID_PROCESSES: Route;
/** Kill a background process if it runs, and forget it */
export declare const DELETE_V1_BOXES_ID_PROCESSES_PROCESS: Route;
/** One background process */
export declare const GET_V1_BOXES_ID_PROCESSES_PROCESS: Route;
/** Output events after a cursor; follow=true streams */
export declare const GET_V1_BOXES_ID_PROCESSES_PROCESS_OUTPUT: Route;
/** Send a signal */
export declare const POST_V1_BOXES_ID_PROCESSES_PROCESS_SIGNAL: Route;
/** Write the raw body to standard input; eof=true closes it */
export declare const POST_V1_BOXES_ID_PROCESSES_PROCESS_STDIN: Route;
/** The stages of the box's latest making or start (image with its build lines, container, desktop, browser), then each as it comes, until it runs, fails or timeout_secs pass; the last line is the box. Reading it leaves no trace */
export declare const GET_V1_BOXES_ID_PROGRESS: Route;
/** The box's recordings, oldest first: file, screen, state, started_at, ended_at and bytes */
export declare const GET_V1_BOXES_ID_RECORDINGS: Route;
/** Start recording a screen to a video (H.264 in fragmented MP4) kept in the box */
export declare const POST_V1_BOXES_ID_RECORDINGS: Route;
/** Stop a screen's running recording; answers it once its file is complete */
export declare const POST_V1_BOXES_ID_RECORDINGS_STOP: Route;
/** Remove a recording that is not running, and its file */
export declare const DELETE_V1_BOXES_ID_RECORDINGS_FILE: Route;
/** A recording's file (video/mp4), streamed; a running one as written so far */
export declare const GET_V1_BOXES_ID_RECORDINGS_FILE: Route;
/** Resume a paused box where it was */
export declare const POST_V1_BOXES_ID_RESUME: Route;
/** The box's screens */
export declare const GET_V1_BOXES_ID_SCREENS: Route;
/** One screen */
export declare const GET_V1_BOXES_ID_SCREENS_SCREEN: Route;
/** Where the pointer is */
export declare const GET_V1_BOXES_ID_SCREENS_SCREEN_CURSOR: Route;
/** Input actions in order; with screenshot, answer the image after them */
export declare const POST_V1_BOXES_ID_SCREENS_SCREEN_INPUT: Route;
/** A screenshot: the raw image, described by x-holm-* headers; If-None-Match answers 304 for an unchanged frame */
export declare const GET_V1_BOXES_ID_SCREENS_SCREEN_SCREENSHOT: Route;
/** Start a stopped box: a new desktop on new ports; with wait_for=running, answer once it runs */
export declare const POST_V1_BOXES_ID_START: Route;
/** Stop a box, keeping its files */
export declare const POST_V1_BOXES_ID_STOP: Route;
/** A terminal: a real pty in the box over a WebSocket (Upgrade: websocket). Binary frames carry its bytes both ways; text frames are JSON: {"type":"resize","cols","rows"} from the client, ready (first), error and exit (last) from the server */
export declare const GET_V1_BOXES_ID_TERMINAL: Route;
/** What was done to a box, a step a page at a time, oldest first: each action through the server (input, commands, page tools, file writes, who held control, lifecycle) with its time, request id and the screenshot after it; never a secret or a file's content */
export declare const GET_V1_BOXES_ID_TIMELINE: Route;
/** The whole timeline as one self-contained HTML page that plays it back (screenshots inline), or as JSONL, one line per step naming its screenshot's file (screenshots/<id>.png, from the route below) */
export declare const GET_V1_BOXES_ID_TIMELINE_EXPORT: Route;
/** One screenshot the timeline keeps, by its id */
export declare const GET_V1_BOXES_ID_TIMELINE_SCREENSHOTS_SHOT: Route;
/** The requests through the server to a box, oldest first, a page at a time */
export declare const GET_V1_BOXES_ID_TRACES: Route;
/** The viewer URLs of the box's current desktop */
export declare const GET_V1_BOXES_ID_VIEWERS: Route;
/** A new viewer URL for one screen: watch only (mode view) or takeover (mode control), with its own token (after # in the URL), expiring after expires_after_secs (default 3600) */
export declare const POST_V1_BOXES_ID_VIEWERS: Route;
/** Who held control of the box through a takeover URL, and when: each take and each handback */
export declare const GET_V1_BOXES_ID_VIEWERS_EVENTS: Route;
/** Revoke a viewer URL: it opens nothing more, and its open connections close */
export declare const DELETE_V1_BOXES_ID_VIEWERS_GRANT: Route;
/** The top-level windows of every screen: title, app, rectangle, and which has the focus */
export declare const GET_V1_BOXES_ID_WINDOWS: Route;
/** Focus, move, resize or close a window, and wait (bounded) until the change shows */
export declare const POST_V1_BOXES_ID_WINDOWS_WINDOW: Route;
/** The server answers */
export declare const GET_V1_HEALTH: Route;
/** The images holm built */
export declare const GET_V1_IMAGES: Route;
/** Make the air-gapped base image if it is missing */
export declare const POST_V1_IMAGES_BASE: Route;
/** Build a box image and stream the build */
export declare const POST_V1_IMAGES_BUILD: Route;
/** Remove box images no box uses: those made for other holm versions, or with all, every unused one; dry_run says what would go */
export declare const POST_V1_IMAGES_PRUNE: Route;
/** This document */
export declare const GET_V1_OPENAPI_JSON: Route;
/** The runtimes and what each can do */
export declare const GET_V1_RUNTIMES: Route;
/** Add a remote runtime (a cloud vendor account); its key is encrypted before it is stored and never returned */
export declare const POST_V1_RUNTIMES: Route;
/** Remove a remote runtime that no box is on */
export declare const DELETE_V1_RUNTIMES_NAME: Route;
/** One runtime */
export declare const GET_V1_RUNTIMES_NAME: Route;
/** Change some fields of a remote runtime, or replace its key */
export declare const PATCH_V1_RUNTIMES_NAME: Route;
/** Add or replace a remote runtime whole */
export declare const PUT_V1_RUNTIMES_NAME: Route;
/** Every route by its name. */
export declare const ROUTES: Record<string, Route>;
