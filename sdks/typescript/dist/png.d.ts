/** A decoded image: RGB bytes, row after row. */
export declare class PngImage {
    /** Width in pixels. */
    readonly width: number;
    /** Height in pixels. */
    readonly height: number;
    /** Three bytes (red, green, blue) per pixel, row after row. */
    readonly pixels: Uint8Array;
    /** An image from its RGB bytes. */
    constructor(width: number, height: number, pixels: Uint8Array);
    /** The (red, green, blue) of one pixel. */
    pixel(x: number, y: number): [number, number, number];
    /** The bounding box [x0, y0, x1, y1] (inclusive) of the pixels that differ
     * from `other` by more than `tolerance` in a channel, or null when none do
     * (or the sizes differ). */
    changed(other: PngImage, tolerance?: number): [number, number, number, number] | null;
}
/** The pixels of a PNG. */
export declare function decodePng(data: Uint8Array): Promise<PngImage>;
