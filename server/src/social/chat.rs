//! A game's chat (issue 37): its two rooms, what a line may hold, the
//! operator's word filter and the flood gate.
//!
//! **Rooms**, as lichess has them: the players' room (`player`), read and
//! written by the two players (and a bot's API client), and the
//! spectators' room (`spectator`), for everyone watching. A line is
//! stored and pushed to the room's readers (the game's WebSocket, the
//! lichess board stream) by the edge; here are only the rules.
//!
//! **Cleaning.** Invisible characters that change how text around them
//! reads are removed before anything else: the bidirectional controls
//! (a right-to-left override makes "gg" of "gg" reversed, or hides a link's
//! real end) and the zero-width characters (they split a filtered word so
//! the filter misses it, or make two names look alike). Other control
//! characters (line breaks, tabs) become spaces.
//!
//! **The word filter** (`--chat-filter FILE`, one word a line, `#`
//! comments): a listed word, whole and in any case, is replaced by as many
//! asterisks as it has letters. Replacing rather than refusing keeps a
//! conversation going and tells the writer nothing to work around.
//!
//! **The flood gate**: per person, at most [`PER_ROOM_PER_MINUTE`] lines a
//! sliding minute in one game's room (lila's number) and
//! [`PER_MINUTE`] in all chats together, so opening more games buys no
//! more lines.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;
use uuid::Uuid;

/// The longest chat line, in characters.
pub const CHAT_CHARS: usize = 140;
/// Lines a person may write in one game's room a minute.
pub const PER_ROOM_PER_MINUTE: usize = 10;
/// Lines a person may write in all chats together a minute.
pub const PER_MINUTE: usize = 20;

/// A game's chat room.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Room {
    Player,
    Spectator,
}

impl Room {
    pub fn as_str(self) -> &'static str {
        match self {
            Room::Player => "player",
            Room::Spectator => "spectator",
        }
    }

    pub fn parse(text: &str) -> Option<Room> {
        match text {
            "player" => Some(Room::Player),
            "spectator" => Some(Room::Spectator),
            _ => None,
        }
    }
}

/// Whether `c` is a bidirectional control or a zero-width character.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}'                  // soft hyphen
        | '\u{061C}'                // Arabic letter mark
        | '\u{180E}'                // Mongolian vowel separator
        | '\u{200B}'..='\u{200F}'   // zero-width space, joiners, LRM, RLM
        | '\u{202A}'..='\u{202E}'   // embeddings and overrides
        | '\u{2060}'..='\u{2064}'   // word joiner, invisible operators
        | '\u{2066}'..='\u{2069}'   // isolates
        | '\u{FEFF}'                // zero-width no-break space
    )
}

/// A line as it may be shown: invisible characters removed, controls made
/// spaces, trimmed.
pub fn clean(text: &str) -> String {
    let visible: String = text
        .chars()
        .filter(|c| !is_invisible(*c))
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    visible.trim().to_string()
}

/// The operator's list of words kept out of chat.
#[derive(Debug, Default)]
pub struct WordFilter {
    /// Lower-case words.
    words: HashSet<String>,
}

impl WordFilter {
    /// Reads a file of words, one a line; blank lines and lines starting
    /// with `#` are skipped.
    pub fn load(path: &Path) -> std::io::Result<WordFilter> {
        let text = std::fs::read_to_string(path)?;
        Ok(WordFilter::of_lines(&text))
    }

    pub fn of_lines(text: &str) -> WordFilter {
        WordFilter {
            words: text
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty() && !line.starts_with('#'))
                .map(str::to_lowercase)
                .collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// `text` with each listed word (a whole run of letters and digits)
    /// replaced by asterisks.
    pub fn apply(&self, text: &str) -> String {
        if self.words.is_empty() {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut String| {
            if self.words.contains(&word.to_lowercase()) {
                out.extend(std::iter::repeat_n('*', word.chars().count()));
            } else {
                out.push_str(word);
            }
            word.clear();
        };
        for c in text.chars() {
            if c.is_alphanumeric() {
                word.push(c);
            } else {
                flush(&mut word, &mut out);
                out.push(c);
            }
        }
        flush(&mut word, &mut out);
        out
    }
}

/// Why a line is not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineRefused {
    /// Empty (after cleaning) or longer than [`CHAT_CHARS`].
    Length,
}

impl LineRefused {
    pub fn message(&self) -> String {
        match self {
            LineRefused::Length => format!("a chat line has 1 to {CHAT_CHARS} characters"),
        }
    }
}

/// When each person wrote their recent lines: per room, and in all.
#[derive(Default)]
struct Posts {
    rooms: HashMap<(String, Uuid, Room), VecDeque<Instant>>,
    people: HashMap<String, VecDeque<Instant>>,
}

/// The chat's rules for this node: the word filter and the flood gate.
#[derive(Default)]
pub struct ChatRules {
    filter: WordFilter,
    posts: Mutex<Posts>,
}

impl ChatRules {
    pub fn new(filter: WordFilter) -> ChatRules {
        ChatRules {
            filter,
            posts: Mutex::default(),
        }
    }

    /// The line as it will be stored and shown: cleaned, checked, filtered.
    pub fn prepare(&self, raw: &str) -> Result<String, LineRefused> {
        let line = clean(raw);
        if line.is_empty() || line.chars().count() > CHAT_CHARS {
            return Err(LineRefused::Length);
        }
        Ok(self.filter.apply(&line))
    }

    /// Whether `person` may write another line in `game`'s `room` now;
    /// if so, it is counted.
    pub fn admit(&self, person: &str, game: Uuid, room: Room) -> bool {
        self.admit_at(person, game, room, Instant::now())
    }

    fn admit_at(&self, person: &str, game: Uuid, room: Room, now: Instant) -> bool {
        let minute = Duration::from_secs(60);
        let recent = |times: &mut VecDeque<Instant>| {
            while times
                .front()
                .is_some_and(|t| now.duration_since(*t) >= minute)
            {
                times.pop_front();
            }
            times.len()
        };
        // Every operation is a few map updates: a poisoned lock still
        // holds valid counts.
        let mut posts = self.posts.lock().unwrap_or_else(PoisonError::into_inner);
        let Posts { rooms, people } = &mut *posts;
        let fresh = |times: &VecDeque<Instant>| {
            times
                .back()
                .is_some_and(|t| now.duration_since(*t) < minute)
        };
        if rooms.len() > 10_000 {
            rooms.retain(|_, times| fresh(times));
            people.retain(|_, times| fresh(times));
        }
        let in_room = rooms.entry((person.to_string(), game, room)).or_default();
        let in_all = people.entry(person.to_string()).or_default();
        if recent(in_room) >= PER_ROOM_PER_MINUTE || recent(in_all) >= PER_MINUTE {
            return false;
        }
        in_room.push_back(now);
        in_all.push_back(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_go_and_controls_become_spaces() {
        assert_eq!(clean("g\u{200B}g\u{202E}wp\u{2066}"), "ggwp");
        assert_eq!(clean("\u{FEFF} hi\nthere\t"), "hi there");
        assert_eq!(clean("\u{200D}\u{200C}"), "");
        assert_eq!(clean("échecs ♞"), "échecs ♞");
    }

    #[test]
    fn the_filter_stars_whole_words_in_any_case() {
        let filter = WordFilter::of_lines("# a comment\n\nbadword\nRude\n");
        assert_eq!(filter.len(), 2);
        assert_eq!(
            filter.apply("a BadWord, rude! badwords rudeness"),
            "a *******, ****! badwords rudeness"
        );
        assert_eq!(WordFilter::default().apply("badword"), "badword");
    }

    #[test]
    fn a_zero_width_space_does_not_hide_a_filtered_word() {
        let rules = ChatRules::new(WordFilter::of_lines("badword"));
        assert_eq!(rules.prepare("bad\u{200B}word").as_deref(), Ok("*******"));
        assert_eq!(rules.prepare(" \u{200B} "), Err(LineRefused::Length));
        assert_eq!(rules.prepare(&"x".repeat(141)), Err(LineRefused::Length));
    }

    #[test]
    fn the_gate_counts_per_room_and_in_all() {
        let rules = ChatRules::default();
        let start = Instant::now();
        let games: Vec<Uuid> = (0..3).map(|_| Uuid::new_v4()).collect();
        for _ in 0..PER_ROOM_PER_MINUTE {
            assert!(rules.admit_at("alice", games[0], Room::Player, start));
        }
        assert!(!rules.admit_at("alice", games[0], Room::Player, start));
        assert!(rules.admit_at("bob", games[0], Room::Player, start));
        // Another game's room takes alice up to her overall limit.
        for _ in PER_ROOM_PER_MINUTE..PER_MINUTE {
            assert!(rules.admit_at("alice", games[1], Room::Player, start));
        }
        assert!(!rules.admit_at("alice", games[2], Room::Spectator, start));
        let later = start + Duration::from_secs(61);
        assert!(rules.admit_at("alice", games[0], Room::Player, later));
    }
}
