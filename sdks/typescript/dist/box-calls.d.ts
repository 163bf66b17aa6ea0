import type { Transport } from "./transport.js";
import type * as t from "./types.js";
/** The one-call methods of a box. */
export declare abstract class BoxCalls {
    /** The transport this box's calls go through. */
    readonly transport: Transport;
    protected readonly p: {
        id: string;
    };
    protected constructor(transport: Transport, id: string);
    /** Go back one page in a tab's history and wait for it to load. */
    pageBack(tab?: string): Promise<t.PageResult>;
    /** Go forward one page in a tab's history and wait for it to load. */
    pageForward(tab?: string): Promise<t.PageResult>;
    /** Load a tab's page again and wait for it to load. */
    pageReload(tab?: string): Promise<t.PageResult>;
}
