// The transport: one request to holmd with `fetch`, with its token, timeout,
// the one error shape thrown as typed errors, and retries of `not_ready`
// after `Retry-After`. The client and every box share one.
import { Lines, REQUEST_ID_HEADER, fromAnswer, pathOf, queryOf, sleep, timedOut, unreachable } from "./core.js";
import { HolmError } from "./errors.js";
/** Sends requests to one holmd. */
export class Transport {
    config;
    /** How many times a call was tried again after `not_ready`. */
    retries = 0;
    constructor(config) {
        this.config = config;
    }
    /** The URL of a route, its path parameters filled in. */
    url(route, params) {
        return this.config.url + pathOf(route, params);
    }
    /** Sends a request and answers its response, throwing the error it
     * carries; `not_ready` is tried again as the client's `Retry` says. The
     * timeout covers the body too: read it before it runs out. */
    async send(route, params, o = {}) {
        const url = this.url(route, params) + queryOf(route, o.query);
        const headers = { ...this.config.headers, ...this.config.auth(), ...(o.headers ?? {}) };
        let body;
        if (o.json !== undefined) {
            body = JSON.stringify(o.json);
            headers["content-type"] = "application/json";
        }
        else if (o.body !== undefined) {
            body = o.body;
            // The web edge refuses a body without its type.
            headers["content-type"] ??= "application/octet-stream";
        }
        const ms = o.timeoutMs === undefined ? this.config.timeoutMs : o.timeoutMs;
        const started = Date.now();
        for (let attempt = 0;; attempt++) {
            const abort = new AbortController();
            const timer = ms === null ? undefined : setTimeout(() => abort.abort(timedOut(url, ms)), ms);
            const done = () => clearTimeout(timer);
            let response;
            try {
                response = await this.config.fetch(url, { method: route.method, headers, body, signal: abort.signal });
            }
            catch (e) {
                done();
                if (abort.signal.aborted)
                    throw abort.signal.reason;
                throw unreachable(url, e);
            }
            if (response.status < 400 || o.accept?.includes(response.status)) {
                return { response, url, done };
            }
            let text;
            try {
                text = await response.text();
            }
            catch (e) {
                throw abort.signal.aborted ? abort.signal.reason : unreachable(url, e);
            }
            finally {
                done();
            }
            const error = fromAnswer(response.status, text, response.headers.get(REQUEST_ID_HEADER), url);
            const delay = o.retry === false ? null : this.config.retry.delayMs(error, response.headers.get("retry-after"), attempt);
            if (delay === null || Date.now() - started + delay > this.config.retry.budgetMs)
                throw error;
            this.retries++;
            await sleep(delay);
        }
    }
    /** Sends a request and answers its JSON body (undefined for 204). */
    async json(route, params, o = {}) {
        const { response, url, done } = await this.send(route, params, o);
        try {
            const text = await response.text();
            if (response.status === 204 || !text)
                return undefined;
            try {
                return JSON.parse(text);
            }
            catch {
                throw new HolmError(`${url} answered a body that is not JSON`);
            }
        }
        catch (e) {
            throw this.#bodyError(e, url, o);
        }
        finally {
            done();
        }
    }
    /** Sends a request and answers its raw body. */
    async data(route, params, o = {}) {
        const { response, url, done } = await this.send(route, params, o);
        try {
            return new Uint8Array(await response.arrayBuffer());
        }
        catch (e) {
            throw this.#bodyError(e, url, o);
        }
        finally {
            done();
        }
    }
    /** Sends a request and answers its response and raw body. */
    async full(route, params, o = {}) {
        const { response, url, done } = await this.send(route, params, o);
        try {
            return { response, data: new Uint8Array(await response.arrayBuffer()), url };
        }
        catch (e) {
            throw this.#bodyError(e, url, o);
        }
        finally {
            done();
        }
    }
    /** Sends a request and yields each line of its NDJSON answer as it comes
     * (no timeout unless the call gives one). */
    async *ndjson(route, params, o = {}) {
        const { response, url, done } = await this.send(route, params, { timeoutMs: null, ...o });
        const lines = new Lines();
        const reader = response.body?.getReader();
        try {
            if (reader) {
                for (;;) {
                    let chunk;
                    try {
                        chunk = await reader.read();
                    }
                    catch (e) {
                        throw this.#bodyError(e, url, o);
                    }
                    if (chunk.done)
                        break;
                    for (const value of lines.feed(chunk.value))
                        yield value;
                }
            }
            for (const value of lines.end())
                yield value;
        }
        finally {
            done();
            await reader?.cancel().catch(() => undefined);
        }
    }
    #bodyError(e, url, o) {
        if (e instanceof HolmError)
            return e;
        if (e instanceof Error && e.name === "AbortError")
            return timedOut(url, o.timeoutMs ?? this.config.timeoutMs);
        return unreachable(url, e);
    }
}
