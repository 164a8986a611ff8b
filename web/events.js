// The logged-in person's event stream, `GET /api/stream/event` (lichess's):
// NDJSON, one JSON event a line (`challenge`, `challengeCanceled`,
// `challengeDeclined`, `gameStart`, `gameFinish`), a bare newline every few
// seconds to show the stream is alive. Read with fetch and a
// ReadableStream, so the session cookie goes with it.
//
// One stream per browser, not per tab: a browser opens at most six
// HTTP/1.1 connections to a site, and a stream held by each of six tabs
// would leave none for anything else. The tabs elect a leader with the Web
// Locks API; the leader reads the stream and passes every event to the
// other tabs on a BroadcastChannel. When the leader's tab closes its lock
// is released and another tab takes over (a new stream opens with what is
// open now, so nothing is missed). Without those APIs each tab streams for
// itself.
//
// The stream reconnects with exponential backoff and jitter when it ends
// or fails, and is given up as dead after DEAD_MS without a byte (the
// server sends a keep-alive every 6 s). A 401 means the session is over:
// the stream stops and `onLoggedOut` is called, in every tab.

const MIN_DELAY_MS = 1000;
const MAX_DELAY_MS = 30000;
const DEAD_MS = 20000;
const LOCK = 'rookery:event-stream';
const CHANNEL = 'rookery:events';

export class EventStream {
  constructor({ onEvent, onLoggedOut }) {
    this.onEvent = onEvent;
    this.onLoggedOut = onLoggedOut;
    this.stopped = false;
    this.attempt = 0;
    this.controller = null;
    this.timer = null;
    this.watchdog = null;
    this.channel = null;
    this.release = null;
    if (navigator.locks && typeof BroadcastChannel === 'function') {
      this.channel = new BroadcastChannel(CHANNEL);
      this.channel.onmessage = (message) => this.receive(message.data);
      navigator.locks.request(LOCK, () => new Promise((release) => {
        if (this.stopped) {
          release();
          return;
        }
        this.release = release;
        this.connect();
      })).catch(() => {});
    } else {
      this.connect();
    }
  }

  // A message from the leading tab.
  receive(data) {
    if (this.stopped || !data) return;
    if (data.kind === 'event') this.onEvent(data.event);
    else if (data.kind === 'logged-out') this.onLoggedOut();
  }

  // An event read here: for this tab and the others.
  deliver(event) {
    if (this.channel) this.channel.postMessage({ kind: 'event', event });
    this.onEvent(event);
  }

  async connect() {
    this.timer = null;
    if (this.stopped) return;
    const controller = new AbortController();
    this.controller = controller;
    this.alive();
    let response;
    try {
      response = await fetch('/api/stream/event', { headers: { Accept: 'application/x-ndjson' }, signal: controller.signal });
    } catch {
      this.lost(controller);
      return;
    }
    if (response.status === 401) {
      this.finish();
      if (this.channel) this.channel.postMessage({ kind: 'logged-out' });
      this.onLoggedOut();
      return;
    }
    if (!response.ok || !response.body) {
      this.lost(controller);
      return;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        this.alive();
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, end).trim();
          buffer = buffer.slice(end + 1);
          // A bare newline is a keep-alive.
          if (!line) continue;
          let event;
          try {
            event = JSON.parse(line);
          } catch {
            continue;
          }
          this.attempt = 0;
          if (event && typeof event.type === 'string') this.deliver(event);
        }
      }
    } catch {
      // Aborted (dead, or stopped) or the connection broke: reconnect below.
    }
    this.lost(controller);
  }

  // Bytes arrived: the stream is alive for another DEAD_MS.
  alive() {
    clearTimeout(this.watchdog);
    const controller = this.controller;
    this.watchdog = setTimeout(() => {
      if (this.controller === controller) controller.abort();
    }, DEAD_MS);
  }

  lost(controller) {
    if (this.stopped || this.controller !== controller) return;
    this.controller = null;
    clearTimeout(this.watchdog);
    const base = Math.min(MAX_DELAY_MS, MIN_DELAY_MS * 2 ** this.attempt);
    this.attempt += 1;
    this.timer = setTimeout(() => this.connect(), base * (0.75 + Math.random() * 0.5));
  }

  finish() {
    clearTimeout(this.timer);
    clearTimeout(this.watchdog);
    const controller = this.controller;
    this.controller = null;
    if (controller) controller.abort();
  }

  // Logged out: no more stream in this tab, and the lead passes on.
  stop() {
    this.stopped = true;
    this.finish();
    if (this.channel) this.channel.close();
    if (this.release) this.release();
  }
}
