/**
 * How an action on a node was done.
 * - `action`: The app's own action (AT-SPI `DoAction`).
 * - `text`: The app's editable text (AT-SPI `SetTextContents`).
 * - `value`: The app's range value (AT-SPI `Value.CurrentValue`).
 * - `pointer`: The pointer (and for a value, the keyboard) at the node's centre.
 */
export type ActedVia = "action" | "text" | "value" | "pointer";
/** Move the pointer. */
export interface MoveAction {
    type: "move";
    /** Horizontal position. */
    x: number;
    /** Vertical position. */
    y: number;
}
/** Click: press and release, `count` times (2 is a double click). */
export interface ClickAction {
    /** Which button (default left). */
    button?: Button;
    /** 1 to 3 (default 1). */
    count?: number;
    /** Keys held during the click, such as `["ctrl"]` or `["shift","alt"]`. */
    modifiers?: string[];
    type: "click";
    /** Where; the pointer's position when left out. */
    x?: number | null;
    /** Where; the pointer's position when left out. */
    y?: number | null;
}
/** Press a button and keep it down. */
export interface MouseDownAction {
    /** Which button (default left). */
    button?: Button;
    type: "mouse_down";
    /** Where; the pointer's position when left out. */
    x?: number | null;
    /** Where; the pointer's position when left out. */
    y?: number | null;
}
/** Release a button. */
export interface MouseUpAction {
    /** Which button (default left). */
    button?: Button;
    type: "mouse_up";
    /** Where; the pointer's position when left out. */
    x?: number | null;
    /** Where; the pointer's position when left out. */
    y?: number | null;
}
/** Press at the first point, move through the others, release at the last. */
export interface DragAction {
    /** Which button (default left). */
    button?: Button;
    /** Keys held during the drag. */
    modifiers?: string[];
    /** At least two points. */
    path: Point[];
    /** How long to stay at each point, in milliseconds (default 0). */
    step_ms?: number;
    type: "drag";
}
/**
 * Turn the wheel: `dy` clicks down (negative: up), `dx` clicks right
 * (negative: left).
 */
export interface ScrollAction {
    /** Horizontal clicks. */
    dx?: number;
    /** Vertical clicks. */
    dy?: number;
    /** Keys held while scrolling. */
    modifiers?: string[];
    type: "scroll";
    /** Where; the pointer's position when left out. */
    x?: number | null;
    /** Where; the pointer's position when left out. */
    y?: number | null;
}
/**
 * Type text: any Unicode, whatever the keyboard layout. `\n` is Return
 * and `\t` is Tab.
 */
export interface TypeAction {
    /** The text. */
    text: string;
    type: "type";
}
/** Press a key or a chord such as `ctrl+shift+t`, and release it. */
export interface KeyAction {
    /** The chord; key names are in the key table, case-insensitive. */
    key: string;
    /** How many times (default 1). */
    repeat?: number;
    type: "key";
}
/** Press a key or chord and keep it down. */
export interface KeyDownAction {
    /** The key or chord. */
    key: string;
    type: "key_down";
}
/** Release a key or chord. */
export interface KeyUpAction {
    /** The key or chord. */
    key: string;
    type: "key_up";
}
/** Hold a key or chord down for a time, then release it. */
export interface HoldAction {
    /** How long, in milliseconds (at most 60000). */
    duration_ms: number;
    /** The key or chord. */
    key: string;
    type: "hold";
}
/** Do nothing for a time. */
export interface WaitAction {
    /** How long, in milliseconds (at most 60000). */
    ms: number;
    type: "wait";
}
/**
 * One input action. Coordinates are screen pixels unless the request gives a
 * `coordinate_space`; when `x` and `y` are left out, the action happens where
 * the pointer is.
 */
export type Action = MoveAction | ClickAction | MouseDownAction | MouseUpAction | DragAction | ScrollAction | TypeAction | KeyAction | KeyDownAction | KeyUpAction | HoldAction | WaitAction;
/**
 * `POST /v1/runtimes`: adds a remote runtime, a cloud vendor account with a
 * name. Only vendors: the API cannot name a host program, socket or engine.
 */
export interface AddRuntime {
    /** The vendor's key. Encrypted before it is stored, never returned. */
    api_key?: string | null;
    /**
     * Its settings that are not secret, such as `team_id` or
     * `max_lifetime_secs`.
     */
    fields?: Record<string, unknown>;
    /**
     * The name boxes use to pick it: 1 to 40 lowercase letters, digits,
     * `-` or `_`.
     */
    name: string;
    /** The vendor: `e2b`, `vercel`, `daytona`, `modal` or `runtime-cloud`. */
    provider: string;
}
/**
 * How to reach a box's guest API straight from the server's host: the
 * answer of `POST /v1/boxes/{id}/agent`. It holds a credential: do not log
 * it. `curl -H "Authorization: Bearer …" {url}/v1/info`.
 */
export interface AgentAccess {
    /** The box's id. */
    box_id: string;
    /** When the guest stops taking the credential, in RFC 3339. */
    expires_at: string;
    /**
     * The headers every request to `url` needs: `Authorization: Bearer
     * <credential>` (and a runtime's proxy header, if it has one). The
     * credential opens this box's guest only, and is not the box secret.
     */
    headers: Record<string, string>;
    /** The guest's own OpenAPI document, `{url}/v1/openapi.json`. */
    openapi_url: string;
    /** The guest API's address, such as `http://127.0.0.1:49153`. */
    url: string;
}
/**
 * `POST /v1/agent/tokens` on the guest, `POST /v1/boxes/{id}/agent` on the
 * server: a new credential.
 */
export interface AgentRequest {
    /** How long the credential opens the guest, in seconds (default 300, 1 to 3600). */
    ttl_secs?: number | null;
}
/** An error as it travels on the wire. */
export interface ApiError {
    /** A stable, machine-readable code. */
    code: ErrorCode;
    /**
     * Structured facts about the error, such as the fields that were wrong.
     * With a `kind` (such as `no_such_box` or `box_refused`), they are that
     * kind's fields, and `hint` is the next step in REST's terms.
     */
    details?: unknown;
    /** What to do next, when there is something useful to say. */
    hint?: string | null;
    /** What went wrong, for a person. */
    message: string;
    /** The id of the request, as in the `x-request-id` header. */
    request_id?: string | null;
}
/** An app of the catalogue. */
export interface AppInfo {
    /** What it is. */
    description: string;
    /** The name to pass to `--app`. */
    name: string;
    /** It comes from a third-party repository that must be reachable at build time. */
    third_party: boolean;
    /** It needs X11: in a Wayland box it runs through Xwayland. */
    x11?: boolean;
}
/**
 * `POST /v1/boxes/{id}/handoff` (and the guest's `PUT /v1/viewers/help`):
 * ask a person for help.
 */
export interface AskForHelp {
    /**
     * Seconds the takeover URL works (default 3600, 1 to 86400). Not on the
     * guest.
     */
    expires_after_secs?: number | null;
    /** Why, shown in the viewer page: 1 to 500 characters. */
    reason: string;
    /** The screen to take (default 0). */
    screen?: number;
}
/** A stage began. */
export interface StageBoxEvent {
    /** What happens in it, for people. */
    message: string;
    /** Which. */
    stage: Stage;
    type: "stage";
}
/** A line of the image's build. */
export interface BuildBoxEvent {
    /** The line. */
    message: string;
    /** The build's step, when the line begins one (`Step 3/12 : ...`). */
    step?: number | null;
    /** How many steps the build has. */
    steps?: number | null;
    type: "build";
}
/**
 * The box as it is now; always the last event: running, failed, or
 * still on its way when the wait ended.
 */
export interface BoxBoxEvent {
    /** The box. */
    box: BoxInfo;
    type: "box";
}
/** One event of `GET /v1/boxes/{id}/progress`. */
export type BoxEvent = StageBoxEvent | BuildBoxEvent | BoxBoxEvent;
/** A box, as the server shows it. Its secret is never shown. */
export interface BoxInfo {
    /**
     * The Chromium bridge (DevTools) on the server's host, such as
     * `http://127.0.0.1:49154`, once the box runs a browser. It needs a
     * credential: `POST /v1/boxes/{id}/bridge` gives one.
     */
    bridge_url?: string | null;
    /** When it was created, in RFC 3339. */
    created_at: string;
    /** When the server removes it, in RFC 3339. */
    expires_at: string;
    /** The box this one was forked from. */
    forked_from?: string | null;
    /**
     * The person in control through a takeover URL, while one is: the
     * agent's input is refused until they hand it back.
     */
    human_in_control?: HumanControl | null;
    /** The box's id, such as `box_7hq3k2m9x4`. */
    id: string;
    /** The idle timeout, when it has one. */
    idle_timeout_secs?: number | null;
    /** The image it runs. */
    image?: string | null;
    /**
     * Why it is `failed` or `unreachable`, why the server stopped it
     * (beginning with `disk_limit` when it wrote past `placement.disk`),
     * or why it was removed.
     */
    reason?: string | null;
    /**
     * Set on a create (or fork) answered again for a repeated
     * `Idempotency-Key`: nothing new was made.
     */
    replayed?: boolean;
    /** Its runtime. */
    runtime: string;
    /** Its screens, once known. */
    screens?: Screen[];
    /** What it is. */
    spec: BoxSpec;
    /** Where it is in its life. */
    state: BoxState;
    /**
     * Each screen's viewer URLs (watch only, and takeover), while the box
     * runs; only `GET /v1/boxes/{id}` shows them. They carry credentials.
     */
    viewers?: ScreenViewers[];
}
/** What a box is: its desktop and what is installed. */
export interface BoxSpec {
    /** Apps from the catalogue, such as `vscode` or `gimp`. */
    apps?: string[];
    /** Run Chromium on each screen (default true). */
    browser?: boolean | null;
    /** The display server (default `x11`). */
    display?: Profile | null;
    /** Labels of your own, up to 32. */
    labels?: Record<string, string>;
    /** A name of your own. */
    name?: string | null;
    /** Debian packages to install. */
    packages?: string[];
    /**
     * How people reach the box's viewers (default: through the server,
     * with a token).
     */
    policy?: ViewerPolicy | null;
    /**
     * Keep Chromium's user data (screen 0) in this named browser profile,
     * which later boxes with the same profile reuse. 1 to 63 lowercase
     * letters, digits, `-`, `_` or `.`, starting with a letter or digit.
     * Only on runtimes whose `can.browser_profile`; one live box per profile.
     */
    profile?: string | null;
    /**
     * When the box answers `running`: `browser` (the default: once every
     * component, Chromium too, is up) or `desktop` (once the display and
     * the window manager answer; page tools answer `not_ready` with a
     * retry hint until Chromium is up).
     */
    ready?: Ready | null;
    /**
     * Record every screen for the box's whole life (default false): one
     * recording a screen from its start, stopped when the box stops, the
     * files kept by the server when the box is removed.
     */
    record?: boolean | null;
    /** The size of every screen, such as `1280x800` (the default). */
    screen_size?: string | null;
    /** How many screens, 1 to 6 (default 1). */
    screens?: number | null;
}
/**
 * Where a box is in its life.
 * - `creating`: Its image is being prepared or its machine made.
 * - `starting`: Its machine runs; the desktop is coming up.
 * - `running`: The desktop answers.
 * - `paused`: Paused with its memory kept.
 * - `stopped`: Stopped with its files kept.
 * - `unreachable`: The server cannot reach it through its runtime; `reason` says why.
 * - `failed`: It could not be made; `reason` says why.
 * - `removed`: It is gone.
 * - `pooled`: Started and ready in a warm pool, waiting for a create that matches;
 */
export type BoxState = "creating" | "starting" | "running" | "paused" | "stopped" | "unreachable" | "failed" | "removed" | "pooled";
/**
 * How to reach a box's Chromium (DevTools) from the host: the answer of
 * `POST /v1/boxes/{id}/bridge`. It holds credentials: do not log it.
 *
 * With headers: `chromium.connectOverCDP(http_url, { headers })` in
 * Playwright, or `puppeteer.connect({ browserWSEndpoint: ws_url, headers })`.
 * Without: `connectOverCDP(ticket_url)` before `expires_at`.
 */
export interface BridgeAccess {
    /** When the ticket can no longer open a connection, in RFC 3339. */
    expires_at: string;
    /**
     * The headers every request to `http_url` and `ws_url` needs:
     * `Authorization: Bearer <bridge secret>`. The bridge secret is not the
     * box secret; it changes when a restarted server takes the box back.
     */
    headers: Record<string, string>;
    /** The bridge's HTTP address, such as `http://127.0.0.1:49154`. */
    http_url: string;
    /**
     * `http_url` with a one-connection ticket in its path, for clients that
     * cannot send headers.
     */
    ticket_url: string;
    /** The browser's WebSocket address with the ticket. */
    ticket_ws_url: string;
    /** The browser's WebSocket address through the bridge. */
    ws_url: string;
}
/** `POST /v1/boxes/{id}/bridge`. */
export interface BridgeRequest {
    /**
     * Make a new bridge secret first: every connection opened with the old
     * one ends, and its tickets stop working.
     */
    rotate?: boolean;
    /** The ticket's lifetime in seconds (default 60, 1 to 300). */
    ttl_secs?: number | null;
}
/** A line of build output. */
export interface ProgressBuildEvent {
    /** The text. */
    message: string;
    type: "progress";
}
/** The image is ready; the last event. */
export interface DoneBuildEvent {
    /** Whether it existed already, so nothing was built. */
    cached: boolean;
    /** The image's tag. */
    image: string;
    type: "done";
}
/** The build failed; the last event. */
export interface ErrorBuildEvent {
    /** What went wrong. */
    error: ApiError;
    type: "error";
}
/** One line of an image build's NDJSON progress. */
export type BuildEvent = ProgressBuildEvent | DoneBuildEvent | ErrorBuildEvent;
/** `POST /v1/images/build`, also the body of `holm image build`. */
export interface BuildImage {
    /** Apps from the catalogue. */
    apps?: string[];
    /** The display profile (default `x11`). */
    display?: Profile | null;
    /** Debian packages. */
    packages?: string[];
    /** The runtime whose engine builds the image (default: the default runtime). */
    runtime?: string | null;
}
/**
 * A mouse button.
 * - `left`: The primary button.
 * - `middle`: The wheel button.
 * - `right`: The secondary button.
 * - `back`: The "back" side button.
 * - `forward`: The "forward" side button.
 */
export type Button = "left" | "middle" | "right" | "back" | "forward";
/** What a runtime can do. A request it cannot do is refused before a box starts. */
export interface Can {
    /** Keep a browser profile on a named volume. */
    browser_profile: boolean;
    /** Copy a box into a new one. */
    fork: boolean;
    /** Pause a box with its memory kept. */
    pause: boolean;
    /** Set memory and CPUs per box. */
    resources: boolean;
    /** The most screens a box may have. */
    screens: number;
    /** Stop a box with its files kept, and start it again. */
    stop: boolean;
    /** Run Wayland boxes. */
    wayland: boolean;
}
/**
 * `PATCH /v1/runtimes/{name}`: changes some settings of a remote runtime,
 * or replaces its key.
 */
export interface ChangeRuntime {
    /** A new key. Encrypted before it is stored, never returned. */
    api_key?: string | null;
    /** Settings to set; `null` removes one. */
    fields?: Record<string, unknown>;
}
/** `POST /v1/browser/click`: click the first element that matches. */
export interface ClickRequest {
    /** Which button (default left). */
    button?: Button | null;
    /** 1 to 3 (default 1). */
    count?: number | null;
    /** A CSS selector. */
    selector: string;
    /** The tab (default: the current tab). */
    tab?: string | null;
    /**
     * Wait this long for the element to be visible, in milliseconds
     * (default 5000, at most 60000).
     */
    timeout_ms?: number | null;
}
/** `GET /v1/clipboard` and the answer of `PUT /v1/clipboard`. */
export interface Clipboard {
    /** Its image as PNG, base64 (standard alphabet), when it offers `image/png`. */
    png_base64?: string | null;
    /** Its text, when it offers text. */
    text?: string | null;
    /**
     * The types the clipboard's owner offers (MIME types such as
     * `text/plain;charset=utf-8` and `image/png`); empty when it has none.
     */
    types: string[];
}
/**
 * `PUT /v1/clipboard`: what to put on the clipboard. At least one of the
 * two; with both, the clipboard offers both and each app takes the type it
 * wants.
 */
export interface ClipboardSet {
    /** A PNG image, base64 (standard alphabet), at most 16 MiB decoded. */
    png_base64?: string | null;
    /**
     * The request carries a secret: no record keeps its text, not even
     * its length (holmd's timeline and its exports, logs); a command's
     * argv and environment are recorded as `[sensitive]`; an image it
     * answers is not kept. Default false.
     */
    sensitive?: boolean;
    /** Text (UTF-8), at most 4 MiB. */
    text?: string | null;
}
/** The command started. */
export interface StartCommandEvent {
    /** Its process id. */
    pid: number;
    type: "start";
}
/** Some standard output. */
export interface StdoutCommandEvent {
    /** The text. */
    data: string;
    type: "stdout";
}
/** Some standard error. */
export interface StderrCommandEvent {
    /** The text. */
    data: string;
    type: "stderr";
}
/** The command ended; always the last event. */
export interface ExitCommandEvent {
    /** How long it ran, in milliseconds. */
    duration_ms: number;
    /** The exit code; `null` when a signal ended it. */
    exit_code?: number | null;
    /** The signal that ended it. */
    signal?: string | null;
    /** It ran past its timeout and was killed. */
    timed_out: boolean;
    /**
     * Output past `output_limit` was dropped (only when the request
     * gave one: a stream keeps everything by default).
     */
    truncated?: boolean;
    type: "exit";
}
/** The stream failed; always the last event. */
export interface ErrorCommandEvent {
    /** What went wrong. */
    error: ApiError;
    type: "error";
}
/** One line of `POST /v1/commands/stream` (NDJSON). */
export type CommandEvent = StartCommandEvent | StdoutCommandEvent | StderrCommandEvent | ExitCommandEvent | ErrorCommandEvent;
/** What to run: `argv` without a shell, or `command` under `bash -c`. */
export interface CommandRequest {
    /** The program and its arguments, run without a shell. */
    argv?: string[] | null;
    /** A command line, run with `bash -c`. */
    command?: string | null;
    /** The working directory (default: the home directory). */
    cwd?: string | null;
    /** Variables added to the environment. */
    env?: Record<string, string>;
    /**
     * Keep at most this many bytes of each of stdout and stderr (default
     * 1048576); the rest is dropped and `truncated` is set.
     */
    output_limit?: number | null;
    /**
     * The request carries a secret: no record keeps its text, not even
     * its length (holmd's timeline and its exports, logs); a command's
     * argv and environment are recorded as `[sensitive]`; an image it
     * answers is not kept. Default false.
     */
    sensitive?: boolean;
    /** Text written to standard input, which is then closed. */
    stdin?: string | null;
    /**
     * Kill the command after this many milliseconds (default 60000, at most
     * 86400000). A timeout is a result with `timed_out`, not an error.
     */
    timeout_ms?: number | null;
}
/** `POST /v1/commands/run`: how a command ended. */
export interface CommandResult {
    /** How long it ran, in milliseconds. */
    duration_ms: number;
    /** The exit code; `null` when a signal ended the command. */
    exit_code?: number | null;
    /** The signal that ended the command, such as `SIGKILL`. */
    signal?: string | null;
    /** Standard error (invalid UTF-8 replaced). */
    stderr: string;
    /** Standard output (invalid UTF-8 replaced). */
    stdout: string;
    /** The command ran past its timeout and was killed. */
    timed_out: boolean;
    /** Output past `output_limit` was dropped. */
    truncated: boolean;
}
/**
 * One change of who holds the box, in order: holmd records them in the
 * box's traces.
 */
export interface ControlEvent {
    /** When, in RFC 3339 with milliseconds. */
    at: string;
    /** How control came back, for returned. */
    by?: ReturnedBy | null;
    /** The grant of the person, for taken and returned. */
    grant?: string | null;
    /** What. */
    kind: ControlEventKind;
    /** Who the grant is for. */
    label?: string | null;
    /** The reason given, for help_requested. */
    reason?: string | null;
    /** The screen. */
    screen: number;
    /** 1, 2, 3, … since the guest started. */
    seq: number;
}
/**
 * What happened to control.
 * - `help_requested`: The agent asked for help.
 * - `help_withdrawn`: The agent withdrew its request.
 * - `taken`: A person took control.
 * - `returned`: Control came back to the agent.
 */
export type ControlEventKind = "help_requested" | "help_withdrawn" | "taken" | "returned";
/** `GET /v1/viewers/events` on the guest. */
export interface ControlEvents {
    /** Changes each time the guest starts: sequence numbers start again. */
    boot: string;
    /**
     * The events after the one asked for, oldest first (the guest keeps
     * the last 256).
     */
    events: ControlEvent[];
}
/** A cookie, as `save_state` reads it and `load_state` sets it. */
export interface Cookie {
    /** The domain, such as `.example.com` or `127.0.0.1`. */
    domain: string;
    /** When it expires, in seconds since the epoch; `-1` for a session cookie. */
    expires: number;
    /** Hidden from scripts. */
    http_only: boolean;
    /** Its name. */
    name: string;
    /** The path. */
    path: string;
    /** `Strict`, `Lax` or `None`, when set. */
    same_site?: SameSite | null;
    /** Sent over HTTPS only. */
    secure: boolean;
    /** Its value. */
    value: string;
}
/**
 * Coordinates taken from a downscaled or cropped screenshot. The guest maps
 * each point to the screen: `screen = origin + point / scale`.
 */
export interface CoordinateSpace {
    /** The screenshot's `scale`. */
    scale: number;
    /** The left edge of the screenshot's region (default 0). */
    x?: number;
    /** The top edge of the screenshot's region (default 0). */
    y?: number;
}
/** `POST /v1/boxes`. */
export interface CreateBox {
    /** Where it runs. */
    placement?: Placement;
    /** What the box is. */
    spec?: BoxSpec;
}
/** `POST /v1/boxes/{id}/viewers`: a new viewer URL. */
export interface CreateViewer {
    /** Seconds until the URL stops working (default 3600, 1 to 86400). */
    expires_after_secs?: number | null;
    /**
     * Who it is for, shown in the box's traces when they take control
     * (up to 80 characters).
     */
    label?: string | null;
    /** `view` (default) or `control`. */
    mode?: ViewerMode | null;
    /** The screen, 0-based (default 0). */
    screen?: number;
}
/** `GET /v1/screens/{screen}/cursor`. */
export interface CursorPosition {
    /** The screen. */
    screen: number;
    /** Horizontal position in screen pixels. */
    x: number;
    /** Vertical position in screen pixels. */
    y: number;
}
/** One line of the JSONL export: a step as a dataset keeps it. */
export interface DatasetLine {
    /** What it did. */
    action: StepAction;
    /** When, in RFC 3339 with milliseconds. */
    at: string;
    /** 0, 1, 2, ... in order. */
    index: number;
    /** Where the step falls in a recording of its screen, when one ran. */
    recording?: RecordingOffset | null;
    /** The request id. */
    request_id: string;
    /**
     * The screenshot after it, as a path relative to the JSONL file
     * (`screenshots/<id>.png`), when one was taken and is kept.
     */
    screenshot?: string | null;
    /** The status answered. */
    status: number;
    /** Seconds since the first step. */
    t: number;
}
/**
 * What an element must be for a wait to end.
 * - `visible`: In the document and drawn with a size.
 * - `attached`: In the document.
 * - `hidden`: Not drawn, or not in the document.
 * - `detached`: Not in the document.
 */
export type ElementState = "visible" | "attached" | "hidden" | "detached";
/**
 * What a box is isolated by.
 * - `container`: Shares the host kernel, in its own namespaces.
 * - `microvm`: Has its own kernel.
 * - `vm`: A full virtual machine.
 * - `unknown`: The provider does not say.
 */
export type Environment = "container" | "microvm" | "vm" | "unknown";
/** The body of every error response. */
export interface ErrorBody {
    /** The error itself. */
    error: ApiError;
}
/**
 * Stable error codes. Each maps to one HTTP status.
 * - `invalid_request`: The request is malformed; `details.issues` names each wrong field.
 * - `unauthorized`: No credential, or a wrong one.
 * - `forbidden`: The credential is right but the action is not allowed.
 * - `not_found`: The resource does not exist.
 * - `route_not_found`: No route has this method and path.
 * - `method_not_allowed`: The route exists, but not with this method.
 * - `file_not_found`: A path in the box does not exist.
 * - `is_a_directory`: A directory was found where a file was needed.
 * - `not_a_directory`: A file was found where a directory was needed.
 * - `permission_denied`: The box refused access to a path.
 * - `already_exists`: The target already exists.
 * - `directory_not_empty`: A directory that should be removed is not empty.
 * - `conflict`: The resource is in a state that does not allow the request.
 * - `not_running`: The box is not running.
 * - `payload_too_large`: The request body is larger than allowed.
 * - `unsupported_media_type`: The body's `Content-Type` is missing or not what the route takes
 * - `limit_reached`: A limit of the server is reached, such as its most live boxes or
 * - `idempotency_key_reused`: An idempotency key was reused with a different body.
 * - `page_error`: The page refused: a script threw, or a navigation failed;
 * - `unknown_runtime`: The runtime named does not exist on this server.
 * - `unsupported`: The runtime or the box cannot do this.
 * - `not_ready`: A component needed for the request is not ready yet.
 * - `timeout`: The request took longer than allowed.
 * - `human_in_control`: A person controls the box through a takeover URL: the agent's input
 * - `guest_unreachable`: The box's agent could not be reached.
 * - `unavailable`: A dependency such as the container engine failed.
 * - `internal`: Something failed inside the server. The message never carries detail.
 */
export type ErrorCode = "invalid_request" | "unauthorized" | "forbidden" | "not_found" | "route_not_found" | "method_not_allowed" | "file_not_found" | "is_a_directory" | "not_a_directory" | "permission_denied" | "already_exists" | "directory_not_empty" | "conflict" | "not_running" | "payload_too_large" | "unsupported_media_type" | "limit_reached" | "idempotency_key_reused" | "page_error" | "unknown_runtime" | "unsupported" | "not_ready" | "timeout" | "human_in_control" | "guest_unreachable" | "unavailable" | "internal";
/** `POST /v1/browser/evaluate`: run a JavaScript expression in the page. */
export interface EvaluateRequest {
    /** Wait for a promise's value (default true). */
    await_promise?: boolean | null;
    /** The expression, such as `document.title` or `fetch('/x').then(r => r.status)`. */
    expression: string;
    /** The tab (default: the current tab). */
    tab?: string | null;
    /** The longest run, in milliseconds (default 30000, at most 120000). */
    timeout_ms?: number | null;
}
/**
 * The value of an evaluated expression. An exception thrown by the page is a
 * `page_error`, with the exception in `details`.
 */
export interface EvaluateResult {
    /** The JavaScript type, such as `number`, `string`, `object` or `undefined`. */
    type: string;
    /** `NaN`, `Infinity`, `-Infinity`, `-0` or a BigInt such as `12n`. */
    unserializable?: string | null;
    /**
     * The value as JSON; `null` for `undefined` and for values JSON cannot
     * hold (see `unserializable`).
     */
    value: unknown;
}
/** `POST /v1/boxes/{id}/extend`: more time before the box's lifetime ends. */
export interface ExtendBox {
    /**
     * Seconds added to the box's lifetime (at least 60). The lifetime never
     * passes its runtime's maximum, counted from the box's creation.
     */
    by_secs: number;
}
/** An entry in the box's file system. */
export interface FileInfo {
    /** Permission bits in octal, such as `644`. */
    mode: string;
    /** Last modification, in RFC 3339. */
    modified?: string | null;
    /** The last part of the path. */
    name: string;
    /** The absolute path. */
    path: string;
    /** Size in bytes. */
    size: number;
    /** Where a symbolic link points. */
    symlink_target?: string | null;
    /** What kind of entry it is. */
    type: FileType;
}
/** `GET /v1/files/stat`: the entry, or `exists: false`. */
export interface FileStat {
    /** Whether the path exists. */
    exists: boolean;
    /** Permission bits in octal, such as `644`. */
    mode?: string;
    /** Last modification, in RFC 3339. */
    modified?: string | null;
    /** The last part of the path. */
    name?: string;
    /** The absolute path. */
    path?: string;
    /** Size in bytes. */
    size?: number;
    /** Where a symbolic link points. */
    symlink_target?: string | null;
    /** What kind of entry it is. */
    type?: FileType;
}
/**
 * What kind of entry a path is.
 * - `file`: A regular file.
 * - `dir`: A directory.
 * - `symlink`: A symbolic link (not followed).
 * - `other`: A socket, device or pipe.
 */
export type FileType = "file" | "dir" | "symlink" | "other";
/**
 * `POST /v1/browser/fill`: set an input's, text area's or editable element's
 * value at once, firing `input` and `change`.
 */
export interface FillRequest {
    /** A CSS selector. */
    selector: string;
    /**
     * The request carries a secret: no record keeps its text, not even
     * its length (holmd's timeline and its exports, logs); a command's
     * argv and environment are recorded as `[sensitive]`; an image it
     * answers is not kept. Default false.
     */
    sensitive?: boolean;
    /** The tab (default: the current tab). */
    tab?: string | null;
    /** Wait this long for the element, in milliseconds (default 5000, at most 60000). */
    timeout_ms?: number | null;
    /** The new value. */
    value: string;
}
/**
 * `POST /v1/boxes/{id}/fork`: a new box with a copy of this box's files,
 * on the same runtime.
 */
export interface ForkBox {
    /** The copy's lifetime in seconds (default: the runtime's default). */
    expires_after_secs?: number | null;
    /** The copy's idle timeout in seconds (default: the original's). */
    idle_timeout_secs?: number | null;
    /** A name of your own for the copy. */
    name?: string | null;
}
/** A handback: when and how control came back to the agent. */
export interface Handback {
    /** When, in RFC 3339. */
    at: string;
    /** How. */
    by: ReturnedBy;
}
/**
 * The answer of the server's handoff routes: where the handoff is, and the
 * takeover URL to send a person.
 */
export interface Handoff {
    /** The box. */
    box_id: string;
    /** The person in control. */
    control?: HumanControl | null;
    /** When that URL stops working. */
    expires_at?: string | null;
    /** The last handback, since the last request for help. */
    handed_back?: Handback | null;
    /** The agent's request, while it waits or a person helps. */
    help?: HelpRequest | null;
    /** Where it is. */
    state: HandoffState;
    /**
     * The page a person opens to take control, with the reason shown
     * (answered when help is asked for).
     */
    takeover_url?: string | null;
}
/**
 * Where a handoff between the agent and a person is.
 * - `none`: Nobody asked for help and no person is in control.
 * - `waiting`: The agent asked for help; no person has taken control yet.
 * - `human_in_control`: A person is in control: the agent's input is refused.
 * - `handed_back`: A person took control and handed it back.
 */
export type HandoffState = "none" | "waiting" | "human_in_control" | "handed_back";
/** An agent's request for a person's help. */
export interface HelpRequest {
    /** Why, shown in the viewer page. */
    reason: string;
    /** The screen the person is asked to take. */
    screen: number;
    /** Since when, in RFC 3339. */
    since: string;
}
/** A person in control of the box through a takeover URL. */
export interface HumanControl {
    /** The grant whose URL they use. */
    grant: string;
    /** Who the grant is for, when it says. */
    label?: string | null;
    /** The screen they took. */
    screen: number;
    /** Since when, in RFC 3339. */
    since: string;
}
/**
 * An image format for screenshots.
 * - `png`: Lossless, the default.
 * - `jpeg`: Lossy, smallest and fastest to encode; `quality` 1 to 100.
 * - `webp`: Lossless WebP.
 */
export type ImageFormat = "png" | "jpeg" | "webp";
/** An image holm built, as `holm image ls` shows it. */
export interface ImageInfo {
    /** Its apps. */
    apps: string[];
    /** When it was built, in RFC 3339. */
    created_at?: string | null;
    /** Its display profile. */
    display?: Profile;
    /** The tag, such as `holm-box:1f2e3d4c5b6a7980`. */
    image: string;
    /** Its packages. */
    packages: string[];
    /** The runtime whose engine has it. */
    runtime: string;
    /** Its size in bytes. */
    size: number;
}
/** `GET /v1/info`. */
export interface Info {
    /** What this guest can do, such as `screenshot.webp` or `input.settle`. */
    capabilities: string[];
    /** The display profile. */
    profile: Profile;
    /** The guest protocol version. */
    proto: number;
    /** The screens. */
    screens: Screen[];
    /** The guest's version. */
    version: string;
}
/**
 * `POST /v1/screens/{screen}/input`: actions run in order.
 *
 * With `screenshot`, the response body is the image taken after the actions
 * (and after settling), with the screenshot headers; otherwise it is an
 * [`InputResult`].
 */
export interface InputRequest {
    /** The actions, at least one. */
    actions: Action[];
    /** Map coordinates from a screenshot's space to the screen. */
    coordinate_space?: CoordinateSpace | null;
    /** After the actions (and settling), answer with this screenshot. */
    screenshot?: ScreenshotOptions | null;
    /**
     * The request carries a secret: no record keeps its text, not even
     * its length (holmd's timeline and its exports, logs); a command's
     * argv and environment are recorded as `[sensitive]`; an image it
     * answers is not kept. Default false.
     */
    sensitive?: boolean;
    /** After the actions, wait until the screen stops changing. */
    settle?: Settle | null;
}
/** The answer to input without a screenshot. */
export interface InputResult {
    /**
     * The pointer after the actions, in screen pixels; `null` when the
     * display server cannot say (on Wayland, after another device may have
     * moved the pointer and before the agent moves it again).
     */
    cursor?: Point | null;
    /** How many actions ran. */
    performed: number;
    /** With `settle`: whether the screen stopped changing in time. */
    settled?: boolean | null;
}
/** What `load_state` did. */
export interface LoadStateResult {
    /** Cookies set. */
    cookies: number;
    /** Origins whose storage was set. */
    origins: number;
    /** Tabs left open to hold session storage. */
    tabs_opened: string[];
}
/** `POST /v1/files/mkdir`. */
export interface MkdirRequest {
    /** Make missing parents too, and accept an existing directory (default true). */
    parents?: boolean;
    /** An absolute path. */
    path: string;
}
/** `POST /v1/browser/navigate`. */
export interface NavigateRequest {
    /** The tab (default: the current tab). */
    tab?: string | null;
    /** The longest wait, in milliseconds (default 30000, at most 120000). */
    timeout_ms?: number | null;
    /** The address, such as `http://127.0.0.1:8000/` or a `data:` URL. */
    url: string;
    /** Wait for this point of loading (default `load`). */
    wait_until?: WaitUntil | null;
}
/** One node of the tree: a window, a button, a link, a text field... */
export interface Node {
    /**
     * The actions it offers (`click`, `press`, `jump`, `activate`...);
     * `click` does the first.
     */
    actions?: string[];
    /** Its children that show on the screen, in the app's order. */
    children?: Node[];
    /**
     * Whether children of it were left out, to keep within the depth or
     * the count asked.
     */
    cut?: boolean;
    /**
     * Its id, for `POST /v1/accessibility/act`: the app's bus name and the
     * node's object path (`:1.4/org/a11y/atspi/accessible/168`), valid
     * while the app keeps the node.
     */
    id: string;
    /** Its accessible name (a button's label, a link's text); may be empty. */
    name: string;
    /** Where it is on the screen, when the app says. */
    rect?: Rect | null;
    /**
     * Its role, as AT-SPI names it: `push button`, `link`, `entry`,
     * `frame`, `label`...
     */
    role: string;
    /**
     * Its states, as AT-SPI names them: `focused`, `focusable`, `enabled`,
     * `checked`, `editable`, `selected`... (`showing` and `visible` hold for
     * every node listed and are left out).
     */
    states: string[];
    /**
     * Its value: an editable text's contents (the first 2000 characters) or
     * a range's current number.
     */
    value?: string | null;
}
/** What an action on a node did. */
export interface NodeActed {
    /** The node, as it was found (without its children). */
    node: Node;
    /** Where the pointer clicked, when it did. */
    point?: number[] | null;
    /** How it was done. */
    via: ActedVia;
}
/**
 * `POST /v1/accessibility/act`: an action on a node, found by its id, or
 * by role and name on the screen (the first in the tree's order).
 */
export interface NodeAction {
    /** What to do. */
    action: NodeVerb;
    /** Its name, exactly. */
    name?: string | null;
    /**
     * The node's id from a listing. With `role` or `name`, the node must
     * still have them.
     */
    node?: string | null;
    /**
     * Use the pointer and the keyboard at the node's rectangle, not the
     * app's own action (default false).
     */
    pointer?: boolean | null;
    /** Its role, such as `push button`. */
    role?: string | null;
    /** The screen to look on and click on (default 0). */
    screen?: number | null;
    /**
     * The request carries a secret: no record keeps its text, not even
     * its length (holmd's timeline and its exports, logs); a command's
     * argv and environment are recorded as `[sensitive]`; an image it
     * answers is not kept. Default false.
     */
    sensitive?: boolean;
    /** The value, for `set_value`. */
    value?: string | null;
}
/**
 * What to do to a node.
 * - `click`: Click it: its first action (AT-SPI `DoAction`), or, when it has none
 * - `set_value`: Set its value: an editable text's contents, or a range's number;
 */
export type NodeVerb = "click" | "set_value";
/** `POST /v1/browser/tabs`: open a tab. */
export interface OpenTab {
    /** The longest wait, in milliseconds (default 30000, at most 120000). */
    timeout_ms?: number | null;
    /** Where it goes (default `about:blank`). */
    url?: string | null;
    /** Wait for this point of its loading (default `load`). */
    wait_until?: WaitUntil | null;
}
/** The web storage of one origin. */
export interface OriginState {
    /** Its `localStorage`. */
    local_storage?: StorageItem[];
    /** The origin, such as `http://127.0.0.1:8000`. */
    origin: string;
    /**
     * Its `sessionStorage` (per tab: `load_state` leaves a tab open on the
     * origin to hold it).
     */
    session_storage?: StorageItem[];
}
/** Standard output. */
export interface StdoutOutputEvent {
    /** The text. */
    data: string;
    type: "stdout";
    /** Pass this back as `cursor` to read what follows this event. */
    cursor: number;
}
/** Standard error. */
export interface StderrOutputEvent {
    /** The text. */
    data: string;
    type: "stderr";
    /** Pass this back as `cursor` to read what follows this event. */
    cursor: number;
}
/** Older events were dropped to bound memory; this many are gone. */
export interface GapOutputEvent {
    /** How many events were dropped. */
    missed: number;
    type: "gap";
    /** Pass this back as `cursor` to read what follows this event. */
    cursor: number;
}
/** The process ended; the last event. */
export interface ExitOutputEvent {
    /** The exit code. */
    exit_code?: number | null;
    /** The signal that ended it. */
    signal?: string | null;
    type: "exit";
    /** Pass this back as `cursor` to read what follows this event. */
    cursor: number;
}
/** One output event of a background process. */
export type OutputEvent = StdoutOutputEvent | StderrOutputEvent | GapOutputEvent | ExitOutputEvent;
/** `GET /v1/processes/{id}/output` without `follow`. */
export interface OutputPage {
    /** The events after the cursor. */
    data: OutputEvent[];
    /** The process ended and every event has been read. */
    done: boolean;
    /** Pass back as `cursor` to continue. */
    next_cursor: number;
}
/** `GET /v1/browser/text` and `GET /v1/browser/html`. */
export interface PageContent {
    /**
     * The text a person sees (`innerText` of the body), or the HTML of the
     * document.
     */
    content: string;
    /** The tab. */
    tab: string;
    /** Its title. */
    title: string;
    /** Its address. */
    url: string;
}
/** A list, one page of it. */
export interface PageOfAppInfo {
    /** The items. */
    data: AppInfo[];
    /** Pass back as `cursor` for the next page; `null` ends the list. */
    next_cursor?: string | null;
}
/** A list, one page of it. */
export interface PageOfBoxInfo {
    /** The items. */
    data: BoxInfo[];
    /** Pass back as `cursor` for the next page; `null` ends the list. */
    next_cursor?: string | null;
}
/** A list, one page of it. */
export interface PageOfFileInfo {
    /** The items. */
    data: FileInfo[];
    /** Pass back as `cursor` for the next page; `null` ends the list. */
    next_cursor?: string | null;
}
/** A list, one page of it. */
export interface PageOfImageInfo {
    /** The items. */
    data: ImageInfo[];
    /** Pass back as `cursor` for the next page; `null` ends the list. */
    next_cursor?: string | null;
}
/** A list, one page of it. */
export interface PageOfProcessInfo {
    /** The items. */
    data: ProcessInfo[];
    /** Pass back as `cursor` for the next page; `null` ends the list. */
    next_cursor?: string | null;
}
/** A list, one page of it. */
export interface PageOfPrunedImage {
    /** The items. */
    data: PrunedImage[];
    /** Pass back as `cursor` for the next page; `null` ends the list. */
    next_cursor?: string | null;
}
/** A list, one page of it. */
export interface PageOfRecording {
    /** The items. */
    data: Recording[];
    /** Pass back as `cursor` for the next page; `null` ends the list. */
    next_cursor?: string | null;
}
/** A list, one page of it. */
export interface PageOfRuntimeInfo {
    /** The items. */
    data: RuntimeInfo[];
    /** Pass back as `cursor` for the next page; `null` ends the list. */
    next_cursor?: string | null;
}
/** A list, one page of it. */
export interface PageOfScreen {
    /** The items. */
    data: Screen[];
    /** Pass back as `cursor` for the next page; `null` ends the list. */
    next_cursor?: string | null;
}
/** A list, one page of it. */
export interface PageOfStep {
    /** The items. */
    data: Step[];
    /** Pass back as `cursor` for the next page; `null` ends the list. */
    next_cursor?: string | null;
}
/** A list, one page of it. */
export interface PageOfTab {
    /** The items. */
    data: Tab[];
    /** Pass back as `cursor` for the next page; `null` ends the list. */
    next_cursor?: string | null;
}
/** A list, one page of it. */
export interface PageOfTrace {
    /** The items. */
    data: Trace[];
    /** Pass back as `cursor` for the next page; `null` ends the list. */
    next_cursor?: string | null;
}
/** A list, one page of it. */
export interface PageOfViewerGrant {
    /** The items. */
    data: ViewerGrant[];
    /** Pass back as `cursor` for the next page; `null` ends the list. */
    next_cursor?: string | null;
}
/** A list, one page of it. */
export interface PageOfWindow {
    /** The items. */
    data: Window[];
    /** Pass back as `cursor` for the next page; `null` ends the list. */
    next_cursor?: string | null;
}
/** Where a tab is after a page tool. */
export interface PageResult {
    /** The tab. */
    tab: string;
    /** Its title now. */
    title: string;
    /** Its address now. */
    url: string;
}
/**
 * Where a runtime runs its boxes.
 * - `host`: On the server's own machine.
 * - `remote`: At a cloud vendor.
 */
export type Place = "host" | "remote";
/** Where a box runs and for how long. */
export interface Placement {
    /** CPUs, such as `2` or `0.5`. */
    cpus?: number | null;
    /**
     * The most the box may write to its own disk (its files outside
     * volumes), such as `10g` or `512m`: 32m to 1t, default 10g. The
     * server measures a running box's use every few seconds and stops a
     * box past it (`stopped`, with a reason that begins `disk_limit`).
     * Docker and podman only; a vendor's box has the vendor's disk.
     */
    disk?: string | null;
    /** The box is removed this many seconds after it is created (at least 60). */
    expires_after_secs?: number | null;
    /**
     * The box is removed when no command came through the server for this
     * many seconds (at least 60).
     */
    idle_timeout_secs?: number | null;
    /** Memory, such as `4g` or `512m`. */
    memory?: string | null;
    /**
     * The most processes and threads the box may have (64 to 4194304;
     * default: the runtime's, 4096 unless its table says otherwise).
     */
    pids_limit?: number | null;
    /** The runtime (default: the server's default). */
    runtime?: string | null;
}
/** A point in screen pixels; `0` is valid. */
export interface Point {
    /** Horizontal position. */
    x: number;
    /** Vertical position. */
    y: number;
}
/**
 * `POST /v1/browser/press`: press a key, such as `Enter`, `ArrowDown`, `a`
 * or `Control+a`.
 */
export interface PressRequest {
    /**
     * The key or chord, named as in docs/keys.md (`Enter`, `ArrowDown`, `a`,
     * `Control+a`); a single character is sent to the page as written.
     */
    key: string;
    /** A CSS selector to focus first. */
    selector?: string | null;
    /** The tab (default: the current tab). */
    tab?: string | null;
    /** Wait this long for the element, in milliseconds (default 5000, at most 60000). */
    timeout_ms?: number | null;
}
/** A background process. */
export interface ProcessInfo {
    /** What runs, as a command line for people. */
    command: string;
    /** The exit code, once it ended with one. */
    exit_code?: number | null;
    /** The guest's id for it, such as `p_3`. */
    id: string;
    /** The cursor after its newest output event. */
    next_cursor: number;
    /** The process id. */
    pid: number;
    /** The signal that ended it. */
    signal?: string | null;
    /** When it started, in RFC 3339. */
    started_at: string;
    /** Whether it still runs. */
    state: ProcessState;
    /** The tag given at start. */
    tag?: string | null;
}
/** `POST /v1/processes`: start a process in the background. */
export interface ProcessStart {
    /** The program and its arguments, run without a shell. */
    argv?: string[] | null;
    /** A command line, run with `bash -c`. */
    command?: string | null;
    /** The working directory (default: the home directory). */
    cwd?: string | null;
    /** Variables added to the environment. */
    env?: Record<string, string>;
    /**
     * The request carries a secret: no record keeps its text, not even
     * its length (holmd's timeline and its exports, logs); a command's
     * argv and environment are recorded as `[sensitive]`; an image it
     * answers is not kept. Default false.
     */
    sensitive?: boolean;
    /** A name of your own to find the process by. */
    tag?: string | null;
}
/**
 * Whether a background process still runs.
 * - `running`: It runs.
 * - `exited`: It ended.
 */
export type ProcessState = "running" | "exited";
/**
 * The display server a box runs.
 * - `x11`: Xvfb, fluxbox and x11vnc.
 * - `wayland`: Headless sway and wayvnc.
 */
export type Profile = "x11" | "wayland";
/** `POST /v1/images/prune`, also the body of `holm image prune`. */
export interface PruneImages {
    /**
     * Also remove unused images made for this holm version (by default
     * only those made for other versions go).
     */
    all?: boolean;
    /** Say what would be removed, and remove nothing. */
    dry_run?: boolean;
    /** The runtime whose engine is pruned (default: every runtime). */
    runtime?: string | null;
}
/** An image `POST /v1/images/prune` removed (or would remove). */
export interface PrunedImage {
    /** Its tag, or its id when it has none. */
    image: string;
    /** The runtime whose engine held it. */
    runtime: string;
    /** Its size in bytes, shared layers counted. */
    size: number;
}
/**
 * When a new box counts as usable.
 * - `browser`: Every component answers, Chromium too.
 * - `desktop`: The desktop answers (display, window manager, VNC); Chromium may
 */
export type Ready = "browser" | "desktop";
/** One recording. */
export interface Recording {
    /** The file's size so far. */
    bytes: number;
    /** When it ended (RFC 3339, UTC), once it has. */
    ended_at?: string | null;
    /** What went wrong, when it failed. */
    error?: string | null;
    /**
     * Its file's name, for `GET /v1/recordings/{file}`, such as
     * `screen0-20261202T101500Z.mp4`.
     */
    file: string;
    /** Frames a second. */
    fps: number;
    /** The video's height. */
    height: number;
    /** The screen recorded. */
    screen: number;
    /**
     * When its first frame was taken (RFC 3339, UTC): frame `n` of the
     * video shows the screen at `started_at + n / fps`.
     */
    started_at: string;
    /** Whether it runs. */
    state: RecordingState;
    /** Why it ended, once it has. */
    stopped_by?: StopReason | null;
    /** The video's width, the screen's. */
    width: number;
}
/** Where a step falls in a recording. */
export interface RecordingOffset {
    /** The recorded screen. */
    screen: number;
    /** Seconds from the recording's start to the step. */
    seconds: number;
}
/** `POST /v1/recordings`: what to record. */
export interface RecordingStart {
    /** Frames a second, 1 to 30 (default 10). */
    fps?: number | null;
    /** The screen, 0 when not given. */
    screen?: number;
}
/**
 * Whether a recording runs.
 * - `recording`: Frames are being written.
 * - `finished`: It ended and its file is complete.
 * - `failed`: The encoder failed; the file holds what was written before.
 */
export type RecordingState = "recording" | "finished" | "failed";
/** `POST /v1/recordings/stop`: which screen's recording to stop. */
export interface RecordingStop {
    /** The screen, 0 when not given. */
    screen?: number;
}
/** A rectangle in the screen's pixels. */
export interface Rect {
    /** Its height. */
    height: number;
    /** Its width. */
    width: number;
    /** Its left edge. */
    x: number;
    /** Its top edge. */
    y: number;
}
/**
 * A rectangle of a screen.
 *
 * In a query string it is written `x,y,width,height`; in JSON either that
 * string or an object.
 */
export interface Region {
    /** Height, at least 1. */
    height: number;
    /** Width, at least 1. */
    width: number;
    /** Left edge. */
    x: number;
    /** Top edge. */
    y: number;
}
/** `POST /v1/files/remove`. */
export interface RemoveRequest {
    /** An absolute path. */
    path: string;
    /** Remove a directory and everything in it (default false). */
    recursive?: boolean;
}
/** `POST /v1/files/rename`. */
export interface RenameRequest {
    /** The absolute path to move. */
    from: string;
    /** Replace `to` if it exists (default false). */
    overwrite?: boolean;
    /** The absolute path to move it to. */
    to: string;
}
/**
 * `PUT /v1/runtimes/{name}`: adds a remote runtime or replaces one whole
 * (a missing `api_key` keeps the stored key when the vendor is the same).
 */
export interface ReplaceRuntime {
    /** The vendor's key. Encrypted before it is stored, never returned. */
    api_key?: string | null;
    /** Its settings that are not secret. */
    fields?: Record<string, unknown>;
    /** The vendor. */
    provider: string;
}
/**
 * How control came back to the agent.
 * - `released`: The person pressed the page's hand-back button.
 * - `disconnected`: The person's takeover connections closed and stayed closed for the
 * - `revoked`: Their URL was revoked.
 * - `expired`: Their URL expired.
 * - `reset`: The box's viewer key changed (a new desktop, or a reset).
 */
export type ReturnedBy = "released" | "disconnected" | "revoked" | "expired" | "reset";
/** A runtime, as `GET /v1/runtimes` shows it. */
export interface RuntimeInfo {
    /** What it can do. */
    can: Can;
    /** Whether a box that names no runtime goes here. */
    default: boolean;
    /** Container, microVM, VM or unknown. */
    environment: Environment;
    /** A remote runtime's settings that are not secret, as given. */
    fields?: Record<string, unknown>;
    /**
     * A remote runtime's key version: 1 when it was added, one more each
     * time its key is replaced.
     */
    key_version?: number | null;
    /** The lifetime of a box that asks for none, in seconds. */
    lifetime_secs: number;
    /** The longest lifetime a box may ask for, in seconds. */
    max_lifetime_secs: number;
    /** The name boxes use to pick it. */
    name: string;
    /** Host or remote. */
    place: Place;
    /** The engine or vendor behind it, such as `docker` or `e2b`. */
    provider: string;
    /** Why it is unavailable. */
    reason?: string | null;
    /** The names of the secrets it holds, never their values. */
    secrets?: string[];
    /** Whether it takes boxes now. */
    state: RuntimeState;
}
/**
 * Whether a runtime can take boxes now.
 * - `available`: It answers.
 * - `unavailable`: It does not; `reason` says why.
 */
export type RuntimeState = "available" | "unavailable";
/**
 * A cookie's `SameSite`.
 * - `Strict`: Same site only.
 * - `Lax`: Same site, and top-level navigations.
 * - `None`: Every request (needs `secure`).
 */
export type SameSite = "Strict" | "Lax" | "None";
/** One screen of a box. */
export interface Screen {
    /** The display name inside the box, such as `:1`. */
    display: string;
    /** Height in pixels. */
    height: number;
    /** 0 for the first screen. */
    index: number;
    /** Whether its display server answers. */
    ready: boolean;
    /** Width in pixels. */
    width: number;
}
/** A screen's viewer URLs, as `GET /v1/boxes/{id}` shows them. */
export interface ScreenViewers {
    /** When both stop working, in RFC 3339. */
    expires_at: string;
    /** The screen. */
    screen: number;
    /** Mouse, keyboard and clipboard. */
    takeover_url: string;
    /** Watch only. */
    view_url: string;
}
/**
 * How to take a screenshot: the query of
 * `GET /v1/screens/{screen}/screenshot`, or `screenshot` in an input request.
 */
export interface ScreenshotOptions {
    /** Draw the mouse pointer into the image. */
    cursor?: boolean | null;
    /** `png` (default), `jpeg` or `webp`. */
    format?: ImageFormat | null;
    /** Downscale so the image is at most this tall (never upscales). */
    max_height?: number | null;
    /** Downscale so the image is at most this wide (never upscales). */
    max_width?: number | null;
    /** JPEG quality, 1 to 100 (default 80). */
    quality?: number | null;
    /** Only this part of the screen. */
    region?: Region | null;
    /** Scale by this factor, above 0 and at most 1. */
    scale?: number | null;
}
/** `GET /v1/health`. */
export interface ServerHealth {
    /** Always `ok` when the server answers. */
    status: string;
    /** The server's version. */
    version: string;
}
/** Wait after the actions until the screen stops changing. */
export interface Settle {
    /** How long the screen must stay unchanged, in milliseconds (default 100). */
    quiet_ms?: number;
    /** The longest wait, in milliseconds (default 2000, at most 30000). */
    timeout_ms?: number;
}
/** An image the server kept with the timeline. */
export interface Shot {
    /** Its size in bytes. */
    bytes: number;
    /** Its id: the trace id of the request that answered it. */
    id: string;
    /** `image/png`, `image/jpeg` or `image/webp`. */
    media_type: string;
}
/** A signal by name or number. */
export type SignalName = string | number;
/** `POST /v1/processes/{id}/signal`. */
export interface SignalRequest {
    /** `SIGTERM`, `TERM`, `KILL`, `INT`, `HUP`, `USR1`, ... or a number. */
    signal: SignalName;
}
/**
 * A stage of bringing a box up, in the order they come.
 * - `image`: Its image is prepared (built, or found), or a fork's files copied.
 * - `container`: Its machine (a container) is made on the runtime.
 * - `desktop`: Its desktop starts: display server, window manager, viewer.
 * - `browser`: Its browser starts.
 */
export type Stage = "image" | "container" | "desktop" | "browser";
/** One step of a box's timeline. */
export interface Step {
    /** What it did. */
    action: StepAction;
    /** When the request came, in RFC 3339 with milliseconds. */
    at: string;
    /** The error code, when the server refused or failed. */
    code?: string | null;
    /** Milliseconds until the answer's head. */
    duration_ms: number;
    /** Sorts in the order of the requests; pass the last as `cursor`. */
    id: string;
    /** The request: its method and path (without the query). */
    method: string;
    /** The path, without its query. */
    path: string;
    /** Where the step falls in a recording of its screen, when one ran. */
    recording?: RecordingOffset | null;
    /** The request id (empty for a change of control, which the box saw). */
    request_id: string;
    /**
     * The screenshot after it: the image its own answer carried, or the
     * next screenshot taken before any other action.
     */
    screenshot?: StepScreenshot | null;
    /** The status answered. */
    status: number;
}
/**
 * What a request did, as its trace keeps it: never a secret, a token, a
 * file's content or a large body.
 */
export interface StepAction {
    /** Its kind. */
    kind: StepKind;
    /**
     * What it was, in a word or two: `click`, `type`, `run`, `write`,
     * `navigate`, `taken`, `stop`, ...
     */
    name: string;
    /**
     * Its parameters, redacted: a command's environment keeps its names
     * only, standard input and file contents their size only, long text
     * is cut.
     */
    params?: Record<string, unknown>;
}
/**
 * What kind of action a step is.
 * - `input`: Mouse and keyboard on a screen.
 * - `command`: A command run, streamed, or a background process started or
 * - `page`: A page tool: navigate, click or type by selector, evaluate, tabs,
 * - `file`: A file written, a directory made, a path removed or renamed.
 * - `window`: A window moved, focused or closed, or the clipboard set.
 * - `screenshot`: A screenshot of a screen or of a page, taken on its own.
 * - `control`: Who holds control: a person took or handed back a screen, a viewer
 * - `lifecycle`: The box itself: stop, start, pause, resume, fork, extend, remove.
 */
export type StepKind = "input" | "command" | "page" | "file" | "window" | "screenshot" | "control" | "lifecycle";
/** The screenshot after a step. */
export interface StepScreenshot {
    /** When it was asked for, in RFC 3339 with milliseconds. */
    at: string;
    /** Its size in bytes. */
    bytes: number;
    /** Its file in an export (`screenshots/` + this). */
    file: string;
    /**
     * The image's id; `GET /v1/boxes/{id}/timeline/screenshots/{shot}`
     * answers it while it is kept.
     */
    id: string;
    /**
     * Whether the server still keeps it (the oldest are dropped past the
     * server's bounds).
     */
    kept: boolean;
    /** `image/png`, `image/jpeg` or `image/webp`. */
    media_type: string;
    /** The request that took it. */
    request_id: string;
}
/**
 * Why a recording ended.
 * - `requested`: Someone asked (`POST /v1/recordings/stop`).
 * - `size_limit`: It reached [`MAX_RECORDING_BYTES`], or all recordings
 * - `box_stopping`: The box was stopping.
 * - `screen_resized`: The screen changed size; a video keeps one frame size.
 * - `failed`: The encoder ended or the screen could not be captured.
 */
export type StopReason = "requested" | "size_limit" | "box_stopping" | "screen_resized" | "failed";
/** One item of a storage area. */
export interface StorageItem {
    /** The key. */
    name: string;
    /** The value. */
    value: string;
}
/**
 * `GET /v1/browser/state` (save) and `POST /v1/browser/state` (load): the
 * browser's cookies, and the local and session storage of every origin open
 * in a tab. Like Playwright's storage state, in snake_case.
 */
export interface StorageState {
    /** Every cookie of the browser. */
    cookies?: Cookie[];
    /** The storage of each origin open in a tab when it was saved. */
    origins?: OriginState[];
}
/** A tab of the box's browser (screen 0). */
export interface Tab {
    /** Whether page tools act on it when no `tab` is given. */
    current: boolean;
    /** The DevTools target id; pass it as `tab`. */
    id: string;
    /** Its title. */
    title: string;
    /** Its address. */
    url: string;
}
/** The terminal runs; always the first frame. */
export interface ReadyTerminalEvent {
    /** Its size. */
    cols: number;
    /** The process id of its program in the box (its session leader). */
    pid: number;
    /** Its size. */
    rows: number;
    type: "ready";
}
/** A text frame was refused; nothing changed and the terminal goes on. */
export interface ErrorTerminalEvent {
    /** What was wrong. */
    error: ApiError;
    type: "error";
}
/** The program ended, after its last output; always the last frame. */
export interface ExitTerminalEvent {
    /** Its exit code; `null` when a signal ended it. */
    exit_code?: number | null;
    /** The signal that ended it. */
    signal?: string | null;
    type: "exit";
}
/** A text frame from the server. */
export type TerminalEvent = ReadyTerminalEvent | ErrorTerminalEvent | ExitTerminalEvent;
/**
 * One request through the server to a box, as `GET /v1/boxes/{id}/traces`
 * shows it. It never holds a body, a secret or a query value.
 */
export interface Trace {
    /** What the request did, when it was an action (a timeline step). */
    action?: StepAction | null;
    /**
     * For a screenshot taken on its own: the step it came after (the
     * last action, when no screenshot had followed it yet).
     */
    after?: string | null;
    /** When the request came, in RFC 3339 with milliseconds. */
    at: string;
    /** The box. */
    box_id: string;
    /** The error code, when the server refused or failed. */
    code?: string | null;
    /**
     * A change of who holds control, as the box's guest saw it: the trace
     * then has method `CONTROL` and the screen's viewer as its path.
     */
    control?: ControlEvent | null;
    /** Milliseconds until the answer's head was sent (streams go on after). */
    duration_ms: number;
    /** Sorts in the order the requests came; pass the last as `cursor`. */
    id: string;
    /** The HTTP method. */
    method: string;
    /** The path, without its query. */
    path: string;
    /** The names of the query parameters (their values are not kept). */
    query?: string[];
    /** The request id (empty for a control event). */
    request_id: string;
    /** The image the request answered, when the server kept it. */
    screenshot?: Shot | null;
    /** The status answered. */
    status: number;
}
/**
 * `GET /v1/accessibility`: the tree of the focused window, or of every
 * window of the screen.
 */
export interface Tree {
    /** How many nodes the tree has. */
    count: number;
    /** The roots: the focused window, or each app's windows on the screen. */
    nodes: Node[];
    /** The screen. */
    screen: number;
    /**
     * Whether nodes were left out to keep within the depth or the count
     * (the nodes whose children were left out say `cut`).
     */
    truncated: boolean;
    /**
     * The focused window (its id in `GET /v1/windows`), when the tree is
     * only its; `null` for the whole screen, or when no window has the
     * focus.
     */
    window?: number | null;
}
/**
 * `POST /v1/browser/type`: type text as key presses, into the element that
 * matches (focused first) or wherever the focus is.
 */
export interface TypeRequest {
    /** A CSS selector to focus first. */
    selector?: string | null;
    /**
     * The request carries a secret: no record keeps its text, not even
     * its length (holmd's timeline and its exports, logs); a command's
     * argv and environment are recorded as `[sensitive]`; an image it
     * answers is not kept. Default false.
     */
    sensitive?: boolean;
    /** The tab (default: the current tab). */
    tab?: string | null;
    /** The text; `\n` presses Enter and `\t` Tab. */
    text: string;
    /** Wait this long for the element, in milliseconds (default 5000, at most 60000). */
    timeout_ms?: number | null;
}
/**
 * Whether a viewer needs a token.
 * - `token`: Each URL carries its own token (the default).
 * - `none`: No token: only with `bind: loopback`, for tools on the server's host.
 */
export type ViewerAuth = "token" | "none";
/**
 * Where the box's viewer port is published.
 * - `loopback`: On the host's loopback address; people watch through holmd (the default).
 * - `any`: On every interface of the host, with a token required; the URLs name
 */
export type ViewerBind = "loopback" | "any";
/**
 * One viewer URL and what it allows. The URL carries the credential: hand
 * it only to the person it is for.
 */
export interface ViewerGrant {
    /** When it was made, in RFC 3339. */
    created_at: string;
    /** When it stops working, in RFC 3339. */
    expires_at: string;
    /** The grant's id, such as `vg_3f9c0a1b2c4d`. */
    id: string;
    /** Who it is for. */
    label?: string | null;
    /** `view` or `control`. */
    mode: ViewerMode;
    /** When it was revoked. */
    revoked_at?: string | null;
    /** The screen. */
    screen: number;
    /** The page to open in a browser; its token is after `#`. */
    url: string;
}
/**
 * What a viewer may do.
 * - `view`: Watch only: every input message is dropped where the stream is served.
 * - `control`: Mouse, keyboard and clipboard: a person takes control.
 */
export type ViewerMode = "view" | "control";
/** `spec.policy`: how people reach a box's viewers. */
export interface ViewerPolicy {
    /**
     * The host name or address the URLs use with `bind: any`, such as
     * `boxes.example.com`: no scheme, port or path.
     */
    advertise?: string | null;
    /** `token` (default) or `none` (only with `bind: loopback`). */
    auth?: ViewerAuth;
    /** `loopback` (default) or `any`. */
    bind?: ViewerBind;
}
/** `POST /v1/browser/wait`: wait until an element is in a state. */
export interface WaitRequest {
    /** A CSS selector. */
    selector: string;
    /** The state to wait for (default `visible`). */
    state?: ElementState | null;
    /** The tab (default: the current tab). */
    tab?: string | null;
    /**
     * The longest wait, in milliseconds (default 5000, at most 60000). Not
     * reaching the state in time is a `timeout` error.
     */
    timeout_ms?: number | null;
}
/**
 * How far a navigation must get before the answer.
 * - `load`: The `load` event: the page and its resources.
 * - `dom_content_loaded`: `DOMContentLoaded`: the document is parsed.
 * - `commit`: Answer once the navigation has started.
 */
export type WaitUntil = "load" | "dom_content_loaded" | "commit";
/** One top-level window of the desktop. */
export interface Window {
    /**
     * The app it belongs to: the X11 `WM_CLASS` class, or the Wayland
     * `app_id` (an Xwayland window's class).
     */
    app: string;
    /** Whether it has the keyboard focus. */
    focused: boolean;
    /** Its height in pixels. */
    height: number;
    /**
     * Its id, for `POST /v1/windows/{window}`: on X11 the screen in the
     * high 32 bits and the client window's XID in the low; on Wayland
     * sway's container id. Valid while the window lives.
     */
    id: number;
    /** The process that owns it, when the server knows. */
    pid?: number | null;
    /** The screen it is on. */
    screen: number;
    /** Its title. */
    title: string;
    /** Its width in pixels. */
    width: number;
    /**
     * Its left edge in the screen's pixels (the window's contents, without
     * the window manager's frame).
     */
    x: number;
    /** Its top edge in the screen's pixels. */
    y: number;
}
/** What a window action did. */
export interface WindowActed {
    /**
     * Whether the change was seen within the wait (a few seconds): the
     * window focused, at the place or size asked (as near as its size
     * hints allow), or gone after a close.
     */
    applied: boolean;
    /** The window as it is after the action; `null` once it has closed. */
    window?: Window | null;
}
/** Raise it and give it the keyboard focus. */
export interface FocusWindowAction {
    action: "focus";
}
/**
 * Move its top-left corner (its contents') to `x`, `y` of its screen.
 * On Wayland a tiled window becomes floating first.
 */
export interface MoveWindowAction {
    action: "move";
    /** The left edge, in the screen's pixels. */
    x: number;
    /** The top edge, in the screen's pixels. */
    y: number;
}
/**
 * Give its contents this size. On Wayland a tiled window becomes
 * floating first.
 */
export interface ResizeWindowAction {
    action: "resize";
    /** The height in pixels, 1 to 16384. */
    height: number;
    /** The width in pixels, 1 to 16384. */
    width: number;
}
/** Ask it to close, as its close button does (the app may ask first). */
export interface CloseWindowAction {
    action: "close";
}
/** `POST /v1/windows/{window}`: what to do to a window. */
export type WindowAction = FocusWindowAction | MoveWindowAction | ResizeWindowAction | CloseWindowAction;
/** The field names of the objects `create` sorts its options into. */
export declare const FIELDS: {
    readonly BoxSpec: readonly ["apps", "browser", "display", "labels", "name", "packages", "policy", "profile", "ready", "record", "screen_size", "screens"];
    readonly Placement: readonly ["cpus", "disk", "expires_after_secs", "idle_timeout_secs", "memory", "pids_limit", "runtime"];
};
