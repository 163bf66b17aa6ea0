// The pixels of a PNG, read with nothing but the platform's
// `DecompressionStream` (Node 18+ and browsers): 8-bit grey, grey with
// alpha, RGB, RGBA and palette images, not interlaced, as holm's screenshots
// are. For agents (and tests) that look at pixels without an image library.

const SIGNATURE = [137, 80, 78, 71, 13, 10, 26, 10];
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** A decoded image: RGB bytes, row after row. */
export class PngImage {
  /** Width in pixels. */
  readonly width: number;
  /** Height in pixels. */
  readonly height: number;
  /** Three bytes (red, green, blue) per pixel, row after row. */
  readonly pixels: Uint8Array;

  /** An image from its RGB bytes. */
  constructor(width: number, height: number, pixels: Uint8Array) {
    this.width = width;
    this.height = height;
    this.pixels = pixels;
  }

  /** The (red, green, blue) of one pixel. */
  pixel(x: number, y: number): [number, number, number] {
    const i = (y * this.width + x) * 3;
    return [this.pixels[i], this.pixels[i + 1], this.pixels[i + 2]];
  }

  /** The bounding box [x0, y0, x1, y1] (inclusive) of the pixels that differ
   * from `other` by more than `tolerance` in a channel, or null when none do
   * (or the sizes differ). */
  changed(other: PngImage, tolerance = 0): [number, number, number, number] | null {
    if (this.width !== other.width || this.height !== other.height) return null;
    let box: [number, number, number, number] | null = null;
    const a = this.pixels;
    const b = other.pixels;
    for (let y = 0; y < this.height; y++) {
      for (let x = 0; x < this.width; x++) {
        const i = (y * this.width + x) * 3;
        if (Math.abs(a[i] - b[i]) > tolerance || Math.abs(a[i + 1] - b[i + 1]) > tolerance || Math.abs(a[i + 2] - b[i + 2]) > tolerance) {
          box = box ? [Math.min(box[0], x), Math.min(box[1], y), Math.max(box[2], x), Math.max(box[3], y)] : [x, y, x, y];
        }
      }
    }
    return box;
  }
}

async function inflate(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data as BlobPart]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function unfilter(raw: Uint8Array, height: number, stride: number, bpp: number): Uint8Array {
  const out = new Uint8Array(height * stride);
  let pos = 0;
  for (let y = 0; y < height; y++) {
    const kind = raw[pos];
    const line = out.subarray(y * stride, (y + 1) * stride);
    line.set(raw.subarray(pos + 1, pos + 1 + stride));
    pos += 1 + stride;
    const prev = y ? out.subarray((y - 1) * stride, y * stride) : new Uint8Array(stride);
    for (let i = 0; i < stride; i++) {
      const left = i >= bpp ? line[i - bpp] : 0;
      const up = prev[i];
      const corner = i >= bpp ? prev[i - bpp] : 0;
      if (kind === 1) line[i] = line[i] + left;
      else if (kind === 2) line[i] = line[i] + up;
      else if (kind === 3) line[i] = line[i] + ((left + up) >> 1);
      else if (kind === 4) {
        const p = left + up - corner;
        const pa = Math.abs(p - left);
        const pb = Math.abs(p - up);
        const pc = Math.abs(p - corner);
        line[i] = line[i] + (pa <= pb && pa <= pc ? left : pb <= pc ? up : corner);
      } else if (kind !== 0) throw new Error(`unknown PNG filter ${kind}`);
    }
  }
  return out;
}

/** The pixels of a PNG. */
export async function decodePng(data: Uint8Array): Promise<PngImage> {
  if (!SIGNATURE.every((b, i) => data[i] === b)) throw new Error("not a PNG");
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let pos = 8;
  const idat: Uint8Array[] = [];
  let palette: Uint8Array = new Uint8Array(0);
  let width = 0;
  let height = 0;
  let depth = 0;
  let ctype = -1;
  let interlace = 0;
  while (pos < data.length) {
    const length = view.getUint32(pos);
    const kind = String.fromCharCode(...data.subarray(pos + 4, pos + 8));
    const body = data.subarray(pos + 8, pos + 8 + length);
    pos += 12 + length;
    if (kind === "IHDR") {
      width = view.getUint32(pos - 12 - length + 8);
      height = view.getUint32(pos - 12 - length + 12);
      [depth, ctype] = [body[8], body[9]];
      interlace = body[12];
    } else if (kind === "PLTE") palette = body;
    else if (kind === "IDAT") idat.push(body);
    else if (kind === "IEND") break;
  }
  if (depth !== 8 || interlace || !(ctype in CHANNELS)) {
    throw new Error(`unsupported PNG: depth ${depth}, colour type ${ctype}, interlace ${interlace}`);
  }
  const bpp = CHANNELS[ctype];
  const stride = width * bpp;
  const joined = new Uint8Array(idat.reduce((n, c) => n + c.length, 0));
  idat.reduce((at, c) => (joined.set(c, at), at + c.length), 0);
  const rows = unfilter(await inflate(joined), height, stride, bpp);
  const rgb = new Uint8Array(width * height * 3);
  for (let p = 0; p < width * height; p++) {
    if (ctype === 2) rgb.set(rows.subarray(p * 3, p * 3 + 3), p * 3);
    else if (ctype === 6) rgb.set(rows.subarray(p * 4, p * 4 + 3), p * 3);
    else if (ctype === 3) rgb.set(palette.subarray(rows[p] * 3, rows[p] * 3 + 3), p * 3);
    else rgb.fill(rows[p * bpp], p * 3, p * 3 + 3);
  }
  return new PngImage(width, height, rgb);
}
