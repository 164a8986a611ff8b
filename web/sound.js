// Game sounds, synthesised with the Web Audio API (no audio files to serve):
// a short tone shape per event. Muting is remembered in localStorage.
//
// Browsers refuse to start an AudioContext before the page has had a user
// gesture, and Chromium logs a warning for every one created too early. So
// the context is created inside the first click, tap or key press on the
// page, and sounds before it are skipped. Every sound played is also
// announced as a `rookery:sound` event on window (detail: the sound's
// name), which the mute test and any future visual cue can listen to.

import { getPreference, savePreference } from './storage.js';
import { t } from './i18n.js';

const MUTED_KEY = 'muted';

// Each sound: tones of [frequency Hz, start s, duration s, wave, gain].
const SOUNDS = {
  move: [[520, 0, 0.07, 'triangle', 0.25]],
  capture: [[330, 0, 0.06, 'square', 0.12], [220, 0.05, 0.09, 'square', 0.12]],
  check: [[880, 0, 0.08, 'sawtooth', 0.1], [660, 0.09, 0.1, 'sawtooth', 0.1]],
  end: [[523, 0, 0.15, 'sine', 0.25], [659, 0.15, 0.15, 'sine', 0.25], [784, 0.3, 0.3, 'sine', 0.25]],
  lowtime: [[990, 0, 0.08, 'square', 0.08], [990, 0.16, 0.08, 'square', 0.08]],
  // A challenge arrived, or a game from a challenge started: a rising call.
  challenge: [[587, 0, 0.12, 'sine', 0.22], [784, 0.12, 0.12, 'sine', 0.22], [988, 0.24, 0.2, 'sine', 0.22]],
};

let context = null;

// Keys that are no user activation to the browser (a modifier alone, a
// lock key): a context made on one is not allowed to start, and Chromium
// warns. Issue 36: Shift as the first key pressed did that.
const NOT_A_GESTURE = new Set(['Shift', 'Control', 'Alt', 'Meta', 'AltGraph', 'CapsLock', 'NumLock', 'ScrollLock', 'Fn', 'FnLock', 'Hyper', 'Super', 'Symbol', 'SymbolLock', 'OS', 'Dead', 'Unidentified']);

// Within a real user gesture: make the context, or wake it if the browser
// suspended it (a tab in the background). A key that does not activate the
// page (Shift alone), or an event the browser does not count as a gesture
// now, leaves it alone.
function unlock(event) {
  if (event.type === 'keydown' && (NOT_A_GESTURE.has(event.key) || event.repeat)) return;
  if (navigator.userActivation && !navigator.userActivation.isActive) return;
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return;
  if (!context) context = new Context();
  if (context.state === 'suspended') context.resume().catch(() => {});
}
// A touch activates the page on its pointerup, a mouse on pointerdown.
for (const type of ['pointerdown', 'pointerup', 'click', 'keydown']) window.addEventListener(type, unlock, { capture: true });

export function isMuted() {
  return getPreference(MUTED_KEY) === true;
}

export function setMuted(muted) {
  savePreference(MUTED_KEY, !!muted);
}

export function playSound(name) {
  const tones = SOUNDS[name];
  if (!tones || isMuted()) return;
  window.dispatchEvent(new CustomEvent('rookery:sound', { detail: name }));
  // Before the page's first gesture there is no context: no sound.
  const ctx = context;
  if (!ctx) return;
  const now = ctx.currentTime;
  for (const [frequency, start, duration, wave, gain] of tones) {
    const oscillator = ctx.createOscillator();
    const envelope = ctx.createGain();
    oscillator.type = wave;
    oscillator.frequency.value = frequency;
    // A quick attack and an exponential fade: no click at either end.
    envelope.gain.setValueAtTime(0.0001, now + start);
    envelope.gain.exponentialRampToValueAtTime(gain, now + start + 0.01);
    envelope.gain.exponentialRampToValueAtTime(0.0001, now + start + duration);
    oscillator.connect(envelope).connect(ctx.destination);
    oscillator.start(now + start);
    oscillator.stop(now + start + duration + 0.02);
  }
}

// Which sound a new state deserves, from the previous one: the end of the
// game, else check, else a capture, else a plain move; null when no move
// was added (a presence change, a draw offer, the first state of a page).
export function soundFor(previous, game, capture) {
  if (!previous) return null;
  if (game.status === 'finished' && previous.status !== 'finished') return 'end';
  if (game.moves.length <= previous.moves.length) return null;
  if (game.check) return 'check';
  return capture ? 'capture' : 'move';
}

// The mute toggle for the game page: a button whose pressed state is
// "sound on".
export function muteButton(h) {
  const button = h('button', { type: 'button', class: 'mute', 'aria-label': t('Sound') });
  const draw = () => {
    const muted = isMuted();
    button.setAttribute('aria-pressed', String(!muted));
    button.textContent = muted ? t('Sound off') : t('Sound on');
  };
  button.addEventListener('click', () => {
    setMuted(!isMuted());
    draw();
  });
  draw();
  return button;
}
