import { HolmError, type HolmErrorInit } from "./holm-error.js";
export { HolmError, BoxNotRunningError, type HolmErrorInit } from "./holm-error.js";
/** `invalid_request`: The request is malformed; `details.issues` names each wrong field. */
export declare class InvalidRequestError extends HolmError {
    static readonly code = "invalid_request";
    constructor(message: string, init?: HolmErrorInit);
}
/** `unauthorized`: No credential, or a wrong one. */
export declare class UnauthorizedError extends HolmError {
    static readonly code = "unauthorized";
    constructor(message: string, init?: HolmErrorInit);
}
/** `forbidden`: The credential is right but the action is not allowed. */
export declare class ForbiddenError extends HolmError {
    static readonly code = "forbidden";
    constructor(message: string, init?: HolmErrorInit);
}
/** `not_found`: The resource does not exist. */
export declare class NotFoundError extends HolmError {
    static readonly code = "not_found";
    constructor(message: string, init?: HolmErrorInit);
}
/** `route_not_found`: No route has this method and path. */
export declare class RouteNotFoundError extends HolmError {
    static readonly code = "route_not_found";
    constructor(message: string, init?: HolmErrorInit);
}
/** `method_not_allowed`: The route exists, but not with this method. */
export declare class MethodNotAllowedError extends HolmError {
    static readonly code = "method_not_allowed";
    constructor(message: string, init?: HolmErrorInit);
}
/** `file_not_found`: A path in the box does not exist. */
export declare class FileNotFoundError extends HolmError {
    static readonly code = "file_not_found";
    constructor(message: string, init?: HolmErrorInit);
}
/** `is_a_directory`: A directory was found where a file was needed. */
export declare class IsADirectoryError extends HolmError {
    static readonly code = "is_a_directory";
    constructor(message: string, init?: HolmErrorInit);
}
/** `not_a_directory`: A file was found where a directory was needed. */
export declare class NotADirectoryError extends HolmError {
    static readonly code = "not_a_directory";
    constructor(message: string, init?: HolmErrorInit);
}
/** `permission_denied`: The box refused access to a path. */
export declare class PermissionDeniedError extends HolmError {
    static readonly code = "permission_denied";
    constructor(message: string, init?: HolmErrorInit);
}
/** `already_exists`: The target already exists. */
export declare class AlreadyExistsError extends HolmError {
    static readonly code = "already_exists";
    constructor(message: string, init?: HolmErrorInit);
}
/** `directory_not_empty`: A directory that should be removed is not empty. */
export declare class DirectoryNotEmptyError extends HolmError {
    static readonly code = "directory_not_empty";
    constructor(message: string, init?: HolmErrorInit);
}
/** `conflict`: The resource is in a state that does not allow the request. */
export declare class ConflictError extends HolmError {
    static readonly code = "conflict";
    constructor(message: string, init?: HolmErrorInit);
}
/** `not_running`: The box is not running. */
export declare class NotRunningError extends HolmError {
    static readonly code = "not_running";
    constructor(message: string, init?: HolmErrorInit);
}
/** `payload_too_large`: The request body is larger than allowed. */
export declare class PayloadTooLargeError extends HolmError {
    static readonly code = "payload_too_large";
    constructor(message: string, init?: HolmErrorInit);
}
/**
 * `unsupported_media_type`: The body's `Content-Type` is missing or not what the route takes
 * (`application/json` for a JSON body).
 */
export declare class UnsupportedMediaTypeError extends HolmError {
    static readonly code = "unsupported_media_type";
    constructor(message: string, init?: HolmErrorInit);
}
/**
 * `limit_reached`: A limit of the server is reached, such as its most live boxes or
 * concurrent image builds; `details` gives the limit.
 */
export declare class LimitReachedError extends HolmError {
    static readonly code = "limit_reached";
    constructor(message: string, init?: HolmErrorInit);
}
/** `idempotency_key_reused`: An idempotency key was reused with a different body. */
export declare class IdempotencyKeyReusedError extends HolmError {
    static readonly code = "idempotency_key_reused";
    constructor(message: string, init?: HolmErrorInit);
}
/**
 * `page_error`: The page refused: a script threw, or a navigation failed;
 * `details` says what the page said.
 */
export declare class PageErrorError extends HolmError {
    static readonly code = "page_error";
    constructor(message: string, init?: HolmErrorInit);
}
/** `unknown_runtime`: The runtime named does not exist on this server. */
export declare class UnknownRuntimeError extends HolmError {
    static readonly code = "unknown_runtime";
    constructor(message: string, init?: HolmErrorInit);
}
/** `unsupported`: The runtime or the box cannot do this. */
export declare class UnsupportedError extends HolmError {
    static readonly code = "unsupported";
    constructor(message: string, init?: HolmErrorInit);
}
/** `not_ready`: A component needed for the request is not ready yet. */
export declare class NotReadyError extends HolmError {
    static readonly code = "not_ready";
    constructor(message: string, init?: HolmErrorInit);
}
/** `timeout`: The request took longer than allowed. */
export declare class TimeoutError extends HolmError {
    static readonly code = "timeout";
    constructor(message: string, init?: HolmErrorInit);
}
/**
 * `human_in_control`: A person controls the box through a takeover URL: the agent's input
 * waits until they hand it back.
 */
export declare class HumanInControlError extends HolmError {
    static readonly code = "human_in_control";
    constructor(message: string, init?: HolmErrorInit);
}
/** `guest_unreachable`: The box's agent could not be reached. */
export declare class GuestUnreachableError extends HolmError {
    static readonly code = "guest_unreachable";
    constructor(message: string, init?: HolmErrorInit);
}
/** `unavailable`: A dependency such as the container engine failed. */
export declare class UnavailableError extends HolmError {
    static readonly code = "unavailable";
    constructor(message: string, init?: HolmErrorInit);
}
/** `internal`: Something failed inside the server. The message never carries detail. */
export declare class InternalError extends HolmError {
    static readonly code = "internal";
    constructor(message: string, init?: HolmErrorInit);
}
/** The class of each error code. */
export declare const ERRORS: Record<string, new (message: string, init?: HolmErrorInit) => HolmError>;
