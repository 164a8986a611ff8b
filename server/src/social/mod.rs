//! The community's rules (issue 37), beside `identity/`: who may challenge
//! whom, what a report and a moderator's action are, and the chat's rules
//! ([`chat`]: rooms, cleaning, the word filter, the flood gate). What it
//! keeps is in `store/social.rs`; its HTTP surface is `http/api/social.rs`
//! (and lichess's `/api/rel/…` shapes there).
//!
//! The rules do no I/O: the edge reads the facts (a relation, a
//! standing) from the store and asks them what follows. [`roles`] is the
//! command line's `admin grant`, which has no edge.

pub mod chat;
pub mod roles;

pub use roles::set_moderator;

/// Who may challenge a player (their setting, lichess's "let others
/// challenge me").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChallengePolicy {
    Everyone,
    /// Only the people the player follows.
    Following,
    Nobody,
}

impl ChallengePolicy {
    pub const ALL: [ChallengePolicy; 3] = [
        ChallengePolicy::Everyone,
        ChallengePolicy::Following,
        ChallengePolicy::Nobody,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ChallengePolicy::Everyone => "everyone",
            ChallengePolicy::Following => "following",
            ChallengePolicy::Nobody => "nobody",
        }
    }

    pub fn parse(text: &str) -> Option<ChallengePolicy> {
        ChallengePolicy::ALL
            .into_iter()
            .find(|policy| policy.as_str() == text)
    }
}

/// Why a challenge may not be sent: lichess's reasons (its
/// `ChallengeDenied`), with its sentences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denied {
    /// One of the two blocks the other.
    Blocked,
    /// The person accepts no challenges.
    NoChallenges,
    /// The person accepts challenges only from people they follow.
    FriendsOnly,
    /// The account is closed.
    Closed,
}

impl Denied {
    /// lichess's words, with the person's name.
    pub fn message(self, name: &str) -> String {
        match self {
            Denied::Blocked => format!("You cannot challenge {name}."),
            Denied::NoChallenges => format!("{name} does not accept challenges."),
            Denied::FriendsOnly => format!("{name} only accepts challenges from friends."),
            Denied::Closed => format!("{name}'s account is closed."),
        }
    }
}

/// What the edge read before a challenge to someone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChallengeFacts {
    /// Their setting.
    pub policy: ChallengePolicy,
    /// Whether they follow the challenger.
    pub they_follow_me: bool,
    /// Whether either blocks the other.
    pub blocked: bool,
    /// Whether their account is closed.
    pub closed: bool,
}

/// Whether a challenge may be sent. A block wins over every setting, so a
/// blocked person learns only that they cannot challenge.
pub fn may_challenge(facts: ChallengeFacts) -> Result<(), Denied> {
    if facts.closed {
        return Err(Denied::Closed);
    }
    if facts.blocked {
        return Err(Denied::Blocked);
    }
    match facts.policy {
        ChallengePolicy::Everyone => Ok(()),
        ChallengePolicy::Following if facts.they_follow_me => Ok(()),
        ChallengePolicy::Following => Err(Denied::FriendsOnly),
        ChallengePolicy::Nobody => Err(Denied::NoChallenges),
    }
}

/// Why a player is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportReason {
    /// Computer assistance.
    Cheat,
    /// Insults, harassment in chat.
    Abuse,
    /// Losing on purpose to lower one's rating.
    Sandbag,
    Other,
}

impl ReportReason {
    pub fn as_str(self) -> &'static str {
        match self {
            ReportReason::Cheat => "cheat",
            ReportReason::Abuse => "abuse",
            ReportReason::Sandbag => "sandbag",
            ReportReason::Other => "other",
        }
    }

    /// The reason's key (`sandbagging` and `insult` are read too).
    pub fn parse(text: &str) -> Option<ReportReason> {
        match text {
            "cheat" => Some(ReportReason::Cheat),
            "abuse" | "insult" => Some(ReportReason::Abuse),
            "sandbag" | "sandbagging" => Some(ReportReason::Sandbag),
            "other" => Some(ReportReason::Other),
            _ => None,
        }
    }
}

/// The longest report text, in characters.
pub const REPORT_CHARS: usize = 2000;
/// Reports one person may file in a day (a flood of reports buries the
/// queue as surely as a flood of challenges buries a lobby).
pub const REPORTS_PER_DAY: i64 = 20;
/// The longest chat timeout a moderator may give, in minutes (a week).
pub const MAX_TIMEOUT_MINUTES: i64 = 7 * 24 * 60;

/// What a moderator may do to a player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModAction {
    /// The person is told `text` (a notice on their next page load and
    /// their event stream).
    Warn { text: String },
    /// Out of every chat for `minutes`.
    Timeout { minutes: i64 },
    /// Marked as a cheater: their games count for no rating; pools and
    /// tournaments leave them out.
    MarkCheater,
    /// The mark taken back.
    UnmarkCheater,
    /// The account closed: sessions and tokens revoked, the name shown as
    /// closed, games kept.
    Close,
    /// The report was looked at and nothing is done.
    Dismiss,
}

impl ModAction {
    /// The audit log's word for it.
    pub fn key(&self) -> &'static str {
        match self {
            ModAction::Warn { .. } => "warn",
            ModAction::Timeout { .. } => "timeout",
            ModAction::MarkCheater => "cheater",
            ModAction::UnmarkCheater => "uncheater",
            ModAction::Close => "close",
            ModAction::Dismiss => "dismiss",
        }
    }

    /// Reads an action from its key and its argument (`text` for a
    /// warning, `minutes` for a timeout); the error says what is wrong.
    pub fn parse(key: &str, text: Option<&str>, minutes: Option<f64>) -> Result<ModAction, String> {
        match key {
            "warn" => {
                let text = text.map(str::trim).unwrap_or_default();
                if text.is_empty() || text.chars().count() > REPORT_CHARS {
                    return Err(format!(
                        "a warning needs a text of 1 to {REPORT_CHARS} characters"
                    ));
                }
                Ok(ModAction::Warn {
                    text: text.to_string(),
                })
            }
            "timeout" => match minutes {
                Some(m) if m.fract() == 0.0 && (1.0..=MAX_TIMEOUT_MINUTES as f64).contains(&m) => {
                    Ok(ModAction::Timeout { minutes: m as i64 })
                }
                _ => Err(format!(
                    "a timeout needs minutes, a whole number from 1 to {MAX_TIMEOUT_MINUTES}"
                )),
            },
            "cheater" => Ok(ModAction::MarkCheater),
            "uncheater" => Ok(ModAction::UnmarkCheater),
            "close" => Ok(ModAction::Close),
            "dismiss" => Ok(ModAction::Dismiss),
            other => Err(format!(
                "unknown action {other:?}: warn, timeout, cheater, uncheater, close or dismiss"
            )),
        }
    }

    /// What the audit log says besides the action's key.
    pub fn details(&self) -> String {
        match self {
            ModAction::Warn { text } => text.clone(),
            ModAction::Timeout { minutes } => format!("{minutes} minutes"),
            _ => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(policy: ChallengePolicy) -> ChallengeFacts {
        ChallengeFacts {
            policy,
            they_follow_me: false,
            blocked: false,
            closed: false,
        }
    }

    #[test]
    fn a_block_wins_over_every_setting() {
        for policy in ChallengePolicy::ALL {
            let blocked = ChallengeFacts {
                blocked: true,
                they_follow_me: true,
                ..facts(policy)
            };
            assert_eq!(may_challenge(blocked), Err(Denied::Blocked));
        }
    }

    #[test]
    fn the_setting_decides_between_strangers_and_friends() {
        assert_eq!(may_challenge(facts(ChallengePolicy::Everyone)), Ok(()));
        assert_eq!(
            may_challenge(facts(ChallengePolicy::Following)),
            Err(Denied::FriendsOnly)
        );
        let friend = ChallengeFacts {
            they_follow_me: true,
            ..facts(ChallengePolicy::Following)
        };
        assert_eq!(may_challenge(friend), Ok(()));
        let friend_of_nobody = ChallengeFacts {
            they_follow_me: true,
            ..facts(ChallengePolicy::Nobody)
        };
        assert_eq!(may_challenge(friend_of_nobody), Err(Denied::NoChallenges));
    }

    #[test]
    fn actions_parse_with_their_arguments() {
        assert_eq!(
            ModAction::parse("timeout", None, Some(15.0)),
            Ok(ModAction::Timeout { minutes: 15 })
        );
        assert!(ModAction::parse("timeout", None, Some(0.5)).is_err());
        assert!(ModAction::parse("timeout", None, None).is_err());
        assert!(ModAction::parse("warn", Some("   "), None).is_err());
        assert_eq!(
            ModAction::parse("warn", Some(" be kind "), None).map(|a| a.details()),
            Ok("be kind".to_string())
        );
        assert!(ModAction::parse("ban", None, None).is_err());
        assert_eq!(
            ReportReason::parse("sandbagging"),
            Some(ReportReason::Sandbag)
        );
        assert_eq!(ReportReason::parse("spam"), None);
    }
}
