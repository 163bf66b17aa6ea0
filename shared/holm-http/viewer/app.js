// The viewer page: one screen of one box, watched or taken over.
//
// The page's URL is `.../SCREEN/view#token=...` or `.../SCREEN/takeover#token=...`;
// the token stays in the fragment, which no server sees, and is sent only
// as a bearer header (to ./session and ./control) and a WebSocket
// subprotocol (to ./rfb).

import { connect, streamUrl } from './live.js';

const $ = (id) => document.getElementById(id);
const page = new URL(location.href);
const base = page.origin + page.pathname.replace(/\/$/, '');
const token = new URLSearchParams(page.hash.slice(1)).get('token') || '';
const takeover = /\/takeover$/.test(page.pathname);

let session = null;
let live = null;

function setState(state, text) {
  document.body.dataset.state = state;
  $('state').textContent = text;
  $('state').className = 'state ' + state;
}

function notice(text) {
  $('notice').textContent = text;
  $('notice').hidden = !text;
}

async function call(path, init = {}) {
  const headers = Object.assign({}, init.headers || {});
  if (token) headers.Authorization = 'Bearer ' + token;
  const r = await fetch(base + path, Object.assign({}, init, { headers, cache: 'no-store' }));
  const body = await r.json().catch(() => null);
  return { ok: r.ok, status: r.status, body };
}

function refused(r) {
  const e = r.body && r.body.error;
  return e ? e.message + (e.hint ? ' — ' + e.hint : '') : 'the box did not answer (' + r.status + ')';
}

function show(s) {
  session = s;
  const mode = s.mode === 'control' ? 'takeover' : 'watching';
  $('title').textContent = s.title || s.box_id;
  $('screen-name').textContent = 'screen ' + s.screen;
  $('mode').textContent = mode;
  $('mode').className = 'badge ' + s.mode;
  document.title = (s.title || s.box_id) + ' · screen ' + s.screen + ' · ' + mode;
  const h = s.handoff || {};
  const help = $('help');
  if (h.state === 'human_in_control' && h.control) {
    const who = h.control.label ? h.control.label : 'a person';
    help.textContent = (h.control.grant === s.grant ? 'You are' : who + ' is') +
      ' in control since ' + new Date(h.control.since).toLocaleTimeString() + ': the agent waits.';
    help.hidden = false;
  } else if (h.help) {
    help.textContent = 'The agent asks for help: ' + h.help.reason;
    help.hidden = false;
  } else {
    help.hidden = true;
  }
  document.body.dataset.handoff = h.state || 'none';
  if (s.mode === 'control') {
    $('release').hidden = s.released;
    $('take').hidden = !s.released;
    $('clipboard-toggle').hidden = false;
    if (live) live.setViewOnly(s.released);
  }
}

async function refresh() {
  const r = await call('/session');
  if (r.ok) {
    show(r.body);
    return true;
  }
  if (r.status === 401 || r.status === 403 || r.status === 404) {
    setState('denied', 'not allowed');
    notice(refused(r));
    if (live) live.stop();
    return false;
  }
  return true;
}

async function control(action) {
  const r = await call('/control', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ action }),
  });
  if (r.ok) show(r.body);
  else notice(refused(r));
  if (live && action === 'take') live.focus();
}

function open(viewOnly) {
  live = connect($('screen'), streamUrl(base), token, {
    viewOnly,
    onState(state, detail) {
      if (state === 'connected') { setState('connected', 'live'); notice(''); }
      else if (state === 'connecting') setState('connecting', 'connecting…');
      else if (state === 'disconnected') setState('disconnected', 'disconnected, retrying in ' + detail.retryIn + ' s');
      else if (state === 'stopped') setState(document.body.dataset.state === 'denied' ? 'denied' : 'stopped', 'stopped');
      $('reconnect').hidden = state === 'connected' || state === 'connecting';
    },
    shouldRetry: refresh,
    onClipboard(text) {
      if (!takeover) return;
      $('clipboard-text').value = text;
      document.body.dataset.clipboard = text;
    },
  });
}

async function start() {
  // A watch-only page opens its stream while it asks for its session (the
  // stream is checked on its own, and a refused session stops it); a
  // takeover page needs the session first: whether control was handed back.
  const asked = refresh();
  if (!takeover) open(true);
  if (!(await asked)) return;
  if (takeover) open(session.released);
  setInterval(refresh, 3000);
}

$('reconnect').addEventListener('click', async () => {
  if (await refresh()) live.reconnect();
});
$('release').addEventListener('click', () => control('release'));
$('take').addEventListener('click', () => control('take'));
$('clipboard-toggle').addEventListener('click', () => { $('clipboard').hidden = !$('clipboard').hidden; });
$('clipboard-send').addEventListener('click', () => {
  live.paste($('clipboard-text').value);
  live.focus();
});
start();
