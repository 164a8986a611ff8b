// The players' chat of a game page (issue 24): the room lichess calls
// `player`, shared by the two players and by a bot's API client (a bot
// posts through `/api/bot/game/{id}/chat`, into the same room).
//
// The server knows a chat line's author by their identity, not by a seat
// token: the chat routes (`GET`/`POST /api/board/game/{id}/chat`) take the
// session cookie of an account, or a named player's token. So the box is
// shown only to a player the server knows by name, facing another named
// player: a spectator, an anonymous seat-token player and a player facing
// an anonymous opponent or the computer see none (the other side could not
// read it).
//
// No WebSocket message carries chat, so the room is polled every 2 s while
// the page is open and visible, and at once after a line is sent or the
// tab comes back. Lines are text nodes, never markup (dom.js).
//
// Beyond 10 lines a minute the server drops a line and still answers 200,
// as lila does (docs/lichess-compat.md): a client that sees an error may
// retry in a loop. So the page counts its own lines and says when to wait
// before sending, and a line the room does not show after its 200 is said
// to be dropped and left in the box.

import { api } from './api.js';
import { h, clear } from './dom.js';
import { opposite } from './format.js';
import { getChatMuted, saveChatMuted } from './storage.js';

const POLL_MS = 2000;
// The server's limit on a line, in characters (Unicode scalar values, as
// Rust counts them; a JavaScript string's length counts UTF-16 units).
export const CHAT_CHARS = 140;
// The server's flood limit: lines a person may post in a game's room in a
// sliding minute.
export const CHAT_PER_MINUTE = 10;
const MINUTE_MS = 60_000;

const chars = (text) => [...text].length;

// The person a chat line may come from on this page: `me` is `{name,
// token}` (token null for the session cookie), or null for nobody known.
// Returns the opponent's name when the page should chat, else null.
export function chatOpponent(game, seat, me) {
  if (!seat || !me || !game) return null;
  const mine = game[seat.color];
  const other = game[opposite(seat.color)];
  const named = (side) => side && side.kind === 'human' && typeof side.name === 'string' && side.name !== '';
  if (!named(mine) || !named(other)) return null;
  if (mine.name.toLowerCase() !== me.name.toLowerCase()) return null;
  return other.name;
}

export class GameChat {
  // `onGone()` is called when the room turns out not to be this person's
  // after all (the box then hides itself).
  constructor(gameId, me, opponent, { onGone = () => {} } = {}) {
    this.gameId = gameId;
    this.onGone = onGone;
    this.me = me;
    this.opponent = opponent;
    this.lines = [];
    this.shownKey = '';
    this.timer = null;
    this.polling = false;
    this.pollAgain = false;
    this.sending = false;
    // When this page's lines were kept by the server (performance.now()).
    this.sentAt = [];
    this.stopped = false;
    this.muted = getChatMuted(opponent);

    this.list = h('ol', { class: 'chat-lines', role: 'log', 'aria-label': `Chat with ${opponent}` });
    this.empty = h('p', { class: 'chat-empty muted' }, 'No messages yet.');
    this.mutedNote = h('p', { class: 'chat-muted-note muted', hidden: true });
    this.muteButton = h('button', { type: 'button', class: 'chat-mute', 'aria-pressed': 'false' }, `Mute ${opponent}`);
    this.muteButton.addEventListener('click', () => this.setMuted(!this.muted));
    this.input = h('input', {
      type: 'text', id: 'chat-input', class: 'chat-input', autocomplete: 'off', enterkeyhint: 'send',
      'aria-describedby': 'chat-counter',
    });
    this.counter = h('span', { class: 'chat-counter', id: 'chat-counter' });
    this.sendButton = h('button', { type: 'submit', class: 'chat-send' }, 'Send');
    this.error = h('p', { class: 'form-error chat-error', role: 'alert' });
    const form = h('form', { class: 'chat-form', novalidate: true },
      h('label', { for: 'chat-input', class: 'visually-hidden' }, `Message to ${opponent}`),
      h('div', { class: 'chat-row' }, this.input, this.sendButton),
      this.counter);
    this.input.addEventListener('input', () => this.onInput());
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.send();
    });
    this.el = h('section', { class: 'chat', 'aria-labelledby': 'chat-title' },
      h('div', { class: 'chat-head' }, h('h2', { id: 'chat-title' }, 'Chat'), this.muteButton),
      h('div', { class: 'chat-box' }, this.list, this.empty),
      this.mutedNote,
      form,
      this.error);

    this.onVisible = () => {
      if (!document.hidden) this.poll();
    };
    document.addEventListener('visibilitychange', this.onVisible);
    this.onInput();
    this.renderMute();
    this.poll();
  }

  path() {
    return `/api/board/game/${encodeURIComponent(this.gameId)}/chat`;
  }

  // One request at a time; the next one 2 s after the last answer, or at
  // once when asked for meanwhile (a line just sent).
  async poll() {
    if (this.stopped) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    clearTimeout(this.timer);
    this.polling = true;
    this.pollAgain = false;
    try {
      const lines = await api('GET', this.path(), { token: this.me.token || undefined });
      if (Array.isArray(lines)) this.show(lines);
    } catch (error) {
      // The room is not this person's (404), they are no longer known
      // (401: logged out elsewhere) or may not use it (400: a bot account
      // reads its chat through the Bot API): asking again would only fail
      // again. A 429 or a server error may pass.
      if (error.status >= 400 && error.status < 500 && error.status !== 429) {
        this.stop();
        this.el.hidden = true;
        this.onGone();
        return;
      }
      // Anything else (the server unreachable, a restart): try again later.
    } finally {
      this.polling = false;
    }
    if (this.pollAgain) this.poll();
    else this.schedule();
  }

  schedule() {
    clearTimeout(this.timer);
    if (this.stopped || document.hidden) return;
    this.timer = setTimeout(() => this.poll(), POLL_MS);
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    document.removeEventListener('visibilitychange', this.onVisible);
  }

  isMine(line) {
    return String(line.user).toLowerCase() === this.me.name.toLowerCase();
  }

  isOpponent(line) {
    return String(line.user).toLowerCase() === this.opponent.toLowerCase();
  }

  // The room's lines, oldest first; redrawn only when they or the mute
  // changed, and kept scrolled to the newest unless the reader scrolled up.
  show(lines) {
    this.lines = lines.filter((line) => line && typeof line.text === 'string');
    const visible = this.lines.filter((line) => !(this.muted && this.isOpponent(line)));
    const key = `${this.muted}:${this.lines.length}`;
    if (key === this.shownKey) return;
    this.shownKey = key;
    const box = this.list.parentElement;
    const atEnd = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
    clear(this.list, visible.map((line) => {
      return h('li', { class: `chat-line ${this.isMine(line) ? 'mine' : 'theirs'}`, dataset: { user: String(line.user) } },
        h('span', { class: 'chat-user' }, String(line.user)), ' ',
        h('span', { class: 'chat-text' }, line.text));
    }));
    this.empty.hidden = visible.length > 0;
    const hidden = this.lines.length - visible.length;
    this.mutedNote.hidden = !this.muted;
    this.mutedNote.textContent = hidden > 0
      ? `${this.opponent}’s messages are hidden (${hidden}).`
      : `${this.opponent}’s messages are hidden.`;
    if (atEnd) box.scrollTop = box.scrollHeight;
  }

  setMuted(muted) {
    this.muted = muted;
    saveChatMuted(this.opponent, muted);
    this.renderMute();
    this.shownKey = '';
    this.show(this.lines);
  }

  renderMute() {
    this.muteButton.setAttribute('aria-pressed', String(this.muted));
    this.muteButton.title = this.muted
      ? `Show ${this.opponent}’s messages again`
      : `Hide ${this.opponent}’s messages in every game (remembered in this browser)`;
  }

  // The box holds at most 140 characters; the counter says how many.
  onInput() {
    let text = this.input.value;
    if (chars(text) > CHAT_CHARS) {
      text = [...text].slice(0, CHAT_CHARS).join('');
      this.input.value = text;
    }
    const used = chars(text);
    this.counter.textContent = `${used}/${CHAT_CHARS}`;
    this.counter.classList.toggle('full', used >= CHAT_CHARS);
    this.sendButton.disabled = this.sending || text.trim() === '';
  }

  // Milliseconds until this page may send another line (0: now).
  waitMs() {
    const now = performance.now();
    this.sentAt = this.sentAt.filter((at) => now - at < MINUTE_MS);
    return this.sentAt.length < CHAT_PER_MINUTE ? 0 : MINUTE_MS - (now - this.sentAt[0]);
  }

  async send() {
    const text = this.input.value.trim();
    if (!text || this.sending) return;
    this.error.textContent = '';
    const wait = this.waitMs();
    if (wait > 0) {
      this.error.textContent = floodText(Math.ceil(wait / 1000));
      return;
    }
    this.sending = true;
    this.onInput();
    // Lines only ever add up, so a room that shows no more lines of mine
    // after the 200 than before it did not keep the line.
    const mineBefore = this.lines.filter((line) => this.isMine(line)).length;
    try {
      await api('POST', this.path(), { form: { room: 'player', text }, token: this.me.token || undefined });
      this.input.value = '';
      // Not knowing is no refusal: the next poll shows the line or not.
      const lines = await api('GET', this.path(), { token: this.me.token || undefined }).catch(() => null);
      if (Array.isArray(lines)) {
        this.show(lines);
        if (this.lines.filter((line) => this.isMine(line)).length > mineBefore) {
          this.sentAt.push(performance.now());
        } else {
          // Dropped as a flood (another tab or device of this person
          // wrote too): the line goes back in the box.
          this.sentAt = Array(CHAT_PER_MINUTE).fill(performance.now());
          this.input.value = text;
          this.error.textContent = `Not sent: at most ${CHAT_PER_MINUTE} messages a minute. Wait a minute, then send it again.`;
        }
      }
    } catch (error) {
      this.error.textContent = refusalText(error);
    } finally {
      this.sending = false;
      this.onInput();
      this.input.focus();
    }
    this.poll();
  }
}

function floodText(seconds) {
  return `At most ${CHAT_PER_MINUTE} messages a minute: wait ${seconds} s before the next one.`;
}

// The server's refusal, in a sentence: its own words (`{"error": "..."}`,
// lichess's shape), with the wait for a 429 when it gave one.
function refusalText(error) {
  if (error.status === 0) return 'Cannot reach the server: the message was not sent.';
  const text = String(error.message || 'The server refused the message.');
  const sentence = `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;
  if (error.status === 429 && error.retryAfter !== null) return `${sentence} (${error.retryAfter} s)`;
  return sentence;
}
