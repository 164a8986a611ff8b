//! Quoting untrusted input back in error messages.

/// How many characters of a user's input an error message quotes: enough
/// for any FEN's piece placement or any move, never a screenful.
pub const EXCERPT_CHARS: usize = 80;

/// `text` cut to [`EXCERPT_CHARS`] characters, so a hostile input cannot
/// make error messages (and the logs that carry them) arbitrarily large.
pub fn excerpt(text: &str) -> String {
    text.chars().take(EXCERPT_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_by_characters_not_bytes() {
        assert_eq!(excerpt("e2e4"), "e2e4");
        let long = "é".repeat(EXCERPT_CHARS + 10);
        assert_eq!(excerpt(&long).chars().count(), EXCERPT_CHARS);
    }
}
