// The game's WebSocket, kept alive: when it drops it reconnects with
// exponential backoff and jitter. The server sends the full GameState on
// every (re)connect, so nothing has to be replayed after a gap (this is
// also how a client the server closed as too slow, code 4008, catches up).
//
// A seat token travels as a WebSocket subprotocol (`rookery.token.TOKEN`,
// offered next to `rookery`), not in the URL, so it stays out of access
// logs and browser history.

const MIN_DELAY_MS = 500;
const MAX_DELAY_MS = 10000;

export class GameSocket {
  constructor(gameId, token, { onState, onPresence, onError, onStatus, onRematch }) {
    const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
    this.url = `${scheme}://${window.location.host}/ws/games/${encodeURIComponent(gameId)}`;
    this.protocols = [];
    // Server tokens are hex. A stored value that is not a valid protocol
    // name (the WebSocket constructor would throw) goes in the query, so
    // the server refuses it and the page falls back to watching.
    if (token && /^[0-9A-Za-z._~-]+$/.test(token)) this.protocols = ['rookery', `rookery.token.${token}`];
    else if (token) this.url += `?token=${encodeURIComponent(token)}`;
    this.handlers = { onState, onPresence, onError, onStatus, onRematch };
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
      if (this.ws === ws) this.handlers.onStatus('open');
    });
    ws.addEventListener('message', (event) => {
      if (this.ws !== ws) return;
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
      }
    });
    ws.addEventListener('close', () => {
      if (this.ws !== ws || this.stopped) return;
      this.ws = null;
      this.handlers.onStatus('closed');
      this.schedule();
    });
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
    window.removeEventListener('online', this.online);
    if (this.ws) {
      const ws = this.ws;
      this.ws = null;
      if (ws.readyState === WebSocket.OPEN) ws.close(1000);
      else if (ws.readyState === WebSocket.CONNECTING) ws.addEventListener('open', () => ws.close(1000));
    }
  }
}
