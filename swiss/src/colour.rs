//! Colour allocation for a pair (C.04.3, "Colour allocation rules", E.1 to
//! E.5 in the 2017 text, 5.2 in the 2025/2026 one; the rules are the same).

use crate::history::{PlayerHistory, Preference, Strength};
use crate::model::Colour;

/// What the allocation needs to know of one player.
pub(crate) struct Side<'a> {
    pub history: &'a PlayerHistory,
    pub preference: Option<Preference>,
}

/// The colour of the higher-ranked player `hi` against `lo`.
///
/// 1. Grant both preferences when they differ (or one has none).
/// 2. Else grant the stronger preference; between two absolute ones (only
///    possible for topscorers in the last round), the wider colour
///    difference wins.
/// 3. Else alternate from the latest round in which the two had different
///    colours (played games only, most recent first).
/// 4. Else grant the higher-ranked player's preference.
/// 5. With no preference at all: the higher-ranked player gets the initial
///    colour if their pairing number is odd, the other colour if even.
pub(crate) fn higher_ranked_colour(hi: &Side<'_>, lo: &Side<'_>, initial: Colour) -> Colour {
    match (hi.preference, lo.preference) {
        (None, None) => {
            if hi.history.id.0 % 2 == 1 {
                initial
            } else {
                initial.opposite()
            }
        }
        (Some(p), None) => p.colour,
        (None, Some(q)) => q.colour.opposite(),
        (Some(p), Some(q)) => {
            if p.colour != q.colour {
                return p.colour;
            }
            if p.strength != q.strength {
                return if p.strength > q.strength {
                    p.colour
                } else {
                    q.colour.opposite()
                };
            }
            if p.strength == Strength::Absolute {
                let (dh, dl) = (
                    hi.history.colour_difference().abs(),
                    lo.history.colour_difference().abs(),
                );
                if dh != dl {
                    return if dh > dl {
                        p.colour
                    } else {
                        q.colour.opposite()
                    };
                }
            }
            let (a, b) = (&hi.history.colours, &lo.history.colours);
            for (ca, cb) in a.iter().rev().zip(b.iter().rev()) {
                if ca != cb {
                    return ca.opposite();
                }
            }
            p.colour
        }
    }
}
