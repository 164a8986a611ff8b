// When a clock counts as low, scaled to the time control (docs/API.md, "Web
// client"): below a tenth of the initial time, but never under 10 seconds
// (a 3-minute game warns at 18 s, a 30-minute one at 3 min, a 1-minute one
// at 10 s), and never more than half the initial time (so a 15-second game
// does not start out "low").

const MIN_LOW_MS = 10_000;

export function lowTimeThresholdMs(initialMs) {
  if (!Number.isFinite(initialMs) || initialMs <= 0) return MIN_LOW_MS;
  return Math.min(Math.max(MIN_LOW_MS, initialMs / 10), initialMs / 2);
}
