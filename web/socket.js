// The game's WebSocket, kept alive: when it drops it reconnects with
// exponential backoff and jitter. The server sends the full GameState on
// every (re)connect, so nothing has to be replayed after a gap (this is
// also how a client the server closed as too slow, code 4008, catches up).
//
// Heartbeat: a socket can die without a close event (a phone changing
// networks, a NAT dropping the mapping: a half-open TCP connection), and a
// browser cannot see the server's WebSocket pings. So the client sends
// `{"type":"ping"}` when the socket has been quiet for HEARTBEAT_MS and
// gives it up when nothing at all (no state, presence or pong) arrives for
// DEAD_MS: it then reconnects, and until a socket is open again it follows
// the game over HTTP (GET /api/games/{id} every POLL_MS; moves already fall
// back to HTTP POSTs). When the tab becomes visible again (a phone unlocking,
// a background tab the browser froze) the socket is probed at once and
// replaced if it does not answer within PROBE_MS.
//
// A seat token travels as a WebSocket subprotocol (`rookery.token.TOKEN`,
// offered next to `rookery`), not in the URL, so it stays out of access
// logs and browser history. Without one, the session cookie of a
// logged-in player may bring their seat: the server then says
// `{"type": "authenticated", "color"}` after the first state.

const MIN_DELAY_MS = 500;
const MAX_DELAY_MS = 10000;
const HEARTBEAT_MS = 5000;
const DEAD_MS = 12000;
const PROBE_MS = 3000;
const POLL_MS = 3000;

export class GameSocket {
  constructor(gameId, token, { onState, onPresence, onError, onStatus, onPoll, onRematch, onAuthenticated, onChat, onChatHistory }) {
    this.stateUrl = `/api/games/${encodeURIComponent(gameId)}`;
    const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
    this.url = `${scheme}://${window.location.host}/ws/games/${encodeURIComponent(gameId)}`;
    this.protocols = [];
    // Server tokens are hex. A stored value that is not a valid protocol
    // name (the WebSocket constructor would throw) goes in the query, so
    // the server refuses it and the page falls back to watching.
    if (token && /^[0-9A-Za-z._~-]+$/.test(token)) this.protocols = ['rookery', `rookery.token.${token}`];
    else if (token) this.url += `?token=${encodeURIComponent(token)}`;
    this.handlers = { onState, onPresence, onError, onStatus, onPoll, onRematch, onAuthenticated, onChat, onChatHistory };
    this.lastHeard = 0;
    this.probeTimer = null;
    this.pollTimer = null;
    this.heartbeat = setInterval(() => this.beat(), 1000);
    this.visible = () => {
      if (document.visibilityState === 'visible') this.probe();
    };
    document.addEventListener('visibilitychange', this.visible);
    this.attempt = 0;
    this.timer = null;
    this.stopped = false;
    this.ws = null;
    this.online = () => this.reconnectNow();
    window.addEventListener('online', this.online);
    this.connect();
  }

  connect() {
    this.timer = null;
    if (this.stopped) return;
    const ws = new WebSocket(this.url, this.protocols);
    this.ws = ws;
    ws.addEventListener('open', () => {
      if (this.ws !== ws) return;
      this.lastHeard = performance.now();
      this.stopPolling();
      this.handlers.onStatus('open');
    });
    ws.addEventListener('message', (event) => {
      if (this.ws !== ws) return;
      this.lastHeard = performance.now();
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (message.type === 'state' && message.game) {
        this.attempt = 0;
        this.handlers.onState(message.game);
      } else if (message.type === 'presence') {
        if (this.handlers.onPresence) this.handlers.onPresence(message);
      } else if (message.type === 'error') {
        this.handlers.onError(message);
      } else if (message.type === 'rematch') {
        if (this.handlers.onRematch) this.handlers.onRematch(message);
      } else if (message.type === 'chat') {
        if (this.handlers.onChat) this.handlers.onChat(message);
      } else if (message.type === 'chat_history') {
        if (this.handlers.onChatHistory) this.handlers.onChatHistory(message);
      } else if (message.type === 'authenticated') {
        if (this.handlers.onAuthenticated && (message.color === 'white' || message.color === 'black')) {
          this.handlers.onAuthenticated(message.color);
        }
      }
    });
    ws.addEventListener('close', () => {
      if (this.ws !== ws || this.stopped) return;
      this.lost();
    });
  }

  // The socket closed, or is presumed dead: follow over HTTP, reconnect.
  lost() {
    const ws = this.ws;
    this.ws = null;
    clearTimeout(this.probeTimer);
    this.probeTimer = null;
    if (ws && ws.readyState <= WebSocket.OPEN) {
      try {
        ws.close(4000, 'no answer to heartbeat');
      } catch {
        // Closing an already failing socket can throw; it is abandoned anyway.
      }
    }
    this.handlers.onStatus('closed');
    this.startPolling();
    this.schedule();
  }

  // Called every second: a ping after HEARTBEAT_MS of quiet, and the
  // socket given up after DEAD_MS of it.
  beat() {
    if (!this.isOpen()) return;
    const quiet = performance.now() - this.lastHeard;
    if (quiet >= DEAD_MS) this.lost();
    else if (quiet >= HEARTBEAT_MS) this.ws.send('{"type":"ping"}');
  }

  // The tab is visible again: a closed socket reconnects now, an open one
  // must answer a ping within PROBE_MS.
  probe() {
    if (this.stopped) return;
    if (!this.isOpen()) {
      this.reconnectNow();
      return;
    }
    const ws = this.ws;
    const asked = performance.now();
    ws.send('{"type":"ping"}');
    clearTimeout(this.probeTimer);
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null;
      if (this.ws === ws && this.lastHeard < asked) this.lost();
    }, PROBE_MS);
  }

  startPolling() {
    if (this.pollTimer || this.stopped || !this.handlers.onPoll) return;
    const poll = async () => {
      try {
        const response = await fetch(this.stateUrl, { headers: { Accept: 'application/json' } });
        if (response.ok && this.pollTimer && !this.isOpen()) this.handlers.onPoll(await response.json());
      } catch {
        // The server is unreachable too: keep trying at the same pace.
      }
    };
    this.pollTimer = setInterval(poll, POLL_MS);
    poll();
  }

  stopPolling() {
    clearInterval(this.pollTimer);
    this.pollTimer = null;
  }

  schedule() {
    if (this.stopped || this.timer) return;
    const base = Math.min(MAX_DELAY_MS, MIN_DELAY_MS * 2 ** this.attempt);
    this.attempt += 1;
    this.timer = setTimeout(() => this.connect(), base * (0.75 + Math.random() * 0.5));
  }

  reconnectNow() {
    if (this.stopped || (this.ws && this.ws.readyState <= WebSocket.OPEN)) return;
    clearTimeout(this.timer);
    this.connect();
  }

  isOpen() {
    return !!this.ws && this.ws.readyState === WebSocket.OPEN;
  }

  send(message) {
    if (!this.isOpen()) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  // A finished game has nothing more to say: stop reconnecting.
  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.probeTimer);
    clearInterval(this.heartbeat);
    this.stopPolling();
    window.removeEventListener('online', this.online);
    document.removeEventListener('visibilitychange', this.visible);
    if (this.ws) {
      const ws = this.ws;
      this.ws = null;
      if (ws.readyState === WebSocket.OPEN) ws.close(1000);
      else if (ws.readyState === WebSocket.CONNECTING) ws.addEventListener('open', () => ws.close(1000));
    }
  }
}
