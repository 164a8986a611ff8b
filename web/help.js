// The help page (/help): the rules Rookery applies, in plain words, with the
// numbers the server uses (docs/API.md is the precise statement of each).

import { h, clear } from './dom.js';
import { t } from './i18n.js';

const section = (id, title, ...paragraphs) => h('section', { class: 'card help-section', id, 'aria-labelledby': `${id}-title` },
  h('h2', { id: `${id}-title` }, title),
  paragraphs.map((text) => (Array.isArray(text) ? h('ul', null, text.map((item) => h('li', null, item))) : h('p', null, text))));

export async function helpPage(root) {
  document.title = t('Help and rules · Rookery');
  const topics = [
    ['first-move', t('The first move')],
    ['clocks', t('Clocks')],
    ['rated', t('Rated and casual games')],
    ['ratings', t('Ratings')],
    ['arenas', t('Arena tournaments and berserk')],
    ['swiss', t('Swiss tournaments')],
    ['fair-play', t('Fair play')],
    ['account', t('Your account')],
  ];
  clear(root, h('div', { class: 'help-page' },
    h('section', { class: 'card' },
      h('h1', null, t('Help and rules')),
      h('p', null, t('The rules of chess are FIDE’s. These are the rules Rookery adds around them: clocks, ratings, tournaments and fair play.')),
      h('nav', { 'aria-label': t('Help topics') }, h('ul', { class: 'help-topics' },
        topics.map(([id, title]) => h('li', null, h('a', { href: `#${id}` }, title)))))),
    section('first-move', 'The first move',
      t('In a game with a clock, neither clock runs until that side has made its first move, and the first move is free: no time is taken and no increment is added.'),
      t('A side that does not make its first move within 30 seconds of its turn (a minute for clocks of 15 minutes or more) aborts the game. An aborted game has no result and counts nowhere, for nobody.'),
      t('Until both sides have moved, either player may abort the game.')),
    section('clocks', 'Clocks',
      t('A clock of “5+3” gives each side 5 minutes, plus 3 seconds after each of its moves. The server keeps the time: what your screen shows is a copy.'),
      t('A side whose time runs out loses, unless the opponent has no way to checkmate at all: then the game is a draw.'),
      t('Games without a clock have no time limit. A game nobody plays in for a long time is ended by the server.')),
    section('rated', 'Rated and casual games',
      t('A rated game counts: on the scoreboard, and for both players’ ratings when both have an account. A casual game counts for nobody’s rating.'),
      t('You choose when you make the game: a game with a friend is casual unless you choose “Rated”; a challenge and quick pairing let you choose too.'),
      [
        t('A game can only be rated when it starts from the standard position (or one of Chess960’s 960 starts) and has no clock or one of at least a minute. A custom position or a shorter clock makes it casual.'),
        t('Against the computer, taking a move back makes the game casual at once.'),
        t('Games against the computer and games with an anonymous player move no rating.'),
      ]),
    section('ratings', 'Ratings',
      t('Ratings are Glicko-2: everyone starts at 1500 with a wide uncertainty, shown as “1500?” while the rating is provisional (about the first ten rated games).'),
      t('A win against a stronger player gains more than against a weaker one; a draw moves the two ratings towards each other. Before a rated challenge, the challenge shows what a win, a draw and a loss would change.'),
      t('Each game is rated on its own, the moment it ends.')),
    section('arenas', 'Arena tournaments and berserk',
      t('An arena runs for a set time: you are paired again as soon as your game ends, with someone close in the standings.'),
      [
        t('A win scores 2, a draw 1, a loss 0.'),
        t('After two wins in a row you are on fire: every game scores double until a game is not won.'),
        t('A draw of fewer than 10 moves scores nothing, and so does a draw right after another draw (unless it lasted 30 moves or you are on fire).'),
        t('Berserk: before your first move, you may halve your own time and give up the increment. A berserk win of at least 7 moves scores one point more.'),
        t('Ties are broken by performance rating.'),
      ]),
    section('swiss', 'Swiss tournaments',
      t('A Swiss is played by a team’s members in rounds: every round pairs players with the same score, by the FIDE Dutch system, and nobody meets the same opponent twice.'),
      t('A win is 1 point, a draw ½. An odd player out gets a bye worth 1 point; a bye you ask for is worth what the tournament set (½ by default). A game you never start is lost.'),
      t('Standings go by points, then Buchholz cut 1, Buchholz, Sonneborn-Berger and wins.')),
    section('fair-play', 'Fair play',
      [
        t('No help from engines, books or other people while you play.'),
        t('Report a player or a chat message from their page; moderators look at every report.'),
        t('A player marked as a cheater keeps playing, but their games move nobody’s rating, and pools and tournaments leave them out.'),
        t('Block someone to stop their challenges and messages; set who may challenge you in your account.'),
      ]),
    section('account', 'Your account',
      t('Playing needs no account. An account keeps your name, rating and games on every device.'),
      t('Add an e-mail address in your account to get a forgotten password back: “Forgot password?” on the log-in page mails a link that works once, for an hour. A server that sends no mail can reset your password through its operator.'))));
}
