// The chat of a game page (issues 24 and 37), in the two rooms lichess
// has: the players' room (`player`), shared by the two players (and a
// bot's API client, which posts through `/api/bot/game/{id}/chat`), and
// the spectators' room (`spectator`) for everyone watching.
//
// Lines ride the game's own WebSocket (socket.js): the server sends the
// room's lines so far after the first state (`chat_history`, only when
// there are some), then each new line (`chat`); a line goes out as `{"type": "chat", "text"}` and
// comes back like everyone's. Nothing is polled. The server knows who
// writes from the session cookie, or from the seat of a named player, so:
// - the players' box shows only to a named player facing another named
//   player (the other side could not read it otherwise);
// - the spectators' box shows to every spectator, and lets only a
//   logged-in one write.
// The server cleans lines (invisible characters, the operator's word
// filter), leaves out the lines of people the reader blocks, and refuses
// a line with an `error` (timed out, blocked by the player facing you, a
// flood beyond 10 lines a minute): the page says why and keeps the line
// in the box. Lines are text nodes, never markup (dom.js).

import { h, clear } from './dom.js';
import { opposite } from './format.js';
import { getChatMuted, saveChatMuted } from './storage.js';
import { t } from './i18n.js';

// The server's limit on a line, in characters (Unicode scalar values, as
// Rust counts them; a JavaScript string's length counts UTF-16 units).
export const CHAT_CHARS = 140;

const chars = (text) => [...text].length;

// The person a players'-room line may come from on this page: `me` is
// `{name, token}` (token null for the session cookie), or null for nobody
// known. Returns the opponent's name when the page should show the
// players' room, else null.
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
  // `room`: 'player' or 'spectator'; `me`: who this page is (or null);
  // `opponent`: the other player's name in the players' room; `send(text)`
  // puts a line on the socket and says whether it could; `canWrite`: the
  // server will know the writer.
  constructor({ room, me, opponent = null, send, canWrite }) {
    this.room = room;
    this.me = me;
    this.opponent = opponent;
    this.sendLine = send;
    this.canWrite = canWrite;
    this.lines = [];
    // The text of a line sent and not yet echoed or refused.
    this.pending = null;
    this.muted = opponent ? getChatMuted(opponent) : false;

    const label = room === 'player' ? t('Chat with {name}', { name: opponent }) : t('Spectators’ chat');
    this.list = h('ol', { class: 'chat-lines', role: 'log', 'aria-label': label });
    this.empty = h('p', { class: 'chat-empty muted' }, t('No messages yet.'));
    this.mutedNote = h('p', { class: 'chat-muted-note muted', hidden: true });
    this.muteButton = opponent
      ? h('button', { type: 'button', class: 'chat-mute', 'aria-pressed': 'false' }, `Mute ${opponent}`)
      : null;
    if (this.muteButton) this.muteButton.addEventListener('click', () => this.setMuted(!this.muted));
    this.input = h('input', {
      type: 'text', id: 'chat-input', class: 'chat-input', autocomplete: 'off', enterkeyhint: 'send',
      'aria-describedby': 'chat-counter',
    });
    this.counter = h('span', { class: 'chat-counter', id: 'chat-counter' });
    this.sendButton = h('button', { type: 'submit', class: 'chat-send' }, t('Send'));
    this.error = h('p', { class: 'form-error chat-error', role: 'alert' });
    const form = h('form', { class: 'chat-form', novalidate: true, hidden: !canWrite },
      h('label', { for: 'chat-input', class: 'visually-hidden' }, room === 'player' ? `Message to ${opponent}` : t('Message to the spectators')),
      h('div', { class: 'chat-row' }, this.input, this.sendButton),
      this.counter);
    this.input.addEventListener('input', () => this.onInput());
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.send();
    });
    const title = room === 'player' ? t('Chat') : t('Spectators’ chat');
    this.el = h('section', { class: 'chat', 'aria-labelledby': 'chat-title', dataset: { room } },
      h('div', { class: 'chat-head' }, h('h2', { id: 'chat-title' }, title), this.muteButton),
      h('div', { class: 'chat-box' }, this.list, this.empty),
      this.mutedNote,
      form,
      canWrite ? null : h('p', { class: 'chat-login muted' }, h('a', { href: '/login' }, t('Log in')), t(' to chat.')),
      this.error);
    this.onInput();
    this.renderMute();
    this.show([]);
  }

  isMine(line) {
    return !!this.me && String(line.user).toLowerCase() === this.me.name.toLowerCase();
  }

  isOpponent(line) {
    return !!this.opponent && String(line.user).toLowerCase() === this.opponent.toLowerCase();
  }

  // The room's lines so far (`chat_history`), replacing what was shown.
  show(lines) {
    this.lines = lines.filter((line) => line && typeof line.text === 'string');
    this.render();
  }

  // One new line (`chat`).
  add(line) {
    if (!line || typeof line.text !== 'string') return;
    this.lines.push(line);
    if (this.pending !== null && this.isMine(line)) this.sent();
    this.render();
  }

  // Redrawn whole (at most 200 lines), kept scrolled to the newest unless
  // the reader scrolled up.
  render() {
    const visible = this.lines.filter((line) => !(this.muted && this.isOpponent(line)));
    const box = this.list.parentElement;
    const atEnd = !box || box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
    clear(this.list, visible.map((line) => {
      return h('li', { class: `chat-line ${this.isMine(line) ? 'mine' : 'theirs'}`, dataset: { user: String(line.user) } },
        h('span', { class: 'chat-user' }, String(line.user)), ' ',
        h('span', { class: 'chat-text' }, line.text));
    }));
    this.empty.hidden = visible.length > 0;
    const hidden = this.lines.length - visible.length;
    this.mutedNote.hidden = !this.muted;
    this.mutedNote.textContent = hidden > 0
      ? t('{name}’s messages are hidden ({count}).', { name: this.opponent, count: hidden })
      : t('{name}’s messages are hidden.', { name: this.opponent });
    if (box && atEnd) box.scrollTop = box.scrollHeight;
  }

  setMuted(muted) {
    this.muted = muted;
    saveChatMuted(this.opponent, muted);
    this.renderMute();
    this.render();
  }

  renderMute() {
    if (!this.muteButton) return;
    this.muteButton.setAttribute('aria-pressed', String(this.muted));
    this.muteButton.title = this.muted
      ? t('Show {name}’s messages again', { name: this.opponent })
      : t('Hide {name}’s messages in every game (remembered in this browser)', { name: this.opponent });
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
    this.sendButton.disabled = this.pending !== null || text.trim() === '';
  }

  send() {
    const text = this.input.value.trim();
    if (!text || this.pending !== null) return;
    this.error.textContent = '';
    if (!this.sendLine(text)) {
      this.error.textContent = t('Not connected: the message was not sent. Try again once the game is live.');
      return;
    }
    this.pending = text;
    this.onInput();
  }

  // The line came back: it is in the room.
  sent() {
    this.pending = null;
    this.input.value = '';
    this.onInput();
    this.input.focus();
  }

  // The server refused the line sent (an `error` message): said, and the
  // line stays in the box.
  refused(message) {
    this.pending = null;
    const text = String(message.message || t('The server refused the message.'));
    this.error.textContent = `Not sent: ${text.charAt(0).toLowerCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;
    this.onInput();
  }
}
