// The live screen: one box screen's RFB stream over WebSocket, drawn by
// noVNC (1.3.0, vendored beside this file and served under ../novnc/ by
// holmd, or by the guest on a published viewer port, from their own
// binaries: never from the box's disk), scaled to its container,
// reconnecting when the connection drops.
//
// Used by the viewer page (app.js) and by the MCP Apps live screen, which
// imports this module from holmd. The token travels as a WebSocket
// subprotocol, never in a URL.

import RFB from '../novnc/core/rfb.js';

/// The subprotocols that carry the stream and the token.
export function protocols(token) {
  const list = ['holm-rfb.v1'];
  if (token) list.push('holm-token.' + token);
  return list;
}

/// The WebSocket URL of a viewer page's stream: `base` is the page's URL
/// (`.../SCREEN/view` or `.../SCREEN/takeover`).
export function streamUrl(base) {
  const u = new URL(base);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.hash = '';
  u.search = '';
  u.pathname = u.pathname.replace(/\/$/, '') + '/rfb';
  return u.href;
}

/// Connects `target` (an element) to `url`. `options.onState(state, detail)`
/// hears `connecting`, `connected`, `disconnected` (with the delay before the
/// next try) and `stopped`; `options.shouldRetry()` (async) says whether to
/// try again after a drop; `options.onClipboard(text)` hears the box's
/// clipboard. Answers a handle: `reconnect()`, `stop()`, `setViewOnly(b)`,
/// `paste(text)`, `firstFrameAt` (ms since the page's time origin, when the
/// first frame was drawn).
export function connect(target, url, token, options = {}) {
  const onState = options.onState || (() => {});
  const handle = {
    rfb: null,
    viewOnly: !!options.viewOnly,
    firstFrameAt: null,
    stopped: false,
    tries: 0,
    timer: null,
  };

  function watchFirstFrame(rfb) {
    // The first frame is drawn when the canvas is no longer one colour.
    const started = performance.now();
    const look = () => {
      if (handle.rfb !== rfb || handle.firstFrameAt !== null) return;
      const canvas = target.querySelector('canvas');
      if (canvas && canvas.width > 1 && canvas.height > 1) {
        const ctx = canvas.getContext('2d', { willReadFrequently: true });
        const w = canvas.width, h = canvas.height;
        const first = ctx.getImageData(0, 0, 1, 1).data;
        for (let i = 0; i < 64; i++) {
          const x = Math.floor(((i * 37) % 64) / 64 * w), y = Math.floor(i / 64 * h);
          const p = ctx.getImageData(x, y, 1, 1).data;
          if (p[0] !== first[0] || p[1] !== first[1] || p[2] !== first[2]) {
            handle.firstFrameAt = performance.now();
            window.dispatchEvent(new CustomEvent('holm-first-frame', { detail: { ms: handle.firstFrameAt - started } }));
            return;
          }
        }
      }
      requestAnimationFrame(look);
    };
    requestAnimationFrame(look);
  }

  function open() {
    clearTimeout(handle.timer);
    onState('connecting');
    performance.mark('holm-rfb-open');
    const rfb = new RFB(target, url, { shared: true, wsProtocols: protocols(token) });
    handle.rfb = rfb;
    rfb.scaleViewport = true;
    rfb.resizeSession = false;
    rfb.clipViewport = false;
    rfb.viewOnly = handle.viewOnly;
    rfb.focusOnClick = true;
    rfb.background = '#1f2024';
    rfb.addEventListener('connect', () => {
      handle.tries = 0;
      performance.mark('holm-rfb-connected');
      onState('connected');
      watchFirstFrame(rfb);
    });
    rfb.addEventListener('clipboard', (e) => options.onClipboard && options.onClipboard(e.detail.text));
    rfb.addEventListener('disconnect', async () => {
      if (handle.rfb !== rfb || handle.stopped) return;
      handle.rfb = null;
      const again = options.shouldRetry ? await options.shouldRetry() : true;
      if (!again || handle.stopped) {
        onState('stopped');
        return;
      }
      handle.tries += 1;
      const delay = Math.min(10, 2 ** Math.min(handle.tries - 1, 4));
      onState('disconnected', { retryIn: delay });
      handle.timer = setTimeout(open, delay * 1000);
    });
  }

  handle.reconnect = () => {
    handle.stopped = false;
    if (handle.rfb) {
      const old = handle.rfb;
      handle.rfb = null;
      old.disconnect();
    }
    handle.tries = 0;
    open();
  };
  handle.stop = () => {
    handle.stopped = true;
    clearTimeout(handle.timer);
    if (handle.rfb) handle.rfb.disconnect();
    handle.rfb = null;
  };
  handle.setViewOnly = (v) => {
    handle.viewOnly = v;
    if (handle.rfb) handle.rfb.viewOnly = v;
  };
  handle.paste = (text) => handle.rfb && handle.rfb.clipboardPasteFrom(text);
  handle.focus = () => handle.rfb && handle.rfb.focus();
  open();
  return handle;
}
